//! The coupons page (DESIGN §15): the merchant's coupons, newest first, a page at a time (the
//! cursors of `GET /coupons`), each with its code, what it takes off, for how many invoices, its
//! redemptions of its limit, its expiry and whether it is active; the form that creates one and
//! each coupon's archive or restore button. Through the coupons service ([`coupons`]): the same
//! rules as the API, their refusals beside the fields (400), a code the merchant already has
//! beside the code (409). A coupon's terms never change: archive it and create another. Another
//! merchant's coupon is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use minijinja::{context, Value};
use recur_domain::coupon::{CouponDuration, CouponOff};
use recur_domain::money::{display_amount, Currency};
use serde::Deserialize;

use super::confirm::{self, Outcome};
use super::fields::{self, beside, ActiveForm};
use super::staff::Staff;
use super::{framed_with_status, link, or_bad_request, staff, without_empty};
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::format::display_time;
use crate::pages::{notice, session};
use crate::services::coupons::{self, NewCoupon};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::coupons::Coupon;

/// The page's address.
pub const PAGE: &str = "/dashboard/coupons";

/// The creation form as posted.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CouponForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    percent_off: String,
    #[serde(default)]
    amount_off: String,
    #[serde(default)]
    currency: String,
    #[serde(default)]
    duration: String,
    #[serde(default)]
    duration_in_cycles: String,
    #[serde(default)]
    max_redemptions: String,
    #[serde(default)]
    expires_at: String,
}

impl Default for CouponForm {
    /// An empty form: a coupon for one invoice.
    fn default() -> Self {
        Self {
            csrf_token: String::new(),
            code: String::new(),
            percent_off: String::new(),
            amount_off: String::new(),
            currency: String::new(),
            duration: CouponDuration::Once.as_str().to_string(),
            duration_in_cycles: String::new(),
            max_redemptions: String::new(),
            expires_at: String::new(),
        }
    }
}

/// What a coupon takes off as people read it: `20 %` (as taxes are written) or an amount in
/// its currency.
pub fn shown_off(off: &CouponOff, currency: Option<&str>, lang: &str) -> String {
    match off {
        CouponOff::PercentOff(p) => format!("{} %", p.normalize()),
        CouponOff::AmountOff(minor) => match currency.map(Currency::parse) {
            Some(Ok(currency)) => display_amount(*minor, currency, lang),
            _ => minor.to_string(),
        },
    }
}

/// A coupon as a row of the list, at the merchant's time `now` (which says whether it has
/// expired).
fn coupon_row(
    t: &BTreeMap<String, String>,
    lang: &str,
    now: DateTime<Utc>,
    coupon: &Coupon,
) -> Value {
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    let duration = match coupon.duration {
        CouponDuration::Once => text("dash_duration_once"),
        CouponDuration::Repeating(n) => {
            text("dash_duration_repeating").replace("{n}", &n.to_string())
        }
        CouponDuration::Forever => text("dash_duration_forever"),
    };
    context! {
        id => coupon.coupon_key,
        code => coupon.code,
        off => shown_off(&coupon.off, coupon.currency.as_deref(), lang),
        duration => duration,
        redeemed => coupon.times_redeemed,
        max => coupon.max_redemptions,
        expires => coupon.expires_at.map(|at| display_time(at, lang)),
        expired => coupon.expires_at.is_some_and(|at| at <= now),
        active => coupon.active,
    }
}

/// The list read with `query` (its cursor) and the creation form showing `form` with `errors`
/// beside its fields, answered with `status`.
async fn coupons_page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    query: &str,
    status: StatusCode,
    form: &CouponForm,
    errors: BTreeMap<String, String>,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    let ListQuery(page) = ListQuery::<PageParams>::parse(query)?;
    let found = coupons::coupon_page(state, staff.merchant.id, page).await;
    let (rows, next) = match or_bad_request(state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let durations: Vec<Value> = [
        CouponDuration::Once,
        CouponDuration::Repeating(1),
        CouponDuration::Forever,
    ]
    .iter()
    .map(|duration| {
        let name = duration.as_str();
        context! {
            name => name,
            label => t.get(&format!("dash_duration_option_{name}")),
            selected => name.eq_ignore_ascii_case(form.duration.trim()),
        }
    })
    .collect();
    framed_with_status(
        state,
        staff,
        t,
        status,
        "dashboard/coupons.html",
        "coupons",
        context! {
            coupons => rows.iter().map(|c| coupon_row(t, lang, staff.now, c)).collect::<Vec<_>>(),
            next_url => next.as_deref().map(|cursor| link(PAGE, &[("cursor", Some(cursor))])),
            durations => durations,
            form => context! {
                code => form.code,
                percent_off => form.percent_off,
                amount_off => form.amount_off,
                currency => form.currency,
                duration_in_cycles => form.duration_in_cycles,
                max_redemptions => form.max_redemptions,
                expires_at => form.expires_at,
            },
            errors => errors,
        },
    )
}

/// `GET /dashboard/coupons?cursor=`.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let query = without_empty(query.as_deref());
    let form = CouponForm::default();
    let ok = StatusCode::OK;
    coupons_page(&state, &staff, t, &query, ok, &form, BTreeMap::new()).await
}

/// `POST /dashboard/coupons`: creates the coupon and shows the list again (303), the new coupon
/// first; the form with each field's error (400), or the code's when the merchant has it already
/// (409). Blank fields are not given; the expiry is typed in UTC (`YYYY-MM-DD HH:MM` or a
/// `datetime-local` input's value).
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<CouponForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let not_a_time = t.get("dash_utc_time_form").cloned().unwrap_or_default();
    let new = NewCoupon {
        code: fields::text(&form.code),
        percent_off: fields::text(&form.percent_off),
        amount_off: fields::text(&form.amount_off),
        currency: fields::text(&form.currency),
        duration: fields::text(&form.duration),
        duration_in_cycles: fields::number(&form.duration_in_cycles),
        max_redemptions: fields::number(&form.max_redemptions),
        expires_at: fields::time(&form.expires_at, &not_a_time),
    };
    let (status, errors) = match coupons::create_coupon(&state, staff.merchant.id, new).await {
        Ok(_) => return Ok(Redirect::to(PAGE).into_response()),
        Err(ServiceError::Validation(errors)) => (StatusCode::BAD_REQUEST, errors),
        Err(ServiceError::FieldConflict(errors)) => (StatusCode::CONFLICT, errors),
        Err(other) => return Err(other.into()),
    };
    coupons_page(&state, &staff, t, "", status, &form, beside(errors)).await
}

/// `POST /dashboard/coupons/{couponId}/active` (`active` = `false` or `true`): archives the
/// coupon (it can no longer be redeemed; memberships that have it keep its discount) or
/// restores it.
pub async fn set_active(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActiveForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let Some(active) = form.active() else {
        return notice::bad_request(&state, t);
    };
    let text = match coupons::set_coupon_active(&state, staff.merchant.id, &key, active).await {
        Ok(coupon) => {
            let key = if active {
                "dash_coupon_restored"
            } else {
                "dash_coupon_archived"
            };
            t.get(key)
                .cloned()
                .unwrap_or_default()
                .replace("{code}", &coupon.code)
        }
        Err(ServiceError::NotFound) => return notice::not_found(&state, t),
        Err(other) => return Err(other.into()),
    };
    let told = Outcome {
        nav: "coupons",
        back: PAGE,
        back_label: "dash_back_to_coupons",
        outcome: "done",
        text: text.into(),
        secret: None,
    };
    confirm::outcome(&state, &staff, t, StatusCode::OK, told)
}
