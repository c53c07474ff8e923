//! The hosted pages customers see, and the merchant's dashboard ([`dashboard`]): server-rendered
//! HTML, no third-party resources, a strict Content-Security-Policy, CSRF tokens on every form,
//! strings from `locales/`, amounts formatted for the currency.

pub mod brand;
pub mod cashier;
pub mod checkout;
pub mod credit_note_pdf;
pub mod credit_note_view;
pub mod csrf;
pub mod dashboard;
pub mod documents;
pub mod expired;
pub mod failure;
pub mod form;
pub mod format;
pub mod invoice_pdf;
pub mod invoice_view;
pub mod notice;
pub mod pdf;
pub mod portal;
pub mod render;
pub mod session;
pub mod stripe_element;
pub mod usage;
pub mod usage_chart;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{middleware, Router};

use crate::state::AppState;

/// The pages' routes. `cashier.js` is served under `/cdn/` and, when `RECUR_CDN_URL` names
/// another path, under that path too (so a CDN can pull it from the same path).
pub fn router(state: &AppState) -> Router<AppState> {
    let cdn_path = url::Url::parse(&state.cdn_url())
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    let router = Router::new();
    let router = if cdn_path != "/cdn" && !cdn_path.starts_with("/api") {
        router.route(&format!("{cdn_path}/cashier.js"), get(cashier_embed_script))
    } else {
        router
    };
    router
        .route("/cashier", get(cashier::show).post(cashier::pay))
        .route("/cashier/confirm", post(cashier::confirm))
        .route("/cashier/stripe", post(cashier::pay_with_stripe))
        .route(
            "/cashier/stripe/authenticated",
            post(cashier::stripe_authenticated),
        )
        .route("/checkout/{token}", get(checkout::show).post(checkout::pay))
        .route("/checkout/{token}/saved", post(checkout::pay_saved))
        .route("/checkout/{token}/stripe", post(checkout::pay_with_stripe))
        .route("/checkout/{token}/sepa", post(checkout::pay_by_mandate))
        .route(
            "/checkout/{token}/authenticated",
            post(checkout::authenticated),
        )
        .route("/checkout/{token}/confirm", post(checkout::confirm))
        .route("/checkout/{token}/coupon", post(checkout::apply_code))
        .route(
            "/checkout/{token}/coupon/remove",
            post(checkout::remove_code),
        )
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
            "/portal/{token}/payment-method/stripe",
            post(portal::replace_with_stripe),
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
        .route(
            "/portal/{token}/memberships/{key}/switch/{price_id}",
            get(portal::switch::page).post(portal::switch::confirm),
        )
        .route(
            "/portal/{token}/memberships/{key}/pending-change/drop",
            post(portal::switch::drop_pending),
        )
        .route("/documents/invoices/{key}/pdf", get(documents::invoice))
        .route(
            "/documents/credit-notes/{key}/pdf",
            get(documents::credit_note),
        )
        .route("/assets/recur.css", get(stylesheet))
        .route("/assets/accent/{file}", get(brand::accent_stylesheet))
        .route("/assets/card-form.js", get(card_form_script))
        .route("/assets/cashier-page.js", get(cashier_page_script))
        .route("/assets/stripe-card.js", get(stripe_card_script))
        .route("/cdn/cashier.js", get(cashier_embed_script))
        .merge(dashboard::routes())
        .layer(middleware::from_fn_with_state(
            state.clone(),
            notice::render,
        ))
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

async fn stripe_card_script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../assets/stripe-card.js"),
    )
}

async fn cashier_page_script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../assets/cashier-page.js"),
    )
}

/// `cashier.js` for merchant pages that embed the cashier; loadable from any origin.
async fn cashier_embed_script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        include_str!("../../assets/cashier.js"),
    )
}
