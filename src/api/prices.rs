//! A merchant's prices (DESIGN §15): `POST /prices`, `GET /prices`,
//! `GET|PATCH /prices/{priceId}`. A price is what one unit of an active product costs per
//! billing cycle, in one currency, with an optional free trial. Its terms never change: `PATCH`
//! takes `active` alone (archive it and create another price instead), so every membership made
//! from a price was sold on the terms the price still shows.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership::trial_days;
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use recur_domain::validation::FieldErrors;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CurrencyCode, IntervalCount, IntervalTypeName, TrialDays};
use super::membership_fields::{amount, currency, interval_count};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::{optional_flag, refuse_given, required_text, Field};
use crate::http::pagination::{flag, text, Given, ListQuery, ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::prices::{self, CatalogPrice, Filter, NewPrice};
use crate::store::products::{self, Product};

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

/// Filters of `GET /prices`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PriceFilters {
    /// Only the prices of this product (`prod_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    product_id: Field<Given>,
    /// Only active prices (`true`) or only archived ones (`false`).
    #[serde(default)]
    #[param(value_type = Option<bool>)]
    active: Field<Given>,
}

impl PriceFilters {
    /// The prices of the product `product_key`, archived ones too.
    pub fn of_product(product_key: &str) -> Self {
        Self {
            product_id: Field::Present(Given(product_key.to_string())),
            active: Field::Absent,
        }
    }
}

/// `intervalType` and `intervalCount` (default 1) as a cycle of at most three years; a count
/// the type does not allow is reported under `intervalCount`.
fn cycle(
    interval_type: Field<String>,
    count: Field<i64>,
    errors: &mut FieldErrors,
) -> Option<BillingCycle> {
    let interval_type = required_text(interval_type, "intervalType", errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let count = match count.optional("intervalCount", errors) {
        Some(n) => errors.check("intervalCount", interval_count(&n.into()))?,
        None => 1,
    };
    let cycle = BillingCycle::new(interval_type?, count).map_err(|e| e.to_string());
    errors.check("intervalCount", cycle)
}

/// The product a new price may sell, or why `product` (as read for `productId`) cannot.
fn usable(product: Option<Product>) -> Result<Product, &'static str> {
    match product {
        None => Err("does not match a product of this merchant"),
        Some(p) if !p.active => Err("is an archived product: restore it or use an active one"),
        Some(p) => Ok(p),
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
    let price = create(&state, auth.merchant_id, body).await?;
    Ok((StatusCode::CREATED, Json(price.into())))
}

/// Creates the price `body` describes for an active product of the merchant, active, or lists
/// every failing field: `POST /prices` and the dashboard's catalog page.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    body: CreatePriceRequest,
) -> Result<CatalogPrice, ApiError> {
    let mut errors = FieldErrors::new();
    let product_key = body.product_id.required("productId", &mut errors);
    let currency = currency(body.currency, "currency", &mut errors);
    let unit_amount = amount(body.unit_amount, "unitAmount", currency, &mut errors);
    let cycle = cycle(body.interval_type, body.interval_count, &mut errors);
    let trial = body
        .trial_days
        .optional("trialDays", &mut errors)
        .and_then(|days| errors.check("trialDays", trial_days(days)));
    let Some(product_key) = product_key else {
        return Err(ApiError::Validation(errors));
    };
    let (Some(currency), Some(unit_amount), Some(cycle), true) =
        (currency, unit_amount, cycle, errors.is_empty())
    else {
        // The product is judged too, so that every failing field is listed; nothing is written.
        let product = products::get(state.store.pool(), merchant_id, &product_key).await?;
        if let Err(refusal) = usable(product) {
            errors.add("productId", refusal);
        }
        return Err(ApiError::Validation(errors));
    };
    let new = NewPrice {
        price_key: ids::price_key(),
        currency: currency.code().to_string(),
        unit_amount,
        cycle,
        trial_days: trial,
    };
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let backend = state.store.backend();
    let product = products::locked(&mut tx, backend, merchant_id, &product_key).await?;
    let product = usable(product).map_err(|refusal| ApiError::invalid("productId", refusal))?;
    let price = prices::insert(&mut tx, merchant_id, &product, &new, now).await?;
    tx.commit().await?;
    Ok(price)
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
    let (rows, next) = price_page(&state, auth.merchant_id, page, filters).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(PriceRecord::from).collect(),
        next,
    )))
}

/// The page of the merchant's prices that `page` and `filters` ask for, and the cursor of the
/// next: `GET /prices` and a product's page in the dashboard.
pub async fn price_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: PriceFilters,
) -> Result<(Vec<CatalogPrice>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let filter = Filter {
        product_key: text(filters.product_id, "productId", &mut errors),
        active: flag(filters.active, "active", &mut errors),
    };
    let scope = ListScope::new(
        "prices",
        merchant_id,
        &[
            ("productId", filter.product_key.as_deref()),
            (
                "active",
                filter.active.map(|a| if a { "true" } else { "false" }),
            ),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = prices::page(state.store.pool(), merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |p| p.id))
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
    let price = prices::by_key(state.store.pool(), auth.merchant_id, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
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
    let mut errors = FieldErrors::new();
    let active = optional_flag(body.active, "active", &mut errors);
    let terms = [
        ("productId", body.product_id.is_given()),
        ("currency", body.currency.is_given()),
        ("unitAmount", body.unit_amount.is_given()),
        ("intervalType", body.interval_type.is_given()),
        ("intervalCount", body.interval_count.is_given()),
        ("trialDays", body.trial_days.is_given()),
    ];
    refuse_given(&terms, TERMS_ARE_FIXED, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let price = match active {
        None => prices::by_key(state.store.pool(), auth.merchant_id, &key)
            .await?
            .ok_or(ApiError::NotFound)?,
        Some(active) => set_active(&state, auth.merchant_id, &key, active).await?,
    };
    Ok(Json(price.into()))
}

/// Archives (`false`) or restores the merchant's price `key`: the price as changed, or not
/// found. `PATCH /prices/{priceId}` and the dashboard's catalog page.
pub async fn set_active(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    active: bool,
) -> Result<CatalogPrice, ApiError> {
    let mut tx = state.store.begin().await?;
    if !prices::set_active(&mut tx, merchant_id, key, active).await? {
        return Err(ApiError::NotFound);
    }
    let price = prices::by_key(&mut *tx, merchant_id, key).await?;
    tx.commit().await?;
    price.ok_or(ApiError::NotFound)
}

/// Why a change of a price's term is refused.
const TERMS_ARE_FIXED: &str = "cannot change: a price's terms are fixed once created; archive \
     it (active: false) and create another price";
