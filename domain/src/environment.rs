//! The environment file `corral apply` reads (CloudARK-style YAML): an `environment`
//! name and the `clusters` it holds. Every problem is reported with its line: decode
//! errors carry serde_norway's position, and checks across entries (duplicate names)
//! find the line of the entry they name.
//!
//! Only text goes in: reading the file is the caller's business, so the parser stays
//! pure (and fuzzable on its own, see `fuzz/fuzz_targets/environment_file.rs`).

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::names::{
    check_name, ClusterName, HardwareTypeName, ImageTypeName, ProviderName, ServiceName,
    TemplateName,
};

/// A parsed, checked environment file.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvFile {
    pub environment: EnvironmentName,
    pub clusters: Vec<ClusterSpec>,
}

/// One wanted cluster.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub name: ClusterName,
    pub template: TemplateName,
    pub size: ClusterSize,
    /// Services (or aliases) the cluster must run; absent: the template's defaults.
    #[serde(default)]
    pub services: Option<Vec<ServiceName>>,
    /// Merged over the template's default config.
    #[serde(default)]
    pub config: Map<String, Value>,
    /// Values of the template's parameters by name, checked by the server as
    /// `corral cluster create --param` values are.
    #[serde(default)]
    pub parameters: Map<String, Value>,
    /// The catalog provider to build on (`local`, `docker`, ...); absent: the template's.
    #[serde(default)]
    pub provider: Option<ProviderName>,
    /// The only hardware type nodes may get; absent: the template's choice.
    #[serde(default)]
    pub hardwaretype: Option<HardwareTypeName>,
    /// The only image type nodes may get; absent: the template's choice.
    #[serde(default)]
    pub imagetype: Option<ImageTypeName>,
    /// Where the entry starts in the file (1-based), for messages.
    #[serde(skip)]
    pub line: usize,
}

/// The environment's name: the same rule as entity names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentName(String);

impl EnvironmentName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EnvironmentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EnvironmentName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        check_name(&raw).map_err(serde::de::Error::custom)?;
        Ok(Self(raw))
    }
}

/// A node count of at least one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClusterSize(pub u32);

impl<'de> Deserialize<'de> for ClusterSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let size = u32::deserialize(deserializer)?;
        if size == 0 {
            return Err(serde::de::Error::custom("size must be at least 1"));
        }
        Ok(Self(size))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    environment: EnvironmentName,
    clusters: Vec<ClusterSpec>,
}

/// Why a file cannot be used; `Display` gives `FILE:LINE:COLUMN: message` lines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
pub struct FileError {
    pub problems: Vec<String>,
}

impl EnvFile {
    /// Parses `text`; `origin` (the file name) starts each message.
    pub fn parse(text: &str, origin: &str) -> Result<Self, FileError> {
        let raw: RawFile = serde_norway::from_str(text).map_err(|error| {
            let problem = match error.location() {
                Some(at) => format!(
                    "{origin}:{}:{}: {}",
                    at.line(),
                    at.column(),
                    strip_position(&error.to_string())
                ),
                None => format!("{origin}: {error}"),
            };
            FileError {
                problems: vec![problem],
            }
        })?;
        let mut clusters = raw.clusters;
        let starts = entry_lines(text);
        for (index, cluster) in clusters.iter_mut().enumerate() {
            cluster.line = starts.get(index).copied().unwrap_or(1);
        }
        let mut seen = BTreeSet::new();
        let mut problems = Vec::new();
        for cluster in &clusters {
            if !seen.insert(cluster.name.as_str()) {
                problems.push(format!(
                    "{origin}:{}: cluster {} is listed twice; names are unique in an environment",
                    cluster.line,
                    cluster.name.as_str()
                ));
            }
        }
        if !problems.is_empty() {
            return Err(FileError { problems });
        }
        Ok(Self {
            environment: raw.environment,
            clusters,
        })
    }
}

/// serde_norway ends its messages with "at line L column C"; the prefix says it already.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// The line (1-based) of each item of the top-level `clusters:` list, in order: the
/// lines of `- ` items indented under it. Flow-style lists (`clusters: [...]`) give
/// none, and their entries are then reported at line 1.
fn entry_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut inside = false;
    let mut item_indent: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if indent == 0 && !trimmed.starts_with('-') {
            inside = trimmed.starts_with("clusters:");
            item_indent = None;
            continue;
        }
        if !inside || !(trimmed.starts_with("- ") || trimmed == "-") {
            continue;
        }
        let expected = *item_indent.get_or_insert(indent);
        if indent == expected {
            lines.push(index + 1);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const GOOD: &str = "\
# shop environment
environment: demo
clusters:
  - name: shop
    template: web-stack
    size: 3
  - name: cache
    template: kv-cluster
    size: 1
    services: [base, kv]
    config:
      kv:
        port: 7070
";

    fn problems(text: &str) -> String {
        EnvFile::parse(text, "env.yaml").unwrap_err().to_string()
    }

    #[test]
    fn reads_clusters_with_their_lines() {
        let file = EnvFile::parse(GOOD, "env.yaml").unwrap();
        assert_eq!(file.environment.as_str(), "demo");
        assert_eq!(file.clusters.len(), 2);
        assert_eq!(file.clusters[0].name.as_str(), "shop");
        assert_eq!(file.clusters[0].size, ClusterSize(3));
        assert_eq!(file.clusters[0].line, 4);
        assert_eq!(file.clusters[1].line, 7);
        assert_eq!(file.clusters[1].config["kv"]["port"], 7070);
        assert_eq!(file.clusters[1].services.as_ref().unwrap().len(), 2);
    }

    #[test]
    fn unknown_fields_name_their_line() {
        let text = GOOD.replace("    size: 3", "    sise: 3");
        let message = problems(&text);
        assert!(message.starts_with("env.yaml:6:5: "), "{message}");
        assert!(message.contains("unknown field `sise`"), "{message}");
    }

    #[test]
    fn wrong_types_and_values_name_their_line() {
        let message = problems(&GOOD.replace("size: 1", "size: one"));
        assert!(message.starts_with("env.yaml:9:"), "{message}");
        // Checks of a value's meaning (not its type) point at the entry holding it.
        let message = problems(&GOOD.replace("size: 3", "size: 0"));
        assert_eq!(
            message,
            "env.yaml:4:5: clusters[0]: size must be at least 1"
        );
        let message = problems(&GOOD.replace("name: shop", "name: my shop"));
        assert!(message.starts_with("env.yaml:4:"), "{message}");
        assert!(message.contains("' '"), "{message}");
    }

    #[test]
    fn missing_keys_and_bad_yaml_are_reported() {
        let message = problems("clusters: []\n");
        assert!(message.contains("missing field `environment`"), "{message}");
        let message = problems("environment: demo\nclusters:\n  - name: [unclosed\n");
        assert!(message.starts_with("env.yaml:"), "{message}");
    }

    #[test]
    fn duplicate_names_point_at_the_second_entry() {
        let message = problems(&GOOD.replace("name: cache", "name: shop"));
        assert_eq!(
            message,
            "env.yaml:7: cluster shop is listed twice; names are unique in an environment"
        );
    }

    #[test]
    fn an_empty_environment_is_valid() {
        let file = EnvFile::parse("environment: demo\nclusters: []\n", "e").unwrap();
        assert!(file.clusters.is_empty());
    }
}
