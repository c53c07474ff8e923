//! A merchant's prices (DESIGN §15): `POST /prices`, `GET /prices`,
//! `GET|PATCH /prices/{priceId}`, over [`crate::services::catalog`]. A price's terms never
//! change: `PATCH` takes `active` alone.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use recur_domain::usage::pricing::{MeteredPricing, Tier, TiersMode};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CurrencyCode, IntervalCount, IntervalTypeName, TrialDays};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::catalog::metered::{MeteredInput, TierInput};
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
    /// decimals, at most 15 digits in minor units. For a metered price: the price per unit of
    /// usage (or per started package), ≥ 0 with up to 12 decimal places; absent with `tiers`.
    #[serde(default)]
    #[schema(value_type = String, example = "9.99", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    pub unit_amount: Field<String>,
    /// Daily, Weekly, Monthly or Annually, in any letter case.
    #[serde(default)]
    #[schema(required = true, value_type = IntervalTypeName)]
    pub interval_type: Field<String>,
    /// Units of intervalType between charges, default 1; a cycle is at most 3 years.
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<i64>,
    /// The free trial a membership made from this price starts with, in days (not for a
    /// metered price).
    #[serde(default)]
    #[schema(value_type = Option<TrialDays>)]
    pub trial_days: Field<i64>,
    /// A metered price: the active meter (`mtr_…`) whose usage it bills in arrears.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1)]
    pub meter_id: Field<String>,
    /// A tiered metered price's tiers, `upTo` ascending, the last `null` (1–100).
    #[serde(default)]
    #[schema(value_type = Option<Vec<TierRecord>>)]
    pub tiers: Field<Vec<Field<TierRequest>>>,
    /// `graduated` (each tier prices its own units) or `volume` (the tier the quantity falls in
    /// prices every unit), with `tiers`.
    #[serde(default)]
    #[schema(value_type = Option<TiersModeName>)]
    pub tiers_mode: Field<String>,
    /// A metered price per started package: the units of one package (1–1,000,000,000).
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1_000_000_000)]
    pub package_size: Field<i64>,
}

/// A tier of a metered price as given.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TierRequest {
    #[serde(default)]
    up_to: Field<serde_json::Value>,
    #[serde(default)]
    unit_amount: Field<String>,
    #[serde(default)]
    flat_amount: Field<String>,
}

/// How a tiered price reads its tiers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TiersModeName {
    /// Each tier prices the units within it.
    Graduated,
    /// The tier the whole quantity falls in prices every unit.
    Volume,
}

/// A tier of a metered price.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TierRecord {
    /// The last quantity the tier covers, inclusive; null for the last tier.
    #[schema(value_type = Option<String>)]
    pub up_to: Option<String>,
    /// The price per unit within the tier, a decimal string.
    pub unit_amount: String,
    /// Added once when the quantity reaches into the tier (graduated) or lies in it (volume).
    pub flat_amount: String,
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
    #[serde(default)]
    #[schema(ignore)]
    meter_id: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    tiers: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    tiers_mode: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    package_size: Field<serde_json::Value>,
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
    /// The price of one unit per cycle, a decimal string; for a metered price the price per
    /// unit of usage or per package (absent for a tiered one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_amount: Option<String>,
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
    /// A metered price's meter (`mtr_…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter_id: Option<String>,
    /// A tiered metered price's tiers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<TierRecord>>,
    /// A tiered metered price's mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers_mode: Option<TiersModeName>,
    /// A package price's units per package.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package_size: Option<i64>,
}

impl From<CatalogPrice> for PriceRecord {
    fn from(price: CatalogPrice) -> Self {
        let fixed_amount = Currency::parse(&price.currency).map_or_else(
            |_| price.unit_amount.to_string(),
            |c| format_amount(price.unit_amount, c),
        );
        let mut record = PriceRecord {
            price_id: price.price_key,
            product_id: price.product_key,
            currency: price.currency,
            unit_amount: Some(fixed_amount),
            interval_type: price.cycle.interval_type.as_str().to_string(),
            interval_count: price.cycle.interval_count,
            trial_days: price.trial_days,
            active: price.active,
            created_at: format_utc(price.created_at),
            meter_id: None,
            tiers: None,
            tiers_mode: None,
            package_size: None,
        };
        if let Some(metered) = price.metered {
            record.meter_id = Some(metered.meter_key);
            match metered.pricing {
                MeteredPricing::PerUnit { unit_amount } => {
                    record.unit_amount = Some(unit_amount.normalize().to_string());
                }
                MeteredPricing::Package { size, unit_amount } => {
                    record.unit_amount = Some(unit_amount.normalize().to_string());
                    record.package_size = Some(size);
                }
                MeteredPricing::Tiered { mode, tiers } => {
                    record.unit_amount = None;
                    record.tiers_mode = Some(match mode {
                        TiersMode::Graduated => TiersModeName::Graduated,
                        TiersMode::Volume => TiersModeName::Volume,
                    });
                    record.tiers = Some(tiers.into_iter().map(TierRecord::from).collect());
                }
            }
        }
        record
    }
}

impl From<Tier> for TierRecord {
    fn from(tier: Tier) -> Self {
        TierRecord {
            up_to: tier.up_to.map(|n| n.normalize().to_string()),
            unit_amount: tier.unit_amount.normalize().to_string(),
            flat_amount: tier.flat_amount.normalize().to_string(),
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
        metered: MeteredInput {
            meter_id: body.meter_id,
            tiers: body.tiers.map(|tiers| {
                tiers
                    .into_iter()
                    .map(|tier| {
                        tier.map(|t| TierInput {
                            up_to: t.up_to,
                            unit_amount: t.unit_amount,
                            flat_amount: t.flat_amount,
                        })
                    })
                    .collect()
            }),
            tiers_mode: body.tiers_mode,
            package_size: body.package_size,
        },
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
            ("meterId", body.meter_id.is_given()),
            ("tiers", body.tiers.is_given()),
            ("tiersMode", body.tiers_mode.is_given()),
            ("packageSize", body.package_size.is_given()),
        ],
    };
    let price = catalog::update_price(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(price.into()))
}
