//! A merchant's coupons (DESIGN §15), for the API (`/coupons`) and the dashboard's coupons page
//! alike. A coupon takes a percentage or an amount (in one currency) off a membership's period
//! invoices, for one, several or every period; it may be limited in redemptions and expire. Its
//! terms never change: a change takes `active` alone (archive it and create another coupon, with
//! another code). A code is the merchant's in any letter case: a second coupon with it is a
//! conflict on `code`, archived or not.

use recur_domain::coupon::{self as rules, CouponDuration, CouponOff};
use recur_domain::money::Currency;
use recur_domain::validation::FieldErrors;

use super::fields::{amount, currency};
use super::ServiceError;
use crate::http::input::{optional_flag, refuse_given, required_text, Field};
use crate::http::pagination::{ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::coupons::{self, Coupon, NewCoupon as StoredCoupon};

/// A new coupon as given.
#[derive(Debug, Default)]
pub struct NewCoupon {
    /// What customers type, in any letter case; unique per merchant.
    pub code: Field<String>,
    /// A percentage off, a decimal string; exactly one of this and `amount_off`.
    pub percent_off: Field<String>,
    /// An amount off each discounted invoice, a decimal string; requires `currency`.
    pub amount_off: Field<String>,
    /// The currency of `amount_off` (only with it).
    pub currency: Field<String>,
    /// once, repeating or forever.
    pub duration: Field<String>,
    /// Period invoices a repeating coupon discounts (required with repeating, refused otherwise).
    pub duration_in_cycles: Field<i64>,
    /// How many times it can be redeemed; no limit when absent.
    pub max_redemptions: Field<i64>,
    /// From when it can no longer be redeemed: UTC `YYYY-MM-DDTHH:mm:ss`.
    pub expires_at: Field<String>,
}

/// A change of a coupon: `active` alone, since its terms never change.
#[derive(Debug, Default)]
pub struct CouponChange {
    /// `false` archives the coupon (it can no longer be redeemed), `true` restores it.
    pub active: Field<bool>,
    /// The terms the change names (`code`, `percentOff`, …) with whether each is given: each
    /// given one is refused.
    pub terms: Vec<(&'static str, bool)>,
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

/// Creates the coupon `new` describes for the merchant, active: every failing field, or a code
/// the merchant already has (a conflict on `code`).
pub async fn create_coupon(
    state: &AppState,
    merchant_id: i64,
    new: NewCoupon,
) -> Result<Coupon, ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut errors = FieldErrors::new();
    let code = required_text(new.code, "code", &mut errors, rules::code);
    let off = off(new.percent_off, new.amount_off, new.currency, &mut errors);
    let duration = duration(new.duration, new.duration_in_cycles, &mut errors);
    let max_redemptions = new
        .max_redemptions
        .optional("maxRedemptions", &mut errors)
        .and_then(|n| errors.check("maxRedemptions", rules::max_redemptions(n)));
    let expires_at = new
        .expires_at
        .optional("expiresAt", &mut errors)
        .and_then(|at| errors.check("expiresAt", rules::expires_at(&at, now)));
    let (Some(code), Some((off, currency)), Some(duration), true) =
        (code, off, duration, errors.is_empty())
    else {
        return Err(ServiceError::Validation(errors));
    };
    let new = StoredCoupon {
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
            ServiceError::FieldConflict(errors)
        })?;
    Ok(coupon)
}

/// The page of the merchant's coupons that `page` asks for, newest first (archived ones too),
/// and the cursor of the next.
pub async fn coupon_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
) -> Result<(Vec<Coupon>, Option<String>), ServiceError> {
    let scope = ListScope::new("coupons", merchant_id, &[]);
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows = coupons::page(state.store.pool(), merchant_id, ask.window()).await?;
    Ok(ask.cut(rows, |c| c.id))
}

/// The merchant's coupon `key`.
pub async fn coupon(state: &AppState, merchant_id: i64, key: &str) -> Result<Coupon, ServiceError> {
    coupons::by_key(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Why a change of a coupon's term is refused.
const TERMS_ARE_FIXED: &str = "cannot change: a coupon's terms are fixed once created; archive \
     it (active: false) and create another coupon";

/// Applies `change` to the merchant's coupon `key`: archived or restored (`active`), the coupon
/// as it is when `active` is absent; a term named is refused.
pub async fn update_coupon(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    change: CouponChange,
) -> Result<Coupon, ServiceError> {
    let mut errors = FieldErrors::new();
    let active = optional_flag(change.active, "active", &mut errors);
    refuse_given(&change.terms, TERMS_ARE_FIXED, &mut errors);
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    match active {
        None => coupon(state, merchant_id, key).await,
        Some(active) => set_coupon_active(state, merchant_id, key, active).await,
    }
}

/// Archives (`false`) or restores the merchant's coupon `key`: the coupon as changed, or not
/// found.
pub async fn set_coupon_active(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    active: bool,
) -> Result<Coupon, ServiceError> {
    coupons::set_active(state.store.writer(), merchant_id, key, active)
        .await?
        .ok_or(ServiceError::NotFound)
}
