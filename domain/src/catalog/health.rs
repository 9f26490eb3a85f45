//! Health checks (Coopr's "monitor" operation): how Corral tells whether a service of
//! a live cluster works. A Corral extension of a service, kept in its extra fields so
//! that Coopr JSON round-trips it unchanged:
//!
//! ```json
//! "healthcheck": {"http": "http://%ip.self%:8080/health", "interval": 10, "timeout": 5}
//! "healthcheck": {"run": "redis-cli -p 6379 ping | grep -q PONG"}
//! "healthcheck": {"script": "corral-demo.sh", "args": "probe redis --port 16379"}
//! ```
//!
//! Every form runs *on the node* over its SSH session (an `http` URL is fetched there),
//! never from the Corral server: a catalog author must not be able to make the server
//! reach addresses of its own network. Macros expand as in the service's steps, seen
//! from the node; a check passes when its command exits 0 (an HTTP status below 400).

use std::time::Duration;

use serde_json::{Map, Value};

use super::automator::is_resource_name;
use super::service::Service;

/// The service field holding the check.
pub const FIELD: &str = "healthcheck";
/// Seconds between checks when the catalog does not say.
pub const DEFAULT_INTERVAL_SECS: u64 = 10;
/// Seconds a check may take when the catalog does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 5;
const MIN_INTERVAL_SECS: u64 = 2;
const MAX_SECS: u64 = 3600;

/// What a check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// GET this URL (macros unexpanded); up when it answers below 400.
    Http(String),
    /// Bash text (macros unexpanded, expanded shell-quoted); up when it exits 0.
    Run(String),
    /// A plugin resource of `scripts/` with its arguments (as a shell action's).
    Script { script: String, args: String },
}

/// One service's health check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    pub probe: Probe,
    pub interval: Duration,
    pub timeout: Duration,
}

impl HealthCheck {
    /// The service's check: `Ok(None)` when it declares none, an error per problem
    /// (with the path under the check) when the declaration is malformed.
    pub fn of(service: &Service) -> Result<Option<HealthCheck>, Vec<(String, String)>> {
        service
            .extra
            .get(FIELD)
            .map(|value| parse(value).map(Some))
            .unwrap_or(Ok(None))
    }
}

fn parse(value: &Value) -> Result<HealthCheck, Vec<(String, String)>> {
    let Value::Object(fields) = value else {
        return Err(vec![(
            String::new(),
            "must be an object with one of http, run or script".to_owned(),
        )]);
    };
    let mut problems = Vec::new();
    for key in fields.keys() {
        if !["http", "run", "script", "args", "interval", "timeout"].contains(&key.as_str()) {
            problems.push((
                key.clone(),
                format!(
                    "unknown field {key:?} (a health check takes http, run or script (with \
                     args), interval and timeout)"
                ),
            ));
        }
    }
    let text = |name: &str, problems: &mut Vec<(String, String)>| match fields.get(name) {
        None => None,
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        Some(_) => {
            problems.push((name.to_owned(), "must be non-empty text".to_owned()));
            None
        }
    };
    let http = text("http", &mut problems);
    let run = text("run", &mut problems);
    let script = text("script", &mut problems);
    let args = text("args", &mut problems);
    let probe = match (http, run, script) {
        (Some(url), None, None) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                problems.push((
                    "http".to_owned(),
                    format!("{url:?} is not an http:// or https:// URL"),
                ));
            }
            Some(Probe::Http(url))
        }
        (None, Some(run), None) => Some(Probe::Run(run)),
        (None, None, Some(script)) => {
            if !is_resource_name(&script) {
                problems.push((
                    "script".to_owned(),
                    format!("{script:?} is not a resource name of scripts/"),
                ));
            }
            Some(Probe::Script {
                script,
                args: args.clone().unwrap_or_default(),
            })
        }
        (None, None, None) => {
            problems.push((String::new(), "needs one of http, run or script".to_owned()));
            None
        }
        _ => {
            problems.push((
                String::new(),
                "takes only one of http, run or script".to_owned(),
            ));
            None
        }
    };
    if args.is_some() && !matches!(probe, Some(Probe::Script { .. }) | None) {
        problems.push(("args".to_owned(), "goes with script only".to_owned()));
    }
    let interval = seconds(
        fields,
        "interval",
        DEFAULT_INTERVAL_SECS,
        MIN_INTERVAL_SECS,
        &mut problems,
    );
    let timeout = seconds(fields, "timeout", DEFAULT_TIMEOUT_SECS, 1, &mut problems);
    match probe {
        Some(probe) if problems.is_empty() => Ok(HealthCheck {
            probe,
            interval,
            timeout,
        }),
        _ => Err(problems),
    }
}

/// A whole number of seconds in `[min, MAX_SECS]` (a number or its text).
fn seconds(
    fields: &Map<String, Value>,
    name: &str,
    default: u64,
    min: u64,
    problems: &mut Vec<(String, String)>,
) -> Duration {
    let value = match fields.get(name) {
        None => return Duration::from_secs(default),
        Some(Value::Number(number)) => number.as_u64(),
        Some(Value::String(text)) => text.trim().parse().ok(),
        Some(_) => None,
    };
    match value {
        Some(secs) if (min..=MAX_SECS).contains(&secs) => Duration::from_secs(secs),
        _ => {
            problems.push((
                name.to_owned(),
                format!("must be a whole number of seconds from {min} to {MAX_SECS}"),
            ));
            Duration::from_secs(default)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::names::ServiceName;

    fn check(value: Value) -> Result<Option<HealthCheck>, Vec<(String, String)>> {
        let mut service = Service::new(ServiceName::parse("kv").unwrap());
        service.extra.insert(FIELD.to_owned(), value);
        HealthCheck::of(&service)
    }

    #[test]
    fn each_form_parses_with_its_defaults() {
        let http = check(json!({"http": "http://%ip.self%:7070/health"})).unwrap();
        assert_eq!(
            http,
            Some(HealthCheck {
                probe: Probe::Http("http://%ip.self%:7070/health".into()),
                interval: Duration::from_secs(DEFAULT_INTERVAL_SECS),
                timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            })
        );
        let script = check(json!({"script": "probe.sh", "args": "redis", "interval": "30"}))
            .unwrap()
            .unwrap();
        assert_eq!(script.interval, Duration::from_secs(30));
        assert!(matches!(script.probe, Probe::Script { ref args, .. } if args == "redis"));
        let none = HealthCheck::of(&Service::new(ServiceName::parse("kv").unwrap()));
        assert_eq!(none, Ok(None));
    }

    #[test]
    fn malformed_checks_name_each_problem() {
        let problems = check(json!({"http": "ftp://x", "run": "true"})).unwrap_err();
        assert_eq!(problems[0].1, "takes only one of http, run or script");
        let problems = check(json!({"script": "../x", "interval": 1, "timout": 3})).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, ["timout", "script", "interval"], "{problems:?}");
        let problems = check(json!({"http": "gopher://x"})).unwrap_err();
        assert!(problems[0].1.contains("not an http:// or https:// URL"));
        assert!(check(json!("curl x")).is_err());
        assert!(check(json!({"run": "true", "args": "x"})).is_err());
    }
}
