//! The hosted pages customers see: server-rendered HTML, no third-party resources, a strict
//! Content-Security-Policy, CSRF tokens on every form, strings from `locales/`, amounts
//! formatted for the currency.

pub mod cashier;
pub mod checkout;
pub mod csrf;
pub mod expired;
pub mod form;
pub mod format;
pub mod i18n;
pub mod invoice_pdf;
pub mod invoice_view;
pub mod notice;
pub mod portal;
pub mod render;
pub mod session;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;

use crate::app::AppState;

/// The pages' routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/cashier", get(cashier::show))
        .route("/checkout/{token}", get(checkout::show).post(checkout::pay))
        .route("/checkout/{token}/confirm", post(checkout::confirm))
        .route("/portal/{token}", get(portal::show))
        .route(
            "/portal/{token}/invoices/{invoice_key}",
            get(portal::invoice_page),
        )
        .route(
            "/portal/{token}/invoices/{invoice_key}/pdf",
            get(portal::invoice_pdf),
        )
        .route(
            "/portal/{token}/payment-method",
            get(portal::card_page).post(portal::replace_card),
        )
        .route(
            "/portal/{token}/payment-method/confirm",
            post(portal::confirm_card),
        )
        .route(
            "/portal/{token}/memberships/{key}/cancel",
            get(portal::cancel_page).post(portal::cancel),
        )
        .route("/portal/{token}/memberships/{key}/pay", post(portal::pay))
        .route("/assets/recur.css", get(stylesheet))
        .route("/assets/card-form.js", get(card_form_script))
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

async fn card_form_script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../assets/card-form.js"),
    )
}
