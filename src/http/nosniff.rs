//! `X-Content-Type-Options: nosniff` on every response recur sends: API JSON and problem bodies,
//! the OpenAPI document and its reference page, hosted pages, PDFs and static assets. Browsers
//! then take each body for its declared type and never run a JSON or text answer as script or
//! HTML.

use axum::http::{header, HeaderValue};
use axum::response::Response;

/// Middleware (`axum::middleware::map_response`): adds the header to `response`.
pub async fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
