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

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// Stable code: unauthenticated, forbidden, not_found, invalid, bad_request,
    /// conflict, quota_exceeded, too_many_attempts, payload_too_large,
    /// unsupported_media_type, internal.
    pub error: String,
    /// What went wrong, for people.
    pub message: String,
    /// Every problem found, with the JSON path it is at.
    #[serde(default)]
    pub details: Vec<Problem>,
}
