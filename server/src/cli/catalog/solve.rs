//! `corral catalog solve` and `corral catalog plan`: a template at a size, laid out
//! by the solver (printed as the contract JSON) or planned as a create (the task DAG).
//! An unsatisfiable request prints its reasons and the nearest sizes that work.

use std::process::ExitCode;

use anyhow::Context;
use domain::catalog::Catalog;
use domain::layout::Layout;
use domain::names::{HardwareTypeName, ImageTypeName, ProviderName, TemplateName};
use domain::plan::{plan, PlanOperation, ServiceGraph, TaskDag};
use domain::solver::{solve_request, to_contract_json, SolveRequest, Unsatisfiable};
use serde_json::{json, Value};

use super::input::load_or_report;
use super::SolveArgs;

pub fn run_solve(args: &SolveArgs) -> anyhow::Result<ExitCode> {
    let Some((_, layout)) = solved(args)? else {
        return Ok(ExitCode::FAILURE);
    };
    print_json(&to_contract_json(&layout))?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_plan(args: &SolveArgs) -> anyhow::Result<ExitCode> {
    let Some((catalog, layout)) = solved(args)? else {
        return Ok(ExitCode::FAILURE);
    };
    let empty = Layout {
        template: layout.template.clone(),
        nodes: Vec::new(),
    };
    match plan(
        &empty,
        &layout,
        &PlanOperation::Create,
        &ServiceGraph::from_catalog(&catalog),
    ) {
        Ok(dag) => {
            print_json(&dag_json(&dag))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("error: cannot plan template {}: {err}", layout.template);
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The published plan shape: `{"tasks": [{"id", "node", "service", "action", "after"}]}`.
pub fn dag_json(dag: &TaskDag) -> Value {
    let tasks: Vec<Value> = dag
        .tasks()
        .iter()
        .map(|task| {
            json!({
                "id": task.id,
                "node": task.node,
                "service": task.service,
                "action": task.action.as_str(),
                "after": task.after,
            })
        })
        .collect();
    json!({ "tasks": tasks })
}

/// The catalog and the layout, or `None` after printing why there is none.
fn solved(args: &SolveArgs) -> anyhow::Result<Option<(Catalog, Layout)>> {
    let Some(input) = load_or_report(&args.path)? else {
        return Ok(None);
    };
    let catalog = input.catalog;
    let name = TemplateName::parse(args.cluster.template.as_str())
        .with_context(|| format!("--template {:?}", args.cluster.template))?;
    let template = match catalog.resolved_template(&name) {
        Ok(template) => template,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(None);
        }
    };
    let request = request(args)?;
    match solve_request(&catalog, &template, &request) {
        Ok(layout) => Ok(Some((catalog, layout))),
        Err(unsatisfiable) => {
            eprint!("{}", explain(&name, args.cluster.size, &unsatisfiable));
            Ok(None)
        }
    }
}

fn request(args: &SolveArgs) -> anyhow::Result<SolveRequest> {
    Ok(SolveRequest {
        size: args.cluster.size,
        services: args.cluster.services.clone(),
        provider: optional(&args.cluster.provider, "--provider", ProviderName::parse)?,
        hardwaretype: optional(
            &args.cluster.hardwaretype,
            "--hardwaretype",
            HardwareTypeName::parse,
        )?,
        imagetype: optional(&args.cluster.imagetype, "--imagetype", ImageTypeName::parse)?,
    })
}

fn optional<T, E: std::error::Error + Send + Sync + 'static>(
    raw: &Option<String>,
    flag: &str,
    parse: impl Fn(String) -> Result<T, E>,
) -> anyhow::Result<Option<T>> {
    raw.clone()
        .map(|value| parse(value.clone()).with_context(|| format!("{flag} {value:?}")))
        .transpose()
}

/// Several lines: what failed, each reason, the nearest sizes that work.
pub fn explain(template: &TemplateName, size: u32, unsatisfiable: &Unsatisfiable) -> String {
    let mut text = format!(
        "error: template {template} has no layout with {size} node{}:\n",
        if size == 1 { "" } else { "s" }
    );
    for reason in &unsatisfiable.reasons {
        text.push_str(&format!("  - {reason}\n"));
    }
    let nearest = unsatisfiable.nearest;
    match (nearest.below, nearest.above) {
        (Some(below), Some(above)) => {
            text.push_str(&format!("nearest sizes that work: {below} and {above}\n"));
        }
        (Some(only), None) | (None, Some(only)) => {
            text.push_str(&format!("nearest size that works: {only}\n"));
        }
        (None, None) => text.push_str("no other size works either\n"),
    }
    text
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("cannot write JSON")?;
    text.push('\n');
    super::print_out(&text)
}
