//! `UiError`: what a server function tells a page when it cannot do what was asked.
//!
//! It travels to the browser (JSON, or encoded in the redirect URL when a form was
//! posted without JavaScript), so it carries only what is safe to show: a message,
//! and for bad input the field each problem belongs to, so forms can put the
//! message next to the field. Internal causes stay in the server log.

use api_types::ErrorCode;
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// One problem with one input, named by the form field (or JSON path) it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum UiError {
    /// No session, or it ended: the page offers to sign in again.
    #[error("you are not signed in (or your session ended); sign in again")]
    Unauthenticated,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(String),
    /// Bad input: `message` for the whole form, `problems` per field.
    #[error("{message}")]
    Invalid {
        message: String,
        problems: Vec<FieldProblem>,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    QuotaExceeded(String),
    /// A gate hook of the tenant refused the operation; the message says why.
    #[error("{0}")]
    GateRefused(String),
    #[error("{0}")]
    TooManyAttempts(String),
    /// The server's disk is full; the message says so (an operator must free space).
    #[error("{0}")]
    StorageFull(String),
    /// Something broke on the server; the cause is in its log.
    #[error("something went wrong on the server; try again, and tell your admin if it persists")]
    Internal,
    /// The database is not answering (it is down or restarting): nothing was done.
    #[error("{}", api_types::DATABASE_UNAVAILABLE)]
    Unavailable,
    /// The call itself failed (network, encoding).
    #[error("the server could not be reached: {0}")]
    Transport(String),
}

impl UiError {
    /// The refusal's code, whose status the pages answer with (the API's table).
    pub fn code(&self) -> ErrorCode {
        match self {
            UiError::Unauthenticated => ErrorCode::Unauthenticated,
            UiError::Forbidden(_) => ErrorCode::Forbidden,
            UiError::NotFound(_) => ErrorCode::NotFound,
            UiError::Conflict(_) => ErrorCode::Conflict,
            UiError::QuotaExceeded(_) => ErrorCode::QuotaExceeded,
            UiError::GateRefused(_) => ErrorCode::GateRefused,
            UiError::Invalid { .. } => ErrorCode::Invalid,
            UiError::TooManyAttempts(_) => ErrorCode::TooManyAttempts,
            UiError::StorageFull(_) => ErrorCode::StorageFull,
            UiError::Internal | UiError::Transport(_) => ErrorCode::Internal,
            UiError::Unavailable => ErrorCode::Unavailable,
        }
    }

    /// The HTTP status that goes with the error, for pages and server functions.
    pub fn status_code(&self) -> u16 {
        self.code().status()
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        UiError::Invalid {
            message: message.into(),
            problems: Vec::new(),
        }
    }

    /// A bad value in one field.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        UiError::Invalid {
            message: format!("{field}: {message}"),
            problems: vec![FieldProblem {
                field: field.to_owned(),
                message,
            }],
        }
    }

    /// The messages about `field`, for showing next to it.
    pub fn problems_for(&self, field: &str) -> Vec<String> {
        match self {
            UiError::Invalid { problems, .. } => problems
                .iter()
                .filter(|problem| problem.field == field)
                .map(|problem| problem.message.clone())
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl FromServerFnError for UiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            ServerFnErrorErr::Args(message) | ServerFnErrorErr::MissingArg(message) => {
                UiError::invalid(format!("the form was incomplete: {message}"))
            }
            other => UiError::Transport(other.to_string()),
        }
    }
}

#[cfg(feature = "ssr")]
impl From<engine::service::ServiceError> for UiError {
    fn from(error: engine::service::ServiceError) -> Self {
        use engine::service::ServiceError;
        match error {
            ServiceError::Unauthenticated => UiError::Unauthenticated,
            ServiceError::Forbidden(message) => UiError::Forbidden(message),
            ServiceError::NotFound(what) => UiError::NotFound(what),
            ServiceError::Invalid { message, details } => UiError::Invalid {
                message,
                problems: details
                    .into_iter()
                    .map(|problem| FieldProblem {
                        field: problem.path,
                        message: problem.message,
                    })
                    .collect(),
            },
            ServiceError::Conflict(message) => UiError::Conflict(message),
            ServiceError::QuotaExceeded(message) => UiError::QuotaExceeded(message),
            ServiceError::GateRefused(message) => UiError::GateRefused(message),
            error @ ServiceError::TooManyAttempts { .. } => {
                UiError::TooManyAttempts(error.to_string())
            }
            ServiceError::Unavailable => UiError::Unavailable,
            error @ ServiceError::StorageFull(_) => UiError::StorageFull(error.to_string()),
            ServiceError::Internal { cause } => {
                tracing::error!(%cause, "server function failed");
                UiError::Internal
            }
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use engine::service::ServiceError;

    use super::UiError;

    /// Pages and the API answer a refusal with the same status.
    #[test]
    fn pages_and_the_api_share_the_status_table() {
        let refusals = [
            ServiceError::Unauthenticated,
            ServiceError::Forbidden("no".into()),
            ServiceError::NotFound("cluster \"x\"".into()),
            ServiceError::invalid("bad"),
            ServiceError::Conflict("taken".into()),
            ServiceError::QuotaExceeded("too many".into()),
            ServiceError::GateRefused("the gate said no".into()),
            ServiceError::TooManyAttempts { wait_secs: 3 },
            ServiceError::StorageFull("database or disk is full".into()),
            ServiceError::internal("boom"),
            ServiceError::Unavailable,
        ];
        for refusal in refusals {
            let code = refusal.code();
            assert_eq!(UiError::from(refusal).code(), code);
        }
    }
}
