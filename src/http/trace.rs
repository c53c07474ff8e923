//! Request tracing: every request gets a trace id (the caller's W3C `traceparent` trace id when it
//! sends one, otherwise a random one), echoed in `X-Trace-Id`, in every problem body and on every
//! log line of the request, which also carry the client address.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use super::client_address::ClientAddress;
use super::problem::problem_response;
use super::trace_id::{self, from_traceparent, new_trace_id, TRACE_HEADER};

/// The path as logs show it: the session token of a checkout or portal link (a bearer credential
/// for the customer's pages) is replaced by `{token}`.
pub fn loggable_path(path: &str) -> String {
    for prefix in ["/checkout/", "/portal/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            let tail = rest.find('/').map_or("", |i| &rest[i..]);
            return format!("{prefix}{{token}}{tail}");
        }
    }
    path.to_string()
}

/// Middleware: assigns the trace id, opens the request span, logs the outcome, and turns any
/// error response that is not already a problem document (unknown route, wrong method, a layer's
/// rejection) into one.
pub async fn trace_requests(request: Request, next: Next) -> Response {
    let trace_id = request
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(from_traceparent)
        .unwrap_or_else(new_trace_id);
    let client = request
        .extensions()
        .get::<ClientAddress>()
        .map(ToString::to_string);
    let span = tracing::info_span!(
        "request",
        trace_id = %trace_id,
        client = client.as_deref().unwrap_or("-"),
        method = %request.method(),
        path = %loggable_path(request.uri().path()),
    );
    let started = std::time::Instant::now();
    let id = trace_id.clone();
    let mut response = trace_id::scope(trace_id.clone(), async move {
        let response = next.run(request).await;
        ensure_problem(response)
    })
    .instrument(span.clone())
    .await;
    span.in_scope(|| {
        tracing::info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "request finished"
        );
    });
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(TRACE_HEADER, value);
    }
    response
}

fn ensure_problem(response: Response) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    if !(status.is_client_error() || status.is_server_error()) || is_problem || is_page {
        return response;
    }
    let kind = match status {
        StatusCode::NOT_FOUND => "not-found",
        StatusCode::METHOD_NOT_ALLOWED => "method-not-allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "payload-too-large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported-media-type",
        _ if status.is_server_error() => "internal",
        _ => "bad-request",
    };
    let title = status
        .canonical_reason()
        .unwrap_or("Request failed")
        .to_string();
    let mut problem = problem_response(status, kind, title, Default::default());
    if let Some(allow) = response.headers().get(header::ALLOW) {
        problem.headers_mut().insert(header::ALLOW, allow.clone());
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_tokens_stay_out_of_logged_paths() {
        assert_eq!(loggable_path("/checkout/abc123"), "/checkout/{token}");
        assert_eq!(
            loggable_path("/portal/abc123/invoices/in_1/pdf"),
            "/portal/{token}/invoices/in_1/pdf"
        );
        assert_eq!(
            loggable_path("/api/subscriptions/v1/checkout/session"),
            "/api/subscriptions/v1/checkout/session"
        );
    }
}
