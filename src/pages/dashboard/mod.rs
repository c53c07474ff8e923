//! The merchant dashboard (DESIGN §13): server-rendered pages for a merchant's staff, in the
//! hosted pages' style and under their rules (the same policy headers, CSRF tokens and
//! strings; no script). A staff member logs in with the merchant's user name and password
//! ([`login`]) and gets a session ([`staff`]); every other page redirects to the login without
//! one. The pages read through the same store functions and list code as the JSON API.

pub mod actions;
pub mod api_keys;
pub mod catalog;
pub mod chart;
pub mod confirm;
pub mod coupons;
pub mod customers;
pub mod fields;
pub mod invoices;
pub mod lists;
pub mod login;
pub mod memberships;
pub mod overview;
pub mod pauses;
pub mod processors;
pub mod sandbox;
pub mod sepa;
pub mod sepa_processor;
pub mod sepa_returns;
pub mod settings;
pub mod staff;
pub mod webhook_endpoint;
pub mod webhooks;

use std::collections::BTreeMap;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use minijinja::{context, Value};

use super::csrf;
use super::notice;
use super::render::{page, Framing};
use crate::pages::failure::PageError;
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::merchants::Mode;
use staff::Staff;

/// The dashboard's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard", get(home))
        .route("/dashboard/login", get(login::form).post(login::submit))
        .route("/dashboard/logout", post(login::logout))
        .route("/dashboard/overview", get(overview::show))
        .route(
            "/dashboard/overview/revenue.svg",
            get(overview::revenue_chart),
        )
        .route("/dashboard/memberships", get(lists::memberships))
        .route("/dashboard/invoices", get(lists::invoices))
        .route("/dashboard/events", get(lists::events))
        .route("/dashboard/sandbox", get(sandbox::show))
        .route("/dashboard/sandbox/clock", post(sandbox::advance_clock))
        .route("/dashboard/sandbox/card", post(sandbox::attach_card))
        .route("/dashboard/sandbox/pay", post(sandbox::pay))
        .route("/dashboard/customers", get(customers::list))
        .route("/dashboard/invoices/{invoice_key}", get(invoices::show))
        .route("/dashboard/invoices/{invoice_key}/pdf", get(invoices::pdf))
        .route(
            "/dashboard/credit-notes/{key}/pdf",
            get(invoices::credit_note_pdf),
        )
        .route(
            "/dashboard/api-keys",
            get(api_keys::list).post(api_keys::create),
        )
        .route(
            "/dashboard/api-keys/{api_key_id}/revoke",
            get(api_keys::confirm_revoke).post(api_keys::revoke),
        )
        .route("/dashboard/catalog", get(catalog::list))
        .route("/dashboard/catalog/products", post(catalog::create_product))
        .route(
            "/dashboard/catalog/products/{product_id}",
            get(catalog::show_product),
        )
        .route(
            "/dashboard/catalog/products/{product_id}/prices",
            post(catalog::create_price),
        )
        .route(
            "/dashboard/catalog/products/{product_id}/active",
            post(catalog::set_product_active),
        )
        .route(
            "/dashboard/catalog/prices/{price_id}/active",
            post(catalog::set_price_active),
        )
        .route(
            "/dashboard/coupons",
            get(coupons::list).post(coupons::create),
        )
        .route(
            "/dashboard/coupons/{coupon_id}/active",
            post(coupons::set_active),
        )
        .route(
            "/dashboard/settings",
            get(settings::show).post(settings::save),
        )
        .route(
            "/dashboard/webhooks",
            get(webhooks::list).post(webhooks::create),
        )
        .route(
            "/dashboard/webhooks/{endpoint_id}",
            get(webhook_endpoint::show),
        )
        .route(
            "/dashboard/webhooks/{endpoint_id}/enabled",
            post(webhook_endpoint::set_enabled),
        )
        .route(
            "/dashboard/webhooks/{endpoint_id}/test",
            post(webhook_endpoint::send_test),
        )
        .route(
            "/dashboard/webhooks/{endpoint_id}/rotate",
            get(webhook_endpoint::confirm_rotate).post(webhook_endpoint::rotate),
        )
        .route(
            "/dashboard/webhooks/{endpoint_id}/delete",
            get(webhook_endpoint::confirm_delete).post(webhook_endpoint::delete),
        )
        .route(
            "/dashboard/processors",
            get(processors::list).post(processors::connect),
        )
        .route("/dashboard/processors/sepa", post(sepa_processor::connect))
        .route(
            "/dashboard/processors/{processor_id}/default",
            post(processors::make_default),
        )
        .route(
            "/dashboard/processors/{processor_id}/webhook-secret",
            post(processors::replace_webhook_secret),
        )
        .route(
            "/dashboard/processors/{processor_id}/keys",
            post(processors::change_keys),
        )
        .route(
            "/dashboard/processors/{processor_id}/remove",
            get(processors::confirm_remove).post(processors::remove),
        )
        .route("/dashboard/sepa", get(sepa::show))
        .route("/dashboard/sepa/batches", post(sepa::create_batch))
        .route(
            "/dashboard/sepa/batches/{batch_id}/pain.008",
            get(sepa::download),
        )
        .route(
            "/dashboard/sepa/returns",
            post(sepa_returns::upload).layer(DefaultBodyLimit::max(sepa_returns::MAX_UPLOAD_BYTES)),
        )
        .route("/dashboard/customers/{customer_key}", get(customers::show))
        .route(
            "/dashboard/memberships/{membership_key}",
            get(memberships::show),
        )
        .route(
            "/dashboard/memberships/{membership_key}/cancel",
            get(actions::confirm_cancel).post(actions::cancel),
        )
        .route(
            "/dashboard/memberships/{membership_key}/pause",
            get(pauses::confirm_pause).post(pauses::pause),
        )
        .route(
            "/dashboard/memberships/{membership_key}/resume",
            get(pauses::confirm_resume).post(pauses::resume),
        )
        .route(
            "/dashboard/memberships/{membership_key}/pending-update",
            get(pauses::confirm_drop_change).post(pauses::drop_change),
        )
        .route(
            "/dashboard/memberships/{membership_key}/invoices/{invoice_key}/refund",
            get(actions::confirm_refund).post(actions::refund),
        )
        .route(
            "/dashboard/memberships/{membership_key}/events/{action_id}/resend",
            get(actions::confirm_resend).post(actions::resend),
        )
}

/// `GET /dashboard`: the overview.
async fn home() -> Response {
    Redirect::to("/dashboard/overview").into_response()
}

/// A page of the dashboard inside its frame: the merchant's display name, the navigation
/// (`nav` names the current section) and the log-out form with its token.
fn framed(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    template: &str,
    nav: &str,
    context: Value,
) -> Result<Response, PageError> {
    framed_with_status(state, staff, t, StatusCode::OK, template, nav, context)
}

/// [`framed`] with another status than 200: a form refused.
fn framed_with_status(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    template: &str,
    nav: &str,
    context: Value,
) -> Result<Response, PageError> {
    page(
        state,
        status,
        template,
        context! {
            t => t,
            nav => nav,
            sandbox => staff.merchant.mode == Mode::Sandbox,
            csrf_token => csrf::form_token(&state.keys, &staff.token),
            ..context
        },
        Some(&staff.brand),
        Framing::Deny,
    )
}

/// The page for `result` when it failed on the request's parameters (a cursor recur did not
/// give, a limit out of range): the 400 page, never a problem document or a 500.
fn or_bad_request<T>(
    state: &AppState,
    t: &BTreeMap<String, String>,
    result: Result<T, ServiceError>,
) -> Result<Result<T, Response>, PageError> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(ServiceError::Validation(_)) => notice::bad_request(state, t).map(Err),
        Err(other) => Err(other.into()),
    }
}

/// A query string without its empty parameters: a search form's blank field means "not
/// filtered", where the API's lists refuse an empty filter.
fn without_empty(query: Option<&str>) -> String {
    let pairs = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .filter(|(_, value)| !value.is_empty());
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The value of the parameter `name` in `query` (its first, if given more than once: the page
/// then is the 400 page anyway), for a form and the next page's link.
pub(super) fn param(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// `path` with the query parameters `pairs` that have a value.
fn link(path: &str, pairs: &[(&str, Option<&str>)]) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().filter_map(|(k, v)| v.map(|v| (*k, v))))
        .finish();
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_parameters_are_dropped_and_links_encode_theirs() {
        assert_eq!(without_empty(Some("q=&cursor=abc&email=")), "cursor=abc");
        assert_eq!(without_empty(None), "");
        assert_eq!(
            link(
                "/dashboard/customers",
                &[("q", Some("a b&c")), ("cursor", None)]
            ),
            "/dashboard/customers?q=a+b%26c"
        );
        assert_eq!(link("/x", &[("q", None)]), "/x");
    }
}
