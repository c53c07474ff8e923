//! Liveness and readiness probes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::problem::{problem_response, Problem};
use crate::state::AppState;

/// Probe answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` when healthy.
    pub status: &'static str,
}

/// The process is up and serving.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// The process can reach its database.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "Database unreachable", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn readyz(State(state): State<AppState>) -> axum::response::Response {
    use axum::response::IntoResponse;
    match state.store.ping().await {
        Ok(()) => Json(Health { status: "ok" }).into_response(),
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            problem_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "not-ready",
                "The database is not reachable.".into(),
                Default::default(),
            )
        }
    }
}
