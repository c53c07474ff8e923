//! A merchant's coupons (DESIGN §15): `POST /coupons`, `GET /coupons`,
//! `GET|PATCH /coupons/{couponId}`, over [`crate::services::coupons`]. A coupon takes a percentage or an amount (in one currency)
//! off a membership's period invoices, for one, several or every period; it may be limited in
//! redemptions and expire. Its terms never change: `PATCH` takes `active` alone (archive it and
//! create another coupon, with another code). A code is the merchant's in any letter case: a
//! second coupon with it is a 409, archived or not.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::coupon::{CouponDuration, CouponOff};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{
    CouponCode, CouponDurationName, CurrencyCode, DurationInCycles, MaxRedemptions,
};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::coupons::{self, CouponChange, NewCoupon};
use crate::state::AppState;
use crate::store::coupons::Coupon;

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
    let new = NewCoupon {
        code: body.code,
        percent_off: body.percent_off,
        amount_off: body.amount_off,
        currency: body.currency,
        duration: body.duration,
        duration_in_cycles: body.duration_in_cycles,
        max_redemptions: body.max_redemptions,
        expires_at: body.expires_at,
    };
    let coupon = coupons::create_coupon(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(coupon.into())))
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
    let (rows, next) = coupons::coupon_page(&state, auth.merchant_id, page).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(CouponRecord::from).collect(),
        next,
    )))
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
    let coupon = coupons::coupon(&state, auth.merchant_id, &key).await?;
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
    let change = CouponChange {
        active: body.active,
        terms: vec![
            ("code", body.code.is_given()),
            ("percentOff", body.percent_off.is_given()),
            ("amountOff", body.amount_off.is_given()),
            ("currency", body.currency.is_given()),
            ("duration", body.duration.is_given()),
            ("durationInCycles", body.duration_in_cycles.is_given()),
            ("maxRedemptions", body.max_redemptions.is_given()),
            ("expiresAt", body.expires_at.is_given()),
        ],
    };
    let coupon = coupons::update_coupon(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(coupon.into()))
}
