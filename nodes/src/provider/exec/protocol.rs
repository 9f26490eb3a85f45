//! The exec protocol, version 1 (docs/providers.md): what Corral writes to a plugin's
//! stdin and what it accepts back on its stdout. Requests are built here and responses
//! checked here, so the rest of the provider sees only well-formed answers.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::provider::{NodePresence, NodeSpec, ProviderSettings};

/// The protocol version Corral speaks; a response must say the same.
pub const PROTOCOL_VERSION: u64 = 1;

/// What Corral asks a plugin to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecOp {
    Create,
    ConfirmInfo,
    Delete,
    Adopt,
    Presence,
    Test,
}

impl ExecOp {
    /// The op's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::ConfirmInfo => "confirm-info",
            Self::Delete => "delete",
            Self::Adopt => "adopt",
            Self::Presence => "presence",
            Self::Test => "test",
        }
    }
}

/// The machine-readable reason a plugin gave for refusing (`"code"`). Corral acts on
/// `gone` only (a delete of a node that is gone has succeeded); the others are for people
/// and tools reading the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    /// The credentials were refused.
    Auth,
    /// The cloud said no more machines (or cores, or addresses).
    Quota,
    /// The node no longer exists.
    Gone,
    /// The request was wrong (a setting, an image, a flavor).
    Invalid,
    /// A code this version of Corral has no meaning for.
    Other(String),
}

impl ErrorCode {
    fn parse(code: &str) -> Self {
        match code {
            "auth" => Self::Auth,
            "quota" => Self::Quota,
            "gone" => Self::Gone,
            "invalid" => Self::Invalid,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Auth => "auth",
            Self::Quota => "quota",
            Self::Gone => "gone",
            Self::Invalid => "invalid",
            Self::Other(other) => other,
        }
    }
}

/// A node as a plugin reports it (`"node"` of create, confirm-info and adopt).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NodeInfo {
    pub host: String,
    pub port: u16,
    pub user: String,
    /// OpenSSH one-line public key; may be missing from create while the machine boots.
    #[serde(default)]
    pub host_key: Option<String>,
    /// The node's address for the cluster's other nodes, where it is not `host`.
    #[serde(default)]
    pub address: Option<String>,
    /// The plugin's own state for the node, handed back on every later op.
    #[serde(default)]
    pub state: Value,
}

/// A checked response.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `{"ok": true, ...}`: the rest of the object, for the op to read.
    Ok(Map<String, Value>),
    /// `{"ok": false, "error": ..., "code": ...}`.
    Refused {
        message: String,
        code: Option<ErrorCode>,
    },
}

/// Why a response was not accepted, in words for the error message.
pub type ProtocolProblem = String;

/// The request for `op` without its op fields: `{"protocol", "op", "provider",
/// "credentials"}`. `credentials` is the tenant's object (secret) or null.
pub fn request(
    op: ExecOp,
    provider: &ProviderSettings,
    credentials: Option<Value>,
) -> Map<String, Value> {
    let mut request = Map::new();
    request.insert("protocol".to_owned(), json!(PROTOCOL_VERSION));
    request.insert("op".to_owned(), json!(op.as_str()));
    request.insert(
        "provider".to_owned(),
        json!({"name": provider.name, "settings": provider.settings}),
    );
    request.insert("credentials".to_owned(), credentials.unwrap_or(Value::Null));
    request
}

/// `"node"` of a create request: what to make.
pub fn create_node(spec: &NodeSpec) -> Value {
    json!({
        "id": spec.id,
        "tenant_id": spec.tenant_id,
        "cluster_id": spec.cluster_id,
        "image": spec.image,
        "flavor": spec.flavor,
        "ssh_user": spec.ssh_user,
        "limits": {
            "memory_mb": spec.limits.memory_mb,
            // Thousandths back to the hardware type's (possibly fractional) CPUs.
            "cpus": spec.limits.cpu_millis.map(|millis| millis as f64 / 1000.0),
        },
    })
}

/// Parses and checks stdout: one JSON object of protocol version 1 with a boolean `ok`.
pub fn parse_response(stdout: &[u8]) -> Result<Response, ProtocolProblem> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| "its stdout is not UTF-8 text (a JSON response was expected)".to_owned())?;
    let text = text.trim();
    if text.is_empty() {
        return Err("it printed nothing on stdout (a JSON response was expected)".to_owned());
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        format!(
            "its stdout is not a JSON response ({error}); it began {:?}",
            excerpt(text)
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err("its response is JSON but not an object".to_owned());
    };
    match object.get("protocol").and_then(Value::as_u64) {
        Some(PROTOCOL_VERSION) => {}
        Some(other) => {
            return Err(format!(
                "it answered in protocol version {other}; Corral speaks version {PROTOCOL_VERSION}"
            ))
        }
        None => {
            return Err(format!(
                "its response has no \"protocol\": {PROTOCOL_VERSION} (every response carries it)"
            ))
        }
    }
    match object.remove("ok") {
        Some(Value::Bool(true)) => Ok(Response::Ok(object)),
        Some(Value::Bool(false)) => {
            let message = object
                .get("error")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|message| !message.is_empty())
                .unwrap_or("(the plugin gave no \"error\" message)")
                .to_owned();
            let code = object
                .get("code")
                .and_then(Value::as_str)
                .filter(|code| !code.is_empty())
                .map(ErrorCode::parse);
            Ok(Response::Refused { message, code })
        }
        _ => Err("its response has no boolean \"ok\"".to_owned()),
    }
}

/// The `"node"` of a successful create, confirm-info or adopt.
pub fn node_info(mut fields: Map<String, Value>) -> Result<NodeInfo, ProtocolProblem> {
    let node = fields
        .remove("node")
        .ok_or_else(|| "its response has no \"node\"".to_owned())?;
    let info: NodeInfo = serde_json::from_value(node)
        .map_err(|error| format!("its \"node\" is not usable: {error}"))?;
    if info.host.trim().is_empty() {
        return Err("its \"node\" has an empty \"host\"".to_owned());
    }
    if info.user.trim().is_empty() {
        return Err("its \"node\" has an empty \"user\"".to_owned());
    }
    if info.port == 0 {
        return Err("its \"node\" has port 0".to_owned());
    }
    Ok(info)
}

/// The `"presence"` of a successful presence answer: `present` or `gone` (a plugin
/// that cannot tell refuses instead, and Corral reads that as unknown).
pub fn presence(fields: &Map<String, Value>) -> Result<NodePresence, ProtocolProblem> {
    match fields.get("presence").and_then(Value::as_str) {
        Some("present") => Ok(NodePresence::Present),
        Some("gone") => Ok(NodePresence::Gone),
        Some(other) => Err(format!(
            "its \"presence\" is {other:?}; \"present\" or \"gone\" was expected"
        )),
        None => Err("its presence response has no \"presence\"".to_owned()),
    }
}

/// The `"message"` of a successful test.
pub fn test_message(fields: &Map<String, Value>) -> Result<String, ProtocolProblem> {
    fields
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|message| !message.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "its test response has no \"message\"".to_owned())
}

/// The first characters of a bad response, enough to recognise it.
fn excerpt(text: &str) -> String {
    text.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn responses_must_be_versioned_objects_with_a_boolean_ok() {
        assert!(matches!(
            parse_response(br#"{"protocol": 1, "ok": true, "message": "fine"}"#),
            Ok(Response::Ok(_))
        ));
        assert_eq!(
            parse_response(br#"{"protocol": 1, "ok": false, "error": "no", "code": "gone"}"#)
                .unwrap(),
            Response::Refused {
                message: "no".to_owned(),
                code: Some(ErrorCode::Gone)
            }
        );
        for (bad, words) in [
            (&b"hello"[..], "not a JSON response"),
            (b"", "printed nothing"),
            (b"[1]", "not an object"),
            (br#"{"ok": true}"#, "no \"protocol\""),
            (br#"{"protocol": 2, "ok": true}"#, "version 2"),
            (br#"{"protocol": 1, "ok": "yes"}"#, "boolean"),
        ] {
            let problem = parse_response(bad).unwrap_err();
            assert!(problem.contains(words), "{problem}");
        }
    }

    #[test]
    fn presence_answers_are_present_or_gone() {
        let fields = |value: Value| {
            let Value::Object(map) = value else {
                unreachable!()
            };
            map
        };
        for (answer, read) in [
            (json!({"presence": "present"}), Ok(NodePresence::Present)),
            (json!({"presence": "gone"}), Ok(NodePresence::Gone)),
        ] {
            assert_eq!(presence(&fields(answer)), read);
        }
        for (answer, words) in [
            (json!({"presence": "stopped"}), "\"stopped\""),
            (json!({"presence": 1}), "no \"presence\""),
            (json!({}), "no \"presence\""),
        ] {
            let problem = presence(&fields(answer)).unwrap_err();
            assert!(problem.contains(words), "{problem}");
        }
    }

    #[test]
    fn a_node_needs_host_port_and_user() {
        let fields = |node: Value| {
            let Value::Object(map) = json!({ "node": node }) else {
                unreachable!()
            };
            map
        };
        let info = node_info(fields(
            json!({"host": "10.0.0.1", "port": 22, "user": "root"}),
        ))
        .unwrap();
        assert_eq!(info.host_key, None);
        assert!(node_info(fields(json!({"host": "10.0.0.1", "user": "root"}))).is_err());
        assert!(node_info(fields(json!({"host": "", "port": 22, "user": "root"}))).is_err());
        assert!(node_info(Map::new()).is_err());
    }
}
