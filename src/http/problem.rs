//! The problem document (RFC 9457) every failure of the API and of the HTTP edge answers with:
//! `{"type", "title", "status", "errors": {"<json.path>": ["message", …]}, "traceId"}`. The API's
//! errors render through it (`api::problem::ApiError`), and so do the edge's refusals that come
//! before any handler (U+0000 in a URL, a body that is not a form, an unknown route).

use std::collections::BTreeMap;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use recur_domain::validation::FieldErrors;
use serde::Serialize;
use utoipa::ToSchema;

use super::trace_id::current_trace_id;

/// The problem document recur answers every failure with.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// URI naming the kind of problem (`urn:recur:problem:<kind>`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Short human summary.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// Failing fields by JSON path, each with every message that applies.
    pub errors: BTreeMap<String, Vec<String>>,
    /// Correlates this response with the server's logs (`X-Trace-Id` header).
    pub trace_id: String,
}

/// A problem response for `status` with the given kind, title and field errors.
pub fn problem_response(
    status: StatusCode,
    kind: &str,
    title: String,
    errors: BTreeMap<String, Vec<String>>,
) -> Response {
    let body = Problem {
        kind: format!("urn:recur:problem:{kind}"),
        title,
        status: status.as_u16(),
        errors,
        trace_id: current_trace_id(),
    };
    let mut response = (status, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    response
}

/// 400: the fields of `errors` failed validation.
pub fn validation(errors: FieldErrors) -> Response {
    problem_response(
        StatusCode::BAD_REQUEST,
        "validation",
        "One or more validation errors occurred.".into(),
        errors.into_map(),
    )
}

/// 400: the body is not what the operation reads (`detail` says why).
pub fn malformed_body(detail: String) -> Response {
    let mut errors = BTreeMap::new();
    errors.insert("$".to_string(), vec![detail]);
    problem_response(
        StatusCode::BAD_REQUEST,
        "malformed-body",
        "The request body is not valid JSON for this operation.".into(),
        errors,
    )
}

/// 404: no such resource.
pub fn not_found() -> Response {
    problem_response(
        StatusCode::NOT_FOUND,
        "not-found",
        "The resource does not exist.".into(),
        BTreeMap::new(),
    )
}

/// 500: `error` is logged (with the request's trace id), never sent.
pub fn internal(error: &anyhow::Error) -> Response {
    tracing::error!(error = format!("{error:#}"), "request failed");
    problem_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "An unexpected error occurred.".into(),
        BTreeMap::new(),
    )
}
