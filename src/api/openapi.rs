//! The OpenAPI 3.1 document, generated from the handlers' annotations, and a human-readable
//! reference page rendered from that same document (no third-party scripts).

use axum::extract::State;
use axum::response::Html;
use axum::Json;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::problem::ApiError;
use super::{auth, customers, health, hosted_page};
use crate::app::AppState;

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
        hosted_page::create_session,
        health::healthz,
        health::readyz,
    ),
    modifiers(&BearerScheme),
    tags(
        (name = "auth", description = "Access tokens"),
        (name = "customers", description = "Customers of a merchant"),
        (name = "hosted page", description = "Cashier sessions for single orders"),
        (name = "operations", description = "Probes for operators"),
    )
)]
pub struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let mut http = Http::new(HttpAuthScheme::Bearer);
        http.bearer_format = Some("JWT".into());
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(http));
    }
}

/// `GET /openapi.json`.
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// `GET /docs`: the reference page.
pub async fn reference_page(State(state): State<AppState>) -> Result<Html<String>, ApiError> {
    let doc = serde_json::to_value(ApiDoc::openapi()).map_err(anyhow::Error::from)?;
    let html = state
        .templates
        .get_template("reference.html")
        .and_then(|t| t.render(minijinja::context! { doc => doc, public_url => state.public_url }))
        .map_err(anyhow::Error::from)?;
    Ok(Html(html))
}
