//! Server functions answer every error with status 500; this layer gives the
//! response the status the error stands for (422 for bad input, 404, 403, ...), so
//! logs, proxies and browser tools see a refusal as a refusal, not a crash.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use app::error::UiError;

/// Path prefix of the server functions.
const PREFIX: &str = "/sfn/";
/// Error bodies are usually a few hundred bytes, but an import report lists every
/// problem of a bundle; the bound only stops a runaway body.
const MAX_ERROR_BYTES: usize = 16 * 1024 * 1024;

pub async fn server_fn_status(request: Request, next: Next) -> Response {
    let is_server_fn = request.uri().path().starts_with(PREFIX);
    let response = next.run(request).await;
    if !is_server_fn || response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BYTES).await else {
        tracing::error!("a server function's error body could not be read");
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(error) = serde_json::from_slice::<UiError>(&bytes) {
        if let Ok(status) = StatusCode::from_u16(error.status_code()) {
            parts.status = status;
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}
