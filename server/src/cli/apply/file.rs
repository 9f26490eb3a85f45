//! The environment file `corral apply` reads. Parsing and checking live in
//! [`domain::environment`] (pure, and fuzzed there); this module only reads the file
//! from disk and hands its text over.

use std::path::Path;

pub use domain::environment::{ClusterSpec, EnvFile, FileError};

/// Reads and parses the file at `path`; messages start with its path.
pub fn read(path: &Path) -> Result<EnvFile, FileError> {
    let text = std::fs::read_to_string(path).map_err(|error| FileError {
        problems: vec![format!("{}: cannot read it: {error}", path.display())],
    })?;
    EnvFile::parse(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_missing_file_names_its_path() {
        let message = read(Path::new("/nonexistent/env.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("/nonexistent/env.yaml: cannot read it: "),
            "{message}"
        );
    }
}
