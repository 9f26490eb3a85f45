//! One signed call to a hook: the headers every receiver checks, the body as the
//! hook's format wants it, the address checked again just before, no redirects, a
//! timeout, and the first KiB of the answer kept for the delivery log.

use std::time::{Duration, Instant};

use api_types::{HookEvent, HookEventBody, HookFormat};
use ring::hmac;

use super::network::HookNetwork;

/// The longest any call to a hook may take.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of an answer's body the delivery log keeps.
pub const EXCERPT_BYTES: usize = 1024;

/// `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with `secret`: the
/// `Corral-Signature` header.
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let mut context = hmac::Context::with_key(&key);
    context.update(timestamp.to_string().as_bytes());
    context.update(b".");
    context.update(body);
    let tag = context.sign();
    format!("sha256={}", hex::encode(tag.as_ref()))
}

/// What a receiver got: `body` (an event body, JSON) as `format` sends it. A Slack
/// hook gets `{"text": "..."}` saying the same in a line.
pub fn rendered(format: HookFormat, body: &str) -> String {
    match format {
        HookFormat::Json => body.to_owned(),
        HookFormat::Slack => {
            let text = match serde_json::from_str::<HookEventBody>(body) {
                Ok(event) => slack_text(&event),
                Err(_) => "Corral event".to_owned(),
            };
            serde_json::json!({ "text": text }).to_string()
        }
    }
}

fn slack_text(event: &HookEventBody) -> String {
    let cluster = event
        .cluster
        .as_ref()
        .map(|cluster| format!(" of cluster {}", cluster.name))
        .unwrap_or_default();
    let (operation, by) = match &event.job {
        Some(job) => (
            job.operation.label().to_owned(),
            job.requested_by
                .as_ref()
                .map(|user| format!(" (asked for by {user})"))
                .unwrap_or_default(),
        ),
        None => (String::new(), String::new()),
    };
    let link = event
        .links
        .job
        .as_ref()
        .map(|link| format!(" {link}"))
        .unwrap_or_default();
    match event.event {
        HookEvent::JobStarted => format!("Corral: {operation}{cluster} started{by}.{link}"),
        HookEvent::JobSucceeded => format!("Corral: {operation}{cluster} succeeded{by}.{link}"),
        HookEvent::JobFailed => {
            let step = event
                .failed_step
                .as_ref()
                .map(|step| {
                    format!(
                        " Step {} {}on node {} failed: {}",
                        step.action,
                        step.service
                            .as_ref()
                            .map(|service| format!("of {service} "))
                            .unwrap_or_default(),
                        step.node,
                        step.message
                    )
                })
                .unwrap_or_default();
            format!("Corral: {operation}{cluster} FAILED{by}.{step}{link}")
        }
        HookEvent::ApprovalNeeded => match &event.approval {
            Some(approval) => format!(
                "Corral: {}{cluster} to {} node(s){} needs approval ({}).",
                approval.operation,
                approval.size,
                approval
                    .requested_by
                    .as_ref()
                    .map(|user| format!(", asked for by {user},"))
                    .unwrap_or_default(),
                approval.rule
            ),
            None => format!("Corral: an operation{cluster} needs approval."),
        },
        HookEvent::LeaseExpiring => match &event.lease {
            Some(lease) => format!(
                "Corral: the lease{cluster} ends {} ({} warning); {}. Extend it to keep it.",
                lease.expires,
                lease.warning,
                match lease.grace_seconds {
                    Some(grace) => format!(
                        "its services are then stopped, and it is deleted {} later",
                        api_types::duration_words(
                            i64::try_from(grace)
                                .unwrap_or(i64::MAX)
                                .saturating_mul(1000)
                        )
                    ),
                    None => "it is then deleted".to_owned(),
                }
            ),
            None => format!("Corral: the lease{cluster} ends soon."),
        },
        HookEvent::HealthDown | HookEvent::HealthUp => {
            let Some(health) = &event.health else {
                return format!("Corral: {}{cluster}.", event.event);
            };
            let link = cluster_link(event);
            let what = format!(
                "{} on node {}{cluster}",
                health.service,
                node_words(&health.node)
            );
            if event.event == HookEvent::HealthDown {
                let said = health
                    .message
                    .as_ref()
                    .map(|message| format!(": {message}"))
                    .unwrap_or_default();
                format!("Corral: {what} stopped answering its health check{said}.{link}")
            } else {
                let since = health
                    .down_since
                    .as_ref()
                    .map(|since| format!(" (down since {since})"))
                    .unwrap_or_default();
                format!("Corral: {what} answers its health check again{since}.{link}")
            }
        }
        HookEvent::NodeReplaced => match &event.replacement {
            Some(replacement) => format!(
                "Corral: node {}{cluster} was replaced by node {}{by}.{link}",
                node_words(&replacement.old),
                node_words(&replacement.new)
            ),
            None => format!("Corral: a node{cluster} was replaced{by}.{link}"),
        },
        HookEvent::Test => format!(
            "Corral: a test delivery for tenant {}: this hook works.",
            event.tenant.name
        ),
    }
}

/// `1001 (web-1.example.com)`, or the number alone for a node without a hostname.
fn node_words(node: &api_types::HookNode) -> String {
    match &node.hostname {
        Some(hostname) => format!("{} ({hostname})", node.number),
        None => node.number.to_string(),
    }
}

/// The cluster's page, for events about no job.
fn cluster_link(event: &HookEventBody) -> String {
    event
        .links
        .cluster
        .as_ref()
        .map(|link| format!(" {link}"))
        .unwrap_or_default()
}

/// How a call went: the receiver's status and the start of its answer, or why there
/// was none.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub status: Option<u16>,
    pub error: Option<String>,
    pub excerpt: String,
    pub body: Vec<u8>,
    pub elapsed: Duration,
}

impl CallOutcome {
    pub fn succeeded(&self) -> bool {
        self.status
            .is_some_and(|status| (200..300).contains(&status))
    }
}

/// One call to make: where, signed with what, and what it carries.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub url: &'a str,
    pub secret: &'a str,
    /// The `Corral-Delivery` header.
    pub id: &'a str,
    /// The `Corral-Event` header.
    pub event: &'a str,
    pub body: String,
    pub timeout: Duration,
}

/// A signed POST of the call's body to its URL, which is checked against `network`
/// first. Keeps up to `keep_body` bytes of the answer (at least the log's excerpt).
pub async fn call(network: &HookNetwork, call: Call<'_>, keep_body: usize) -> CallOutcome {
    let Call {
        url,
        secret,
        id,
        event,
        body,
        timeout,
    } = call;
    let started = Instant::now();
    let failed = |error: String| CallOutcome {
        status: None,
        error: Some(error),
        excerpt: String::new(),
        body: Vec::new(),
        elapsed: started.elapsed(),
    };
    let checked = match super::network::check_url(network, url).await {
        Ok(checked) => checked,
        Err(refusal) => return failed(refusal.to_string()),
    };
    let mut builder = reqwest::Client::builder()
        // A receiver's redirect is not followed: the address it names was not checked.
        .redirect(reqwest::redirect::Policy::none())
        // Nor is a proxy from the environment used: it would reach what was not checked.
        .no_proxy()
        .timeout(timeout.min(MAX_TIMEOUT))
        .user_agent("Corral-Hooks/1");
    if let Some(domain) = &checked.domain {
        // The call goes to the address just checked, not to a second resolution.
        builder = builder.resolve(domain, checked.address);
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(error) => return failed(format!("cannot make an HTTP client: {error}")),
    };
    let timestamp = chrono::Utc::now().timestamp();
    let signature = signature(secret, timestamp, body.as_bytes());
    let sent = client
        .post(checked.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("Corral-Delivery", id)
        .header("Corral-Event", event)
        .header("Corral-Timestamp", timestamp.to_string())
        .header("Corral-Signature", signature)
        .body(body)
        .send()
        .await;
    let mut response = match sent {
        Ok(response) => response,
        Err(error) => return failed(describe(&error)),
    };
    let status = response.status().as_u16();
    let mut kept = Vec::new();
    let limit = keep_body.max(EXCERPT_BYTES);
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if kept.len() >= limit {
                    break;
                }
            }
            Ok(None) => break,
            // The status is the answer; a body cut short is still logged as far as read.
            Err(_) => break,
        }
    }
    let excerpt_bytes = &kept[..kept.len().min(EXCERPT_BYTES)];
    CallOutcome {
        status: Some(status),
        error: None,
        excerpt: String::from_utf8_lossy(excerpt_bytes).into_owned(),
        body: kept,
        elapsed: started.elapsed(),
    }
}

/// A reqwest error in a few words, with its cause (reqwest's own text alone is "error
/// sending request").
fn describe(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let what = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        error.to_string()
    };
    match error.source().and_then(|source| source.source()) {
        Some(cause) => format!("{what}: {cause}"),
        None => what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // The answer `openssl dgst -sha256 -hmac` gives (see `known_answer`).
        assert_eq!(
            signature("key", 1700000000, b"{}"),
            "sha256=".to_owned() + &known_answer()
        );
    }

    #[test]
    fn health_and_replacement_events_read_as_one_line_each() {
        use api_types::{
            HookCluster, HookHealth, HookLinks, HookNode, HookReplacement, HookTenant,
        };
        let node = |number: u32, hostname: Option<&str>| HookNode {
            id: format!("c-{number}"),
            number,
            hostname: hostname.map(str::to_owned),
        };
        let body = |event: HookEvent| HookEventBody {
            schema: 1,
            event,
            id: "e".to_owned(),
            time: "2026-12-02T13:27:00.000Z".to_owned(),
            tenant: HookTenant {
                id: "t".to_owned(),
                name: "acme".to_owned(),
            },
            cluster: Some(HookCluster {
                id: Some("c".to_owned()),
                name: "shop".to_owned(),
            }),
            job: None,
            failed_step: None,
            links: HookLinks {
                job: None,
                cluster: Some("/clusters/c".to_owned()),
            },
            approval: None,
            lease: None,
            health: Some(HookHealth {
                node: node(1001, Some("web-1")),
                service: "web".to_owned(),
                message: (event == HookEvent::HealthDown)
                    .then(|| "the check exited with code 7".to_owned()),
                down_since: (event == HookEvent::HealthUp)
                    .then(|| "2026-12-02T13:20:00.000Z".to_owned()),
            }),
            replacement: None,
        };
        assert_eq!(
            slack_text(&body(HookEvent::HealthDown)),
            "Corral: web on node 1001 (web-1) of cluster shop stopped answering its health \
             check: the check exited with code 7. /clusters/c"
        );
        assert_eq!(
            slack_text(&body(HookEvent::HealthUp)),
            "Corral: web on node 1001 (web-1) of cluster shop answers its health check again \
             (down since 2026-12-02T13:20:00.000Z). /clusters/c"
        );
        let replaced = HookEventBody {
            health: None,
            replacement: Some(HookReplacement {
                old: node(1001, Some("web-1")),
                new: node(1003, None),
            }),
            ..body(HookEvent::NodeReplaced)
        };
        assert_eq!(
            slack_text(&replaced),
            "Corral: node 1001 (web-1) of cluster shop was replaced by node 1003."
        );
    }

    fn known_answer() -> String {
        // printf '%s' '1700000000.{}' | openssl dgst -sha256 -hmac key
        "9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae".to_owned()
    }
}
