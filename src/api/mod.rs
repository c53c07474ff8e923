//! The merchant-facing HTTP API: thin handlers that read a request into a service's input
//! ([`crate::services`]), call it and render the record; every failure is a problem document
//! ([`problem`]).

pub mod api_keys;
pub mod auth;
pub mod cashier_orders;
pub mod cashier_sessions;
pub mod coupons;
pub mod customers;
pub mod endpoint_deliveries;
pub mod events;
pub mod extract;
pub mod field_schemas;
pub mod health;
pub mod idempotency;
pub mod invoice_records;
pub mod invoices;
pub mod lists;
pub mod membership_fields;
pub mod membership_pauses;
pub mod membership_records;
pub mod membership_update;
pub mod memberships;
pub mod merchant_secret;
pub mod merchant_settings;
pub mod meters;
pub mod metrics;
pub mod openapi;
pub mod page;
pub mod payment_methods;
pub mod prices;
pub mod problem;
pub mod processors;
pub mod products;
pub mod read_only_keys;
pub mod sandbox;
pub mod sepa;
pub mod sessions;
pub mod stripe_webhooks;
pub mod tax_rates;
pub mod usage;
pub mod webhook_endpoints;

use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post, put};
use axum::{middleware, Router};
use tower_http::catch_panic::CatchPanicLayer;

use crate::http::{client_address, nosniff, nul_text, trace};
use crate::state::AppState;
use problem::ApiError;

/// Every route recur serves: the API's, and `pages` (the hosted pages' routes, which the caller
/// builds), under the middleware they all share.
pub fn router(state: AppState, pages: Router<AppState>) -> Router {
    let subscriptions_v1 = Router::new()
        .route("/auth", post(auth::authenticate))
        .route("/customer", post(customers::create_customer))
        .route("/customer/phone", put(customers::update_phone))
        .route("/customer/{customer_key}", get(customers::get_customer))
        .route(
            "/customer/{customer_key}/payment-method",
            get(payment_methods::get_payment_method).post(payment_methods::attach_payment_method),
        )
        .route(
            "/membership",
            post(memberships::create_membership).put(membership_update::update_membership),
        )
        .route(
            "/membership/{membership_key}",
            get(memberships::get_membership),
        )
        .route(
            "/membership/{membership_key}/events",
            get(events::list_events),
        )
        .route(
            "/membership/{membership_key}/pause",
            post(membership_pauses::pause_membership),
        )
        .route(
            "/membership/{membership_key}/resume",
            post(membership_pauses::resume_membership),
        )
        .route(
            "/membership/{membership_key}/pending-update",
            delete(membership_update::cancel_pending_update),
        )
        .route("/events/{action_id}/resend", post(events::resend_event))
        .route("/invoice/{invoice_key}", get(invoices::get_invoice))
        .route(
            "/invoice/{invoice_key}/refund",
            post(invoices::refund_invoice),
        )
        .route(
            "/membership/cancel/{membership_key}",
            post(memberships::cancel_membership),
        )
        .route("/test-helpers/payment-method", post(sandbox::attach_card))
        .route(
            "/test-helpers/membership/{membership_key}/pay",
            post(sandbox::pay_membership),
        )
        .route("/checkout/session", post(sessions::create_checkout_session))
        .route("/portal/session", post(sessions::create_portal_session))
        .route("/customers", get(lists::list_customers))
        .route("/memberships", get(lists::list_memberships))
        .route("/invoices", get(lists::list_invoices))
        .route("/events", get(lists::list_events))
        .route("/test-clock", get(sandbox::get_clock))
        .route("/test-clock/advance", post(sandbox::advance_clock))
        .route(
            "/api-keys",
            post(api_keys::create_api_key).get(api_keys::list_api_keys),
        )
        .route("/api-keys/{api_key_id}", delete(api_keys::revoke_api_key))
        .route(
            "/merchant/settings",
            get(merchant_settings::get_settings).put(merchant_settings::update_settings),
        )
        .route(
            "/tax-rates",
            post(tax_rates::create_tax_rate).get(tax_rates::list_tax_rates),
        )
        .route(
            "/tax-rates/{tax_rate_id}",
            get(tax_rates::get_tax_rate).patch(tax_rates::update_tax_rate),
        )
        .route(
            "/products",
            post(products::create_product).get(products::list_products),
        )
        .route(
            "/products/{product_id}",
            get(products::get_product).patch(products::update_product),
        )
        .route(
            "/prices",
            post(prices::create_price).get(prices::list_prices),
        )
        .route(
            "/prices/{price_id}",
            get(prices::get_price).patch(prices::update_price),
        )
        .route(
            "/coupons",
            post(coupons::create_coupon).get(coupons::list_coupons),
        )
        .route(
            "/meters",
            post(meters::create_meter).get(meters::list_meters),
        )
        .route(
            "/meters/{meter_id}",
            get(meters::get_meter).patch(meters::update_meter),
        )
        .route(
            "/usage-events",
            post(usage::record_events).layer(DefaultBodyLimit::max(usage::MAX_EVENTS_BODY_BYTES)),
        )
        .route(
            "/membership/{membership_key}/usage",
            get(usage::membership_usage),
        )
        .route(
            "/membership/{membership_key}/upcoming-invoice",
            get(usage::upcoming_invoice),
        )
        .route(
            "/sepa/batches",
            post(sepa::create_batch).get(sepa::list_batches),
        )
        .route("/sepa/batches/{batch_id}", get(sepa::get_batch))
        .route("/sepa/returns", post(sepa::apply_returns))
        .route(
            "/sepa/batches/{batch_id}/pain.008",
            get(sepa::batch_document),
        )
        .route(
            "/coupons/{coupon_id}",
            get(coupons::get_coupon).patch(coupons::update_coupon),
        )
        .route(
            "/processors",
            post(processors::connect_processor).get(processors::list_processors),
        )
        .route(
            "/processors/{processor_id}",
            get(processors::get_processor)
                .patch(processors::update_processor)
                .delete(processors::delete_processor),
        )
        .route(
            "/webhook-endpoints",
            post(webhook_endpoints::create_endpoint).get(webhook_endpoints::list_endpoints),
        )
        .route(
            "/webhook-endpoints/{endpoint_id}",
            get(webhook_endpoints::get_endpoint)
                .patch(webhook_endpoints::update_endpoint)
                .delete(webhook_endpoints::delete_endpoint),
        )
        .route(
            "/webhook-endpoints/{endpoint_id}/rotate-secret",
            post(webhook_endpoints::rotate_secret),
        )
        .route(
            "/webhook-endpoints/{endpoint_id}/deliveries",
            get(endpoint_deliveries::list_deliveries),
        )
        .route(
            "/webhook-endpoints/{endpoint_id}/test",
            post(endpoint_deliveries::send_test),
        )
        .layer(middleware::from_fn_with_state(
            state.clone(),
            idempotency::idempotency,
        ));
    // The merchant API: what API keys are accepted by, and a read key held to reading.
    let merchant_api = Router::new()
        .nest("/api/subscriptions/v1", subscriptions_v1)
        .route(
            "/api/payment/hosted-page",
            post(cashier_sessions::create_session),
        )
        .route("/api/payment/refund", post(cashier_orders::refund))
        .route("/api/payment/payout", post(cashier_orders::payout))
        .route("/api/webhook-resync", post(cashier_orders::resync))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            read_only_keys::read_only_keys,
        ));
    let router = Router::new()
        .merge(merchant_api)
        .merge(pages)
        .route("/openapi.json", get(openapi::document))
        .route("/docs", get(openapi::reference_page))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route(
            "/webhooks/stripe/{processor_id}",
            post(stripe_webhooks::receive),
        );
    // With RECUR_METRICS_LISTEN, /metrics lives on its own listener ([`metrics_router`]).
    let router = if state.config.metrics.listen.is_none() {
        router.route("/metrics", get(metrics::metrics))
    } else {
        router
    };
    router
        .fallback(|| async { ApiError::NotFound })
        .layer(middleware::from_fn(nul_text::refuse_in_uri))
        .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::record,
        ))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::Internal(anyhow::anyhow!("a request handler panicked")).into_response_boxed()
        }))
        .layer(middleware::from_fn(trace::trace_requests))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            client_address::resolve,
        ))
        .layer(middleware::map_response(nosniff::nosniff))
        .with_state(state)
}

/// The router of the separate metrics listener (`RECUR_METRICS_LISTEN`): `/metrics` only.
pub fn metrics_router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(metrics::metrics))
        .fallback(|| async { ApiError::NotFound })
        .layer(middleware::from_fn(trace::trace_requests))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            client_address::resolve,
        ))
        .layer(middleware::map_response(nosniff::nosniff))
        .with_state(state)
}

impl ApiError {
    fn into_response_boxed(self) -> axum::response::Response {
        axum::response::IntoResponse::into_response(self)
    }
}
