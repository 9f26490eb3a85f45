//! A line diff of two texts (an entity's JSON before and after a revision), shown
//! as added and removed lines with text markers, not colour alone.

use leptos::prelude::*;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Same(String),
    Added(String),
    Removed(String),
}

/// The longest-common-subsequence diff of `old` and `new`, line by line. Entity
/// bodies are small (tens to hundreds of lines), so the quadratic table is fine.
pub fn diff_lines(old: &str, new: &str) -> Vec<Line> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut lines = Vec::new();
    while i < old.len() && j < new.len() {
        if old[i] == new[j] {
            lines.push(Line::Same(old[i].to_owned()));
            i += 1;
            j += 1;
        } else if common[i + 1][j] >= common[i][j + 1] {
            lines.push(Line::Removed(old[i].to_owned()));
            i += 1;
        } else {
            lines.push(Line::Added(new[j].to_owned()));
            j += 1;
        }
    }
    lines.extend(
        old[i..]
            .iter()
            .map(|line| Line::Removed((*line).to_owned())),
    );
    lines.extend(new[j..].iter().map(|line| Line::Added((*line).to_owned())));
    lines
}

#[component]
pub fn DiffView(old: String, new: String) -> impl IntoView {
    let lines = diff_lines(&old, &new)
        .into_iter()
        .map(|line| match line {
            Line::Same(text) => view! { <span class="diff-same">"  " {text} "\n"</span> },
            Line::Added(text) => view! { <span class="diff-added">"+ " {text} "\n"</span> },
            Line::Removed(text) => view! { <span class="diff-removed">"- " {text} "\n"</span> },
        })
        .collect_view();
    view! { <pre class="diff" data-testid="diff">{lines}</pre> }
}

#[cfg(test)]
mod tests {
    use super::{diff_lines, Line};

    #[test]
    fn marks_added_and_removed_lines() {
        let lines = diff_lines("a\nb\nc", "a\nc\nd");
        assert_eq!(
            lines,
            vec![
                Line::Same("a".into()),
                Line::Removed("b".into()),
                Line::Same("c".into()),
                Line::Added("d".into()),
            ]
        );
    }

    #[test]
    fn a_creation_is_all_added() {
        assert_eq!(diff_lines("", "x"), vec![Line::Added("x".into())]);
    }
}
