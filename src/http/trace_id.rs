//! The trace id of the request being served: set by the tracing middleware
//! ([`super::trace`]), read by every problem body and log line of the request.

use std::future::Future;

tokio::task_local! {
    static TRACE_ID: String;
}

/// The response header carrying the trace id.
pub const TRACE_HEADER: &str = "x-trace-id";

/// The current request's trace id (a fresh one outside a request).
pub fn current_trace_id() -> String {
    TRACE_ID
        .try_with(Clone::clone)
        .unwrap_or_else(|_| new_trace_id())
}

pub(super) fn new_trace_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The trace id inside a valid `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`).
pub(super) fn from_traceparent(value: &str) -> Option<String> {
    let mut parts = value.split('-');
    let (_version, trace_id) = (parts.next()?, parts.next()?);
    let valid = trace_id.len() == 32
        && trace_id
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && trace_id.chars().any(|c| c != '0');
    valid.then(|| trace_id.to_string())
}

/// Runs `request` with `trace_id` as the current trace id.
pub async fn scope<F: Future>(trace_id: String, request: F) -> F::Output {
    TRACE_ID.scope(trace_id, request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_trace_id_is_adopted_only_when_valid() {
        assert_eq!(
            from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(
            from_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
            None
        );
        assert_eq!(from_traceparent("garbage"), None);
    }
}
