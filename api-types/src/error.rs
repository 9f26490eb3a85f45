//! The body of every error response, and the problems it lists.

use serde::{Deserialize, Serialize};

/// One problem with a request, at a JSON path when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Why a request was refused: the stable code clients branch on, and the one table
/// from a refusal to its HTTP status, used by the REST API and the web pages alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No credentials, or they ended.
    Unauthenticated,
    /// Signed in, but the role or tenant does not allow it.
    Forbidden,
    /// No such thing, or not visible to the caller (the same answer, so ids leak nothing).
    NotFound,
    /// Well-formed but wrong input: `details` says where.
    Invalid,
    /// Input that could not be read at all (malformed JSON or query).
    BadRequest,
    /// It clashes with what exists (a name taken, a cluster busy).
    Conflict,
    /// A tenant quota would be exceeded.
    QuotaExceeded,
    /// A gate hook of the tenant refused the operation (its reason is the message), or
    /// could not be asked and its failure policy is to refuse.
    GateRefused,
    /// Too many failed sign-ins: wait and try again.
    TooManyAttempts,
    /// The caller has as many job event streams open as the server allows one user:
    /// close one first.
    TooManyStreams,
    PayloadTooLarge,
    UnsupportedMediaType,
    /// The server's database disk is full: nothing was written; reads still work.
    /// Try again once an operator has freed space.
    StorageFull,
    /// Something broke inside; the cause is in the server's log only.
    Internal,
    /// The database is not answering (down, restarting, unreachable): nothing was
    /// done; try again shortly. The message is [`DATABASE_UNAVAILABLE`].
    Unavailable,
}

/// What the API and the pages say while the database is not answering.
pub const DATABASE_UNAVAILABLE: &str = "the database is not answering; try again shortly";

impl ErrorCode {
    /// The HTTP status that goes with the code.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthenticated => 401,
            ErrorCode::Forbidden | ErrorCode::GateRefused => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict | ErrorCode::QuotaExceeded => 409,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::Invalid => 422,
            ErrorCode::TooManyAttempts | ErrorCode::TooManyStreams => 429,
            ErrorCode::Internal => 500,
            // 507 Insufficient Storage (RFC 4918): the request was fine, the server
            // cannot store what it needs to complete it.
            ErrorCode::StorageFull => 507,
            ErrorCode::Unavailable => 503,
        }
    }
}

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// The stable code; the response's status is the code's.
    pub error: ErrorCode,
    /// What went wrong, for people.
    pub message: String,
    /// Every problem found, with the JSON path it is at.
    #[serde(default)]
    pub details: Vec<Problem>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_snake_case_words() {
        let body = ErrorBody {
            error: ErrorCode::QuotaExceeded,
            message: "too many clusters".to_owned(),
            details: vec![Problem::new("size", "at most 4")],
        };
        let json = serde_json::to_value(&body).expect("serialises");
        assert_eq!(json["error"], "quota_exceeded");
        assert_eq!(
            ErrorCode::QuotaExceeded.status(),
            ErrorCode::Conflict.status()
        );
        let back: ErrorBody = serde_json::from_value(json).expect("parses");
        assert_eq!(back, body);
    }
}
