//! A merchant's coupons (DESIGN §15): `POST /coupons`, `GET /coupons`,
//! `GET|PATCH /coupons/{couponId}`. A coupon takes a percentage or an amount (in one currency)
//! off a membership's period invoices, for one, several or every period; it may be limited in
//! redemptions and expire. Its terms never change: `PATCH` takes `active` alone (archive it and
//! create another coupon, with another code). A code is the merchant's in any letter case: a
//! second coupon with it is a 409, archived or not.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::coupon::{self as rules, CouponDuration, CouponOff};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use recur_domain::validation::FieldErrors;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{
    CouponCode, CouponDurationName, CurrencyCode, DurationInCycles, MaxRedemptions,
};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::{optional_flag, refuse_given, required_text, Field};
use crate::http::pagination::{ListQuery, ListScope, PageParams};
use crate::ids;
use crate::services::fields::{amount, currency};
use crate::state::AppState;
use crate::store::coupons::{self, Coupon, NewCoupon};

/// Body of a coupon's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCouponRequest {
    /// What customers type, in any letter case (answered uppercase); unique per merchant.
    #[serde(default)]
    #[schema(required = true, value_type = CouponCode)]
    pub code: Field<String>,
    /// A percentage off: a decimal string greater than 0 and at most 100, at most 4 decimal
    /// places. Exactly one of percentOff and amountOff.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "20")]
    pub percent_off: Field<String>,
    /// An amount off each discounted invoice: a decimal string > 0 with at most the currency's
    /// decimals. Requires currency.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "5.00", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    pub amount_off: Field<String>,
    /// The currency of amountOff (only with it): the coupon applies to memberships billed in it.
    #[serde(default)]
    #[schema(value_type = Option<CurrencyCode>)]
    pub currency: Field<String>,
    /// once, repeating or forever.
    #[serde(default)]
    #[schema(required = true, value_type = CouponDurationName)]
    pub duration: Field<String>,
    /// Period invoices a repeating coupon discounts (required with repeating, refused otherwise).
    #[serde(default)]
    #[schema(value_type = Option<DurationInCycles>)]
    pub duration_in_cycles: Field<i64>,
    /// How many times it can be redeemed; no limit when absent.
    #[serde(default)]
    #[schema(value_type = Option<MaxRedemptions>)]
    pub max_redemptions: Field<i64>,
    /// From when it can no longer be redeemed: UTC `YYYY-MM-DDTHH:mm:ss` (a trailing `Z` is
    /// accepted), after the merchant's current time and at most 100 years after it.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2027-01-01T00:00:00Z")]
    pub expires_at: Field<String>,
}

/// Body of a coupon's change: `active` alone, since a coupon's terms never change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCouponRequest {
    /// `false` archives the coupon (it can no longer be redeemed), `true` restores it.
    #[serde(default)]
    #[schema(value_type = bool, required = false)]
    pub active: Field<bool>,
    #[serde(default)]
    #[schema(ignore)]
    code: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    percent_off: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    amount_off: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    currency: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    duration: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    duration_in_cycles: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    max_redemptions: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    expires_at: Field<serde_json::Value>,
}

/// A coupon.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CouponRecord {
    /// `cpn_` + 24 base62 characters.
    pub coupon_id: String,
    /// What customers type, uppercase.
    pub code: String,
    /// The percentage off, a decimal string; null for an amount off.
    pub percent_off: Option<String>,
    /// The amount off, a decimal string in currency; null for a percentage.
    pub amount_off: Option<String>,
    /// The currency of amountOff; null for a percentage.
    pub currency: Option<String>,
    /// once, repeating or forever.
    pub duration: String,
    /// Period invoices a repeating coupon discounts; null otherwise.
    pub duration_in_cycles: Option<u32>,
    /// Redemptions allowed; null: no limit.
    pub max_redemptions: Option<i64>,
    /// Redemptions so far.
    pub times_redeemed: i64,
    /// When it expires (UTC, the merchant's time); null: never.
    pub expires_at: Option<String>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC, the merchant's time).
    pub created_at: String,
}

impl From<Coupon> for CouponRecord {
    fn from(coupon: Coupon) -> Self {
        let (percent_off, amount_off) = match coupon.off {
            CouponOff::PercentOff(p) => (Some(p.to_string()), None),
            CouponOff::AmountOff(minor) => {
                let currency = coupon.currency.as_deref().map(Currency::parse);
                let text = match currency {
                    Some(Ok(c)) => format_amount(minor, c),
                    _ => minor.to_string(),
                };
                (None, Some(text))
            }
        };
        let duration_in_cycles = match coupon.duration {
            CouponDuration::Repeating(n) => Some(n),
            CouponDuration::Once | CouponDuration::Forever => None,
        };
        CouponRecord {
            coupon_id: coupon.coupon_key,
            code: coupon.code,
            percent_off,
            amount_off,
            currency: coupon.currency,
            duration: coupon.duration.as_str().to_string(),
            duration_in_cycles,
            max_redemptions: coupon.max_redemptions,
            times_redeemed: coupon.times_redeemed,
            expires_at: coupon.expires_at.map(format_utc),
            active: coupon.active,
            created_at: format_utc(coupon.created_at),
        }
    }
}

/// Whether a field was sent with a value (of the right type or not).
fn given<T>(field: &Field<T>) -> bool {
    matches!(field, Field::Present(_) | Field::Invalid(_))
}

/// What the coupon takes off, and its currency: exactly one of `percentOff` and `amountOff`,
/// `currency` with an amount and only with one.
fn off(
    percent: Field<String>,
    amount_off: Field<String>,
    currency_field: Field<String>,
    errors: &mut FieldErrors,
) -> Option<(CouponOff, Option<Currency>)> {
    let (percent_given, amount_given) = (given(&percent), given(&amount_off));
    if percent_given == amount_given {
        let message = if percent_given {
            "give percentOff or amountOff, not both"
        } else {
            "either percentOff or amountOff is required"
        };
        errors.add("percentOff", message);
        errors.add("amountOff", message);
    }
    if amount_given {
        let currency = currency(currency_field, "currency", errors);
        let amount = amount(amount_off, "amountOff", currency, errors);
        percent.optional("percentOff", errors);
        return Some((CouponOff::AmountOff(amount?), currency)).filter(|_| !percent_given);
    }
    if given(&currency_field) {
        errors.add("currency", "is only allowed with amountOff");
    }
    let text = percent.optional("percentOff", errors)?;
    let percent = errors.check("percentOff", rules::percent_off(&text))?;
    Some((CouponOff::PercentOff(percent), None))
}

/// `duration` and `durationInCycles`; a rule's failure is not reported twice on a field whose
/// type already failed.
fn duration(
    name: Field<String>,
    cycles: Field<i64>,
    errors: &mut FieldErrors,
) -> Option<CouponDuration> {
    let name = name.required("duration", errors);
    let cycles = cycles.optional("durationInCycles", errors);
    match CouponDuration::parse(&name?, cycles) {
        Ok(duration) => Some(duration),
        Err((path, message)) => {
            if !errors.as_map().contains_key(path) {
                errors.add(path, message);
            }
            None
        }
    }
}

/// Creates a coupon, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/coupons",
    tag = "catalog",
    request_body = CreateCouponRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Coupon created", body = CouponRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The merchant already has a coupon with this code, in any letter case (errors.code)", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_coupon(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateCouponRequest>,
) -> Result<(StatusCode, Json<CouponRecord>), ApiError> {
    let coupon = create(&state, auth.merchant_id, body).await?;
    Ok((StatusCode::CREATED, Json(coupon.into())))
}

/// Creates the coupon `body` describes for the merchant, active: every failing field (400), or
/// a code the merchant already has (409 on `code`). `POST /coupons` and the dashboard's coupons
/// page.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    body: CreateCouponRequest,
) -> Result<Coupon, ApiError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut errors = FieldErrors::new();
    let code = required_text(body.code, "code", &mut errors, rules::code);
    let off = off(
        body.percent_off,
        body.amount_off,
        body.currency,
        &mut errors,
    );
    let duration = duration(body.duration, body.duration_in_cycles, &mut errors);
    let max_redemptions = body
        .max_redemptions
        .optional("maxRedemptions", &mut errors)
        .and_then(|n| errors.check("maxRedemptions", rules::max_redemptions(n)));
    let expires_at = body
        .expires_at
        .optional("expiresAt", &mut errors)
        .and_then(|at| errors.check("expiresAt", rules::expires_at(&at, now)));
    let (Some(code), Some((off, currency)), Some(duration), true) =
        (code, off, duration, errors.is_empty())
    else {
        return Err(ApiError::Validation(errors));
    };
    let new = NewCoupon {
        coupon_key: ids::coupon_key(),
        code,
        off,
        currency: currency.map(|c| c.code().to_string()),
        duration,
        max_redemptions,
        expires_at,
    };
    let coupon = coupons::insert(state.store.writer(), merchant_id, &new, now)
        .await?
        .ok_or_else(|| {
            let mut errors = FieldErrors::new();
            errors.add("code", "is the code of another coupon of this merchant");
            ApiError::FieldConflict(errors)
        })?;
    Ok(coupon)
}

/// Lists the merchant's coupons, archived ones too, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/coupons",
    tag = "catalog",
    params(PageParams),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of coupons, newest first", body = Page<CouponRecord>),
        (status = 400, description = "A limit outside 1–100 or a cursor recur did not give for this list", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_coupons(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
) -> Result<Json<Page<CouponRecord>>, ApiError> {
    let (rows, next) = coupon_page(&state, auth.merchant_id, page).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(CouponRecord::from).collect(),
        next,
    )))
}

/// The page of the merchant's coupons that `page` asks for, and the cursor of the next:
/// `GET /coupons` and the dashboard's coupons page.
pub async fn coupon_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
) -> Result<(Vec<Coupon>, Option<String>), ApiError> {
    let scope = ListScope::new("coupons", merchant_id, &[]);
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows = coupons::page(state.store.pool(), merchant_id, ask.window()).await?;
    Ok(ask.cut(rows, |c| c.id))
}

/// One coupon.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/coupons/{couponId}",
    tag = "catalog",
    params(("couponId" = String, Path, description = "The coupon's id (cpn_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The coupon", body = CouponRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such coupon for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_coupon(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<CouponRecord>, ApiError> {
    let coupon = coupons::by_key(state.store.pool(), auth.merchant_id, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(coupon.into()))
}

/// Archives or restores a coupon (`active`); its terms never change.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/coupons/{couponId}",
    tag = "catalog",
    params(("couponId" = String, Path, description = "The coupon's id (cpn_…)")),
    request_body = UpdateCouponRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The coupon as changed", body = CouponRecord),
        (status = 400, description = "Validation failed: active is not a boolean, or the body names a term (code, percentOff, amountOff, currency, duration, durationInCycles, maxRedemptions, expiresAt), which cannot change", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such coupon for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_coupon(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdateCouponRequest>,
) -> Result<Json<CouponRecord>, ApiError> {
    let mut errors = FieldErrors::new();
    let active = optional_flag(body.active, "active", &mut errors);
    let terms = [
        ("code", body.code.is_given()),
        ("percentOff", body.percent_off.is_given()),
        ("amountOff", body.amount_off.is_given()),
        ("currency", body.currency.is_given()),
        ("duration", body.duration.is_given()),
        ("durationInCycles", body.duration_in_cycles.is_given()),
        ("maxRedemptions", body.max_redemptions.is_given()),
        ("expiresAt", body.expires_at.is_given()),
    ];
    refuse_given(&terms, TERMS_ARE_FIXED, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let coupon = match active {
        None => coupons::by_key(state.store.pool(), auth.merchant_id, &key)
            .await?
            .ok_or(ApiError::NotFound)?,
        Some(active) => set_active(&state, auth.merchant_id, &key, active).await?,
    };
    Ok(Json(coupon.into()))
}

/// Archives (`false`) or restores the merchant's coupon `key`: the coupon as changed, or not
/// found. `PATCH /coupons/{couponId}` and the dashboard's coupons page.
pub async fn set_active(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    active: bool,
) -> Result<Coupon, ApiError> {
    coupons::set_active(state.store.writer(), merchant_id, key, active)
        .await?
        .ok_or(ApiError::NotFound)
}

/// Why a change of a coupon's term is refused.
const TERMS_ARE_FIXED: &str = "cannot change: a coupon's terms are fixed once created; archive \
     it (active: false) and create another coupon";
