//! A merchant's tax rates (DESIGN §14): `POST /tax-rates`, `GET /tax-rates`,
//! `GET|PATCH /tax-rates/{taxRateId}`, over [`crate::services::tax_rates`].
//!
//! A rate's `percentage`, `inclusive` and `country` change only while no membership or invoice
//! carries it (409 after): a membership's invoices follow the rate it was sold with. `name` and
//! `active` change at any time; an archived rate (`active: false`) stays listed and on the
//! memberships that have it, but is given to no new one.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::tax_rates::{self, NewTaxRate, TaxRateChange};
use crate::state::AppState;
use crate::store::tax_rates::StoredRate;

/// Body of a rate's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaxRateRequest {
    /// What invoices call it, 1–100 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100, example = "VAT")]
    pub name: Field<String>,
    /// A decimal string from 0 to 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "19.0")]
    pub percentage: Field<String>,
    /// Contained in the price (`true`) or added to it (`false`).
    #[serde(default)]
    #[schema(required = true, value_type = bool)]
    pub inclusive: Field<bool>,
    /// ISO 3166-1 alpha-2 country; a rate of an EU member state is skipped under reverse charge.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "DE")]
    pub country: Field<String>,
}

/// Body of a rate's change; omitted fields stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaxRateRequest {
    /// New name.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100)]
    pub name: Field<String>,
    /// `false` archives the rate, `true` restores it.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub active: Field<bool>,
    /// New percentage: only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub percentage: Field<String>,
    /// New inclusiveness: only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub inclusive: Field<bool>,
    /// New country (`null` removes it): only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub country: Field<String>,
}

/// A tax rate.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaxRateRecord {
    /// `txr_` + 24 base62 characters.
    pub tax_rate_id: String,
    /// What invoices call it.
    pub name: String,
    /// Decimal string, 0–100.
    pub percentage: String,
    /// Contained in the price.
    pub inclusive: bool,
    /// ISO alpha-2 country, if any.
    pub country: Option<String>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC).
    pub created_at: String,
}

impl From<StoredRate> for TaxRateRecord {
    fn from(stored: StoredRate) -> Self {
        TaxRateRecord {
            tax_rate_id: stored.rate.tax_rate_id,
            name: stored.rate.name,
            percentage: stored.rate.percentage.to_string(),
            inclusive: stored.rate.inclusive,
            country: stored.rate.country,
            active: stored.active,
            created_at: format_utc(stored.created_at),
        }
    }
}

/// Creates a rate, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/tax-rates",
    tag = "taxes",
    request_body = CreateTaxRateRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Rate created", body = TaxRateRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateTaxRateRequest>,
) -> Result<(StatusCode, Json<TaxRateRecord>), ApiError> {
    let new = NewTaxRate {
        name: body.name,
        percentage: body.percentage,
        inclusive: body.inclusive,
        country: body.country,
    };
    let stored = tax_rates::create_tax_rate(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(stored.into())))
}

/// Lists the merchant's rates, archived ones too, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/tax-rates",
    tag = "taxes",
    params(PageParams),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of rates, newest first", body = Page<TaxRateRecord>),
        (status = 400, description = "A limit outside 1–100 or a cursor recur did not give for this list", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_tax_rates(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
) -> Result<Json<Page<TaxRateRecord>>, ApiError> {
    let (rows, next) = tax_rates::tax_rate_page(&state, auth.merchant_id, page).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(TaxRateRecord::from).collect(),
        next,
    )))
}

/// One rate.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/tax-rates/{taxRateId}",
    tag = "taxes",
    params(("taxRateId" = String, Path, description = "The rate's id (txr_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The rate", body = TaxRateRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rate for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<TaxRateRecord>, ApiError> {
    let stored = tax_rates::tax_rate(&state, auth.merchant_id, &key).await?;
    Ok(Json(stored.into()))
}

/// Changes a rate: `name` and `active` at any time; `percentage`, `inclusive` and `country`
/// only while no membership or invoice carries it.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/tax-rates/{taxRateId}",
    tag = "taxes",
    params(("taxRateId" = String, Path, description = "The rate's id (txr_…)")),
    request_body = UpdateTaxRateRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The rate as changed", body = TaxRateRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rate for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rate is used: its percentage, inclusiveness and country are fixed", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdateTaxRateRequest>,
) -> Result<Json<TaxRateRecord>, ApiError> {
    let change = TaxRateChange {
        name: body.name,
        active: body.active,
        percentage: body.percentage,
        inclusive: body.inclusive,
        country: body.country,
    };
    let stored = tax_rates::update_tax_rate(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(stored.into()))
}
