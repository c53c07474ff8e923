//! The OpenAPI 3.1 document, generated from the handlers' annotations, and a human-readable
//! reference page rendered from that same document (no third-party scripts).

use axum::extract::State;
use axum::response::Html;
use axum::Json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::link::Link;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::Ref;
use utoipa::openapi::RefOr;
use utoipa::{Modify, OpenApi};

use super::problem::ApiError;
use super::{
    api_keys, auth, cashier_orders, cashier_sessions, coupons, customers, endpoint_deliveries,
    events, health, invoices, lists, membership_pauses, membership_update, memberships,
    merchant_settings, meters, payment_methods, prices, processors, products, sandbox, sepa,
    sessions, stripe_webhooks, tax_rates, usage, webhook_endpoints,
};
use crate::state::AppState;

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "recur",
        description = "Subscription billing and hosted payments. Every error is application/problem+json.",
    ),
    paths(
        auth::authenticate,
        customers::create_customer,
        customers::get_customer,
        customers::update_phone,
        memberships::create_membership,
        memberships::get_membership,
        membership_update::update_membership,
        memberships::cancel_membership,
        membership_pauses::pause_membership,
        membership_pauses::resume_membership,
        membership_update::cancel_pending_update,
        sessions::create_checkout_session,
        sessions::create_portal_session,
        events::list_events,
        events::resend_event,
        invoices::get_invoice,
        invoices::refund_invoice,
        lists::list_customers,
        lists::list_memberships,
        lists::list_invoices,
        lists::list_events,
        sandbox::attach_card,
        sandbox::pay_membership,
        sandbox::advance_clock,
        sandbox::get_clock,
        api_keys::create_api_key,
        api_keys::list_api_keys,
        api_keys::revoke_api_key,
        merchant_settings::get_settings,
        merchant_settings::update_settings,
        tax_rates::create_tax_rate,
        tax_rates::list_tax_rates,
        tax_rates::get_tax_rate,
        tax_rates::update_tax_rate,
        products::create_product,
        products::list_products,
        products::get_product,
        products::update_product,
        prices::create_price,
        prices::list_prices,
        prices::get_price,
        prices::update_price,
        meters::create_meter,
        meters::list_meters,
        meters::get_meter,
        meters::update_meter,
        usage::record_events,
        usage::membership_usage,
        usage::upcoming_invoice,
        sepa::create_batch,
        sepa::list_batches,
        sepa::get_batch,
        sepa::batch_document,
        sepa::apply_returns,
        coupons::create_coupon,
        coupons::list_coupons,
        coupons::get_coupon,
        coupons::update_coupon,
        webhook_endpoints::create_endpoint,
        webhook_endpoints::list_endpoints,
        webhook_endpoints::get_endpoint,
        webhook_endpoints::update_endpoint,
        webhook_endpoints::delete_endpoint,
        webhook_endpoints::rotate_secret,
        processors::list_processors,
        stripe_webhooks::receive,
        payment_methods::attach_payment_method,
        payment_methods::get_payment_method,
        processors::connect_processor,
        processors::get_processor,
        processors::update_processor,
        processors::delete_processor,
        endpoint_deliveries::list_deliveries,
        endpoint_deliveries::send_test,
        cashier_sessions::create_session,
        cashier_orders::refund,
        cashier_orders::payout,
        cashier_orders::resync,
        health::healthz,
        health::readyz,
    ),
    modifiers(&BearerScheme, &CommonResponses, &ResponseLinks),
    tags(
        (name = "auth", description = "Access tokens"),
        (name = "customers", description = "Customers of a merchant"),
        (name = "memberships", description = "Subscriptions: create, read, update with proration or at the next period, pause and resume, cancel"),
        (name = "sessions", description = "Links to the hosted checkout and the customer portal"),
        (name = "invoices", description = "Invoices and refunds of their payments"),
        (name = "events", description = "Webhook events and their delivery attempts"),
        (name = "api-keys", description = "Long-lived keys for the API, read-only or full"),
        (name = "merchant", description = "The merchant's settings: name, legal details, support e-mail, branding"),
        (name = "taxes", description = "Tax rates: exclusive or inclusive, archivable, fixed once used"),
        (name = "catalog", description = "Products, their prices and coupons: archivable, their terms fixed once created"),
        (name = "webhook-endpoints", description = "Registered webhook destinations: filters, secrets and rotation, attempt log, test events"),
        (name = "processors", description = "Payment processors: the sandbox set, connected Stripe accounts and SEPA processors, the default card processor"),
        (name = "usage", description = "Meters and usage events: usage billed in arrears by metered prices"),
        (name = "sepa", description = "SEPA Direct Debit collection files (pain.008) of the merchant's own bank account"),
        (name = "sandbox", description = "Test cards and test clocks for sandbox merchants"),
        (name = "cashier", description = "Cashier sessions for single orders"),
        (name = "operations", description = "Probes for operators"),
    )
)]
pub struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.bearer_format = Some("JWT".into());
        http.description = Some(
            "An access token from POST /auth, or an API key (rk_…). A read key may only GET."
                .into(),
        );
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(http));
    }
}

/// Documents, in one place, the failures any operation can answer with: 500 everywhere; 413 and
/// 415 where there is a body; 422 (`Idempotency-Key` reuse) on authenticated POST and PUT; 403
/// (a read API key) on every write of the merchant API.
struct CommonResponses;

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let idempotent_path =
                path.starts_with("/api/subscriptions/v1/") && !path.ends_with("/auth");
            let merchant_api = path.starts_with("/api/");
            // (takes an Idempotency-Key, changes something, the operation)
            let operations = [
                (false, false, item.get.as_mut()),
                (true, true, item.post.as_mut()),
                (true, true, item.put.as_mut()),
                (false, true, item.delete.as_mut()),
                (true, true, item.patch.as_mut()),
            ];
            for (idempotent, writes, operation) in operations {
                let Some(operation) = operation else { continue };
                let mut add = |status: &str, description: &str| {
                    operation
                        .responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| problem_response(description).into());
                };
                add("500", "Unexpected error; nothing internal is revealed");
                if operation.request_body.is_some() {
                    add("413", "Body larger than 256 KiB");
                    add("415", "Body is not application/json");
                }
                if idempotent && idempotent_path {
                    add("422", "Idempotency-Key reused with a different request");
                }
                if writes && merchant_api {
                    add("403", "A read API key was sent: it may only GET");
                }
            }
        }
    }
}

/// OpenAPI links from what a create returns to the operations that take its key, so that clients
/// (and schemathesis' stateful phase) can follow a customer, membership or API key from its
/// creation.
struct ResponseLinks;

impl ResponseLinks {
    /// (creating path, the key in its answer and the path parameter that takes it, the
    /// operations that take it).
    const FOLLOW: [(&'static str, &'static str, &'static [&'static str]); 9] = [
        (
            "/api/subscriptions/v1/customer",
            "customerKey",
            &["get_customer"],
        ),
        (
            "/api/subscriptions/v1/membership",
            "membershipKey",
            &[
                "get_membership",
                "list_events",
                "cancel_membership",
                "pay_membership",
                "membership_usage",
                "upcoming_invoice",
            ],
        ),
        (
            "/api/subscriptions/v1/products",
            "productId",
            &["get_product", "update_product"],
        ),
        (
            "/api/subscriptions/v1/prices",
            "priceId",
            &["get_price", "update_price"],
        ),
        (
            "/api/subscriptions/v1/meters",
            "meterId",
            &["get_meter", "update_meter"],
        ),
        (
            "/api/subscriptions/v1/coupons",
            "couponId",
            &["get_coupon", "update_coupon"],
        ),
        (
            "/api/subscriptions/v1/sepa/batches",
            "batchId",
            &["get_batch", "batch_document"],
        ),
        (
            "/api/subscriptions/v1/api-keys",
            "apiKeyId",
            &["revoke_api_key"],
        ),
        (
            "/api/subscriptions/v1/webhook-endpoints",
            "endpointId",
            &[
                "get_endpoint",
                "update_endpoint",
                "delete_endpoint",
                "rotate_secret",
                "list_deliveries",
                "send_test",
            ],
        ),
    ];
}

impl Modify for ResponseLinks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, key, operations) in Self::FOLLOW {
            let Some(create) = openapi
                .paths
                .paths
                .get_mut(path)
                .and_then(|item| item.post.as_mut())
            else {
                continue;
            };
            for status in ["200", "201"] {
                let Some(RefOr::T(response)) = create.responses.responses.get_mut(status) else {
                    continue;
                };
                for operation in operations {
                    let link = Link::builder()
                        .operation_id(*operation)
                        .parameter(key, format!("$response.body#/{key}"))
                        .build();
                    response.links.insert(operation.to_string(), link.into());
                }
            }
        }
    }
}

fn problem_response(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}

/// The document as served. utoipa 5.5 writes a link's fields in Rust's spelling
/// (`operation_id`, `operation_ref`, `request_body`); OpenAPI's are camelCase, so they are renamed
/// here, in the one place the document is turned into JSON.
fn served_document() -> Result<serde_json::Value, ApiError> {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).map_err(anyhow::Error::from)?;
    let links = doc["paths"]
        .as_object_mut()
        .into_iter()
        .flat_map(|paths| paths.values_mut())
        .filter_map(|item| item.as_object_mut())
        .flat_map(|item| item.values_mut())
        .filter_map(|operation| operation["responses"].as_object_mut())
        .flat_map(|responses| responses.values_mut())
        .filter_map(|response| response.get_mut("links")?.as_object_mut())
        .flat_map(|links| links.values_mut())
        .filter_map(|link| link.as_object_mut());
    for link in links {
        for (rust, openapi) in [
            ("operation_id", "operationId"),
            ("operation_ref", "operationRef"),
            ("request_body", "requestBody"),
        ] {
            if let Some(value) = link.remove(rust) {
                link.insert(openapi.to_string(), value);
            }
        }
    }
    Ok(doc)
}

/// `GET /openapi.json`.
pub async fn document() -> Result<Json<serde_json::Value>, ApiError> {
    served_document().map(Json)
}

/// `GET /docs`: the reference page.
pub async fn reference_page(State(state): State<AppState>) -> Result<Html<String>, ApiError> {
    let doc = served_document()?;
    let html = state
        .templates
        .get_template("reference.html")
        .and_then(|t| t.render(minijinja::context! { doc => doc, public_url => state.public_url }))
        .map_err(anyhow::Error::from)?;
    Ok(Html(html))
}
