//! `/metrics`: the process's registry ([`crate::metrics`]) with the outboxes' backlog read from
//! the database at each scrape, and the middleware that counts every request.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use recur_domain::signature::constant_time_eq;
use sha2::{Digest, Sha256};

use super::extract::bearer_token;
use super::problem::ApiError;
use crate::state::AppState;
use crate::store::{emails, events};

/// Middleware: counts each request and observes its latency under its route template.
pub async fn record(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    state.metrics.request(
        method,
        route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// `GET /metrics`: 401 without the bearer token when `RECUR_METRICS_TOKEN` is set. The backlog
/// gauges are left out when the database cannot be read, rather than shown stale.
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if !authorized(state.config.metrics.token.as_deref(), &headers) {
        return ApiError::Unauthorized.into_response();
    }
    let backlog = async {
        let events = events::pending_count(&state.store).await?;
        let emails = emails::pending_count(&state.store).await?;
        Ok::<_, sqlx::Error>([("events", events), ("emails", emails)])
    };
    match backlog.await {
        Ok(counts) => state.metrics.set_backlog(&counts),
        Err(error) => {
            tracing::warn!(%error, "reading the outbox backlog for /metrics failed");
            state.metrics.clear_backlog();
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

/// Whether `headers` carry `token` as a bearer token (always, when no token is configured). Both
/// sides are hashed first, so the comparison takes the same time whatever is presented.
fn authorized(token: Option<&str>, headers: &HeaderMap) -> bool {
    let Some(token) = token else {
        return true;
    };
    let presented = bearer_token(headers).unwrap_or_default();
    constant_time_eq(
        &Sha256::digest(presented.as_bytes()),
        &Sha256::digest(token.as_bytes()),
    )
}
