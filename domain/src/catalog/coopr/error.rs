//! Import errors: every problem found while reading Coopr JSON, each with the file
//! (for folder imports) and the path of the entity and field.

use std::fmt;

use crate::names::NameError;

/// One thing wrong with the input, at `path` (`services.hbase-master.dependencies.provides[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The file, for folder-layout imports.
    pub file: Option<String>,
    pub path: String,
    pub problem: DecodeProblem,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeProblem {
    #[error("not valid JSON: {0}")]
    InvalidJson(String),
    #[error("expected {expected}, found {found}")]
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    #[error("required field is missing")]
    Missing,
    #[error("{0}")]
    BadName(#[from] NameError),
    #[error("{0:?} is not an integer")]
    BadInteger(String),
    #[error(
        "unknown action {0:?}; expected install, configure, initialize, start, stop or remove"
    )]
    UnknownAction(String),
    /// A template parameter's declaration (the path names the parameter).
    #[error("{0}")]
    BadParameter(String),
    #[error("duplicate name {0:?}")]
    Duplicate(String),
    #[error("not in a folder named after an entity kind (providers, hardwaretypes, imagetypes, services, clustertemplates, partialtemplates)")]
    UnknownFolder,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl std::error::Error for DecodeError {}

/// Why an import was refused: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub problems: Vec<DecodeError>,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "{count} problem{} in the Coopr catalog",
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportError {}
