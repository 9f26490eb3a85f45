//! `ApiError`: the one error type at the HTTP edge. Clients get
//! `{"error": code, "message": text, "details": [...]}` with the right status; the
//! cause of an internal error goes to the log only, never into the response.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use engine::service::ServiceError;

pub use api_types::{ErrorBody, ErrorCode};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
    retry_after_secs: Option<u64>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::from_u16(code.status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: ErrorBody {
                error: code,
                message: message.into(),
                details: Vec::new(),
            },
            retry_after_secs: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthenticated, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// A failure inside the server: `cause` is logged, the client sees "internal error".
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        ServiceError::internal(cause).into()
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        if let ServiceError::Internal { cause } = &error {
            tracing::error!(%cause, "internal error");
        }
        let message = match &error {
            ServiceError::Unauthenticated => {
                "authentication required: sign in or send Authorization: Bearer <token>".to_owned()
            }
            other => other.to_string(),
        };
        let code = error.code();
        let retry_after_secs = match &error {
            ServiceError::TooManyAttempts { wait_secs } => Some(*wait_secs),
            // A restart of the database takes seconds.
            ServiceError::Unavailable => Some(5),
            _ => None,
        };
        let details = match error {
            ServiceError::Invalid { details, .. } => details,
            _ => Vec::new(),
        };
        let mut api = ApiError::new(code, message);
        api.body.details = details;
        api.retry_after_secs = retry_after_secs;
        api
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = self.retry_after_secs {
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                headers.insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}
