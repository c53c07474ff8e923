//! The hosted pages customers see: server-rendered HTML, no third-party resources, a strict
//! Content-Security-Policy, CSRF tokens on every form, strings from `locales/`, amounts
//! formatted for the currency.

pub mod cashier;
pub mod csrf;
pub mod expired;
pub mod format;
pub mod i18n;
pub mod render;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::app::AppState;

/// The pages' routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/cashier", get(cashier::show))
        .route("/assets/recur.css", get(stylesheet))
}

async fn stylesheet() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../assets/recur.css"),
    )
}
