//! A merchant's prices (DESIGN §15): `POST /prices`, `GET /prices`,
//! `GET|PATCH /prices/{priceId}`, over [`crate::services::catalog`]. A price's terms never
//! change: `PATCH` takes `active` alone.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CurrencyCode, IntervalCount, IntervalTypeName, TrialDays};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::catalog::{self, NewPrice, PriceChange, PriceFilters};
use crate::state::AppState;
use crate::store::prices::CatalogPrice;

/// Body of a price's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatePriceRequest {
    /// The active product it sells (`prod_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1)]
    pub product_id: Field<String>,
    /// ISO 4217 code.
    #[serde(default)]
    #[schema(required = true, value_type = CurrencyCode)]
    pub currency: Field<String>,
    /// The price of one unit per cycle: a decimal string > 0 with at most the currency's
    /// decimals, at most 15 digits in minor units.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "9.99", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    pub unit_amount: Field<String>,
    /// Daily, Weekly, Monthly or Annually, in any letter case.
    #[serde(default)]
    #[schema(required = true, value_type = IntervalTypeName)]
    pub interval_type: Field<String>,
    /// Units of intervalType between charges, default 1; a cycle is at most 3 years.
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<i64>,
    /// The free trial a membership made from this price starts with, in days.
    #[serde(default)]
    #[schema(value_type = Option<TrialDays>)]
    pub trial_days: Field<i64>,
}

/// Body of a price's change: `active` alone, since a price's terms never change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriceRequest {
    /// `false` archives the price (it sells no new membership), `true` restores it.
    #[serde(default)]
    #[schema(value_type = bool, required = false)]
    pub active: Field<bool>,
    #[serde(default)]
    #[schema(ignore)]
    product_id: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    currency: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    unit_amount: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    interval_type: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    interval_count: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    trial_days: Field<serde_json::Value>,
}

/// A price.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceRecord {
    /// `price_` + 24 base62 characters.
    pub price_id: String,
    /// The product it sells (`prod_…`).
    pub product_id: String,
    /// ISO 4217 code, uppercase.
    pub currency: String,
    /// The price of one unit per cycle, a decimal string.
    pub unit_amount: String,
    /// Daily, Weekly, Monthly or Annually.
    pub interval_type: String,
    /// Units of intervalType between charges.
    pub interval_count: u32,
    /// The free trial in days; null for none.
    pub trial_days: Option<u32>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC, the merchant's time).
    pub created_at: String,
}

impl From<CatalogPrice> for PriceRecord {
    fn from(price: CatalogPrice) -> Self {
        let unit_amount = Currency::parse(&price.currency).map_or_else(
            |_| price.unit_amount.to_string(),
            |c| format_amount(price.unit_amount, c),
        );
        PriceRecord {
            price_id: price.price_key,
            product_id: price.product_key,
            currency: price.currency,
            unit_amount,
            interval_type: price.cycle.interval_type.as_str().to_string(),
            interval_count: price.cycle.interval_count,
            trial_days: price.trial_days,
            active: price.active,
            created_at: format_utc(price.created_at),
        }
    }
}

/// Creates a price of an active product, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/prices",
    tag = "catalog",
    request_body = CreatePriceRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Price created", body = PriceRecord),
        (status = 400, description = "Validation failed: every failing field is listed (a productId that is not an active product of this merchant too)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_price(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreatePriceRequest>,
) -> Result<(StatusCode, Json<PriceRecord>), ApiError> {
    let new = NewPrice {
        product_id: body.product_id,
        currency: body.currency,
        unit_amount: body.unit_amount,
        interval_type: body.interval_type,
        interval_count: body.interval_count,
        trial_days: body.trial_days,
    };
    let price = catalog::create_price(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(price.into())))
}

/// Lists the merchant's prices, archived ones too unless `active` says otherwise, newest
/// first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/prices",
    tag = "catalog",
    params(PageParams, PriceFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of prices, newest first; an unknown productId gives an empty page", body = Page<PriceRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an active other than true or false, an empty filter, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_prices(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<PriceFilters>,
) -> Result<Json<Page<PriceRecord>>, ApiError> {
    let (rows, next) = catalog::price_page(&state, auth.merchant_id, page, filters).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(PriceRecord::from).collect(),
        next,
    )))
}

/// One price.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/prices/{priceId}",
    tag = "catalog",
    params(("priceId" = String, Path, description = "The price's id (price_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The price", body = PriceRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such price for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_price(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<PriceRecord>, ApiError> {
    let price = catalog::price(&state, auth.merchant_id, &key).await?;
    Ok(Json(price.into()))
}

/// Archives or restores a price (`active`); its terms never change.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/prices/{priceId}",
    tag = "catalog",
    params(("priceId" = String, Path, description = "The price's id (price_…)")),
    request_body = UpdatePriceRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The price as changed", body = PriceRecord),
        (status = 400, description = "Validation failed: active is not a boolean, or the body names a term (productId, currency, unitAmount, intervalType, intervalCount, trialDays), which cannot change", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such price for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_price(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdatePriceRequest>,
) -> Result<Json<PriceRecord>, ApiError> {
    let change = PriceChange {
        active: body.active,
        terms: vec![
            ("productId", body.product_id.is_given()),
            ("currency", body.currency.is_given()),
            ("unitAmount", body.unit_amount.is_given()),
            ("intervalType", body.interval_type.is_given()),
            ("intervalCount", body.interval_count.is_given()),
            ("trialDays", body.trial_days.is_given()),
        ],
    };
    let price = catalog::update_price(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(price.into()))
}
