//! Printing API answers: aligned tables for people, `--json` for scripts.

use clap::Args;
use serde_json::Value;

#[derive(Debug, Clone, Copy, Args)]
pub struct OutputArgs {
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

pub fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

fn cell(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// Prints `rows` (JSON objects) as a table of `columns` (heading, field).
pub fn print_table(rows: &[Value], columns: &[(&str, &str)]) {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|(_, field)| cell(&row[*field]))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(index, (heading, _))| {
            cells
                .iter()
                .map(|row| row[index].chars().count())
                .chain([heading.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: Vec<String>| {
        values
            .iter()
            .zip(&widths)
            .map(|(value, width)| format!("{value:<width$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    println!(
        "{}",
        line(
            columns
                .iter()
                .map(|(heading, _)| heading.to_uppercase())
                .collect()
        )
    );
    for row in cells {
        println!("{}", line(row));
    }
}
