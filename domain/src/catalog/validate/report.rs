//! The validation report: problems with a severity, a path and a message.

use std::collections::HashSet;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Refuses the import.
    Error,
    /// Shown, accepted.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One finding: `clustertemplates.web.defaults.services[2]: unknown service "kv"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    pub severity: Severity,
    pub path: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.severity, self.path, self.message)
    }
}

/// Every problem of a catalog, in catalog order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub problems: Vec<Finding>,
}

impl Report {
    pub fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.push(Severity::Error, path.into(), message.into());
    }

    pub fn warning(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.push(Severity::Warning, path.into(), message.into());
    }

    fn push(&mut self, severity: Severity, path: String, message: String) {
        self.problems.push(Finding {
            severity,
            path,
            message,
        });
    }

    /// Drops repeats, keeping first occurrences: inherited content can be reached
    /// twice (a partial included twice, a cycle seen from each member).
    pub(super) fn dedup(&mut self) {
        let mut seen = HashSet::new();
        self.problems.retain(|problem| seen.insert(problem.clone()));
    }

    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.problems
            .iter()
            .filter(|problem| problem.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.problems
            .iter()
            .filter(|problem| problem.severity == Severity::Warning)
    }

    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// Problems at `prefix` or below it (`clustertemplates.lamp` covers
    /// `clustertemplates.lamp.links[0].url` but not `clustertemplates.lamp2`).
    pub fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.problems.iter().filter(move |problem| {
            problem.path.strip_prefix(prefix).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')
            })
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in &self.problems {
            writeln!(f, "{problem}")?;
        }
        Ok(())
    }
}
