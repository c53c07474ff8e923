//! The dashboard's overview (DESIGN §13): monthly recurring revenue per currency, memberships
//! by status, the last 30 days' revenue per currency and day (a chart, [`chart`], and a table),
//! and what needs attention (failed payments, undeliverable webhooks). Every figure links to
//! the list behind it. The figures are read by [`store::overview`] from indexes whose cost does
//! not grow with the merchant's history.

use std::collections::BTreeMap;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use chrono::{DateTime, Duration, Utc};
use minijinja::{context, Value};
use recur_domain::money::{display_amount, Currency};
use recur_domain::mrr;
use recur_domain::status::MembershipStatus;
use rust_decimal::Decimal;

use super::staff::Staff;
use super::{chart, framed, link, param};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::format::display_date;
use crate::pages::{notice, session};
use crate::state::AppState;
use crate::store::overview::{self as store, COUNT_CAP};

/// How many days the revenue covers, today (UTC, on the merchant's clock) included.
pub const REVENUE_DAYS: i64 = 30;

/// The last [`REVENUE_DAYS`] days' revenue: for each currency, paid invoices minus succeeded
/// refunds of invoices, per UTC day, oldest first.
pub struct Revenue {
    /// The first day shown.
    pub first_day: DateTime<Utc>,
    /// Net minor units per day, by currency code.
    pub by_currency: BTreeMap<String, Vec<i64>>,
}

/// Reads the revenue of the [`REVENUE_DAYS`] UTC days up to `now`'s.
pub async fn revenue(
    state: &AppState,
    merchant_id: i64,
    now: DateTime<Utc>,
) -> Result<Revenue, PageError> {
    let today = now.timestamp().div_euclid(86_400);
    let first = today - (REVENUE_DAYS - 1);
    let day_start = |day: i64| DateTime::from_timestamp(day * 86_400, 0).unwrap_or(now);
    let (from, until) = (day_start(first), day_start(today + 1));
    let pool = state.store.pool();
    let paid = store::paid_by_day(pool, merchant_id, from, until).await?;
    let refunded = store::refunded_by_day(pool, merchant_id, from, until).await?;
    let mut by_currency: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let days = usize::try_from(REVENUE_DAYS).unwrap_or(30);
    let signed = paid
        .into_iter()
        .map(|d| (d, 1))
        .chain(refunded.into_iter().map(|d| (d, -1)));
    for (d, sign) in signed {
        let Ok(index) = usize::try_from(d.day - first) else {
            continue;
        };
        let series = by_currency
            .entry(d.currency)
            .or_insert_with(|| vec![0; days]);
        if let Some(slot) = series.get_mut(index) {
            *slot = slot.saturating_add(sign * d.amount);
        }
    }
    Ok(Revenue {
        first_day: from,
        by_currency,
    })
}

fn money(minor: i64, code: &str, lang: &str) -> String {
    Currency::parse(code)
        .map(|currency| display_amount(minor, currency, lang))
        .unwrap_or_else(|_| format!("{minor} {code}"))
}

fn count_label(count: i64) -> String {
    if count >= COUNT_CAP {
        format!("{COUNT_CAP}+")
    } else {
        count.to_string()
    }
}

fn memberships_url(status: MembershipStatus) -> String {
    link(
        "/dashboard/memberships",
        &[("status", Some(status.as_str()))],
    )
}

/// The overview's figures, as read: what [`show`] formats.
pub struct Figures {
    /// Monthly recurring revenue in minor units, by currency code.
    pub mrr: BTreeMap<String, i64>,
    /// Memberships in each status, up to [`COUNT_CAP`].
    pub counts: Vec<(MembershipStatus, i64)>,
    /// Undeliverable webhook events, up to [`COUNT_CAP`].
    pub undeliverable: i64,
    /// The last [`REVENUE_DAYS`] days' revenue.
    pub revenue: Revenue,
}

/// Reads the overview's figures of `merchant_id` at `now` (its clock's time).
pub async fn read(
    state: &AppState,
    merchant_id: i64,
    now: DateTime<Utc>,
) -> Result<Figures, PageError> {
    let pool = state.store.pool();
    let mut monthly: BTreeMap<String, Vec<Decimal>> = BTreeMap::new();
    for group in store::recurring(pool, merchant_id).await? {
        monthly
            .entry(group.currency)
            .or_default()
            .push(mrr::monthly(group.amount, group.cycle));
    }
    let mrr = monthly
        .into_iter()
        .map(|(code, values)| (code, mrr::total_minor(values)))
        .collect();
    let mut counts = Vec::new();
    for status in MembershipStatus::ALL {
        counts.push((
            status,
            store::count_in_status(pool, merchant_id, status).await?,
        ));
    }
    Ok(Figures {
        mrr,
        counts,
        undeliverable: store::undeliverable_events(pool, merchant_id).await?,
        revenue: revenue(state, merchant_id, now).await?,
    })
}

/// `GET /dashboard/overview`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let merchant_id = staff.merchant.id;
    let now = state.merchant_now(merchant_id).await?;
    let figures = read(&state, merchant_id, now).await?;

    let mrr: Vec<Value> = figures
        .mrr
        .iter()
        .map(|(code, minor)| {
            context! {
                currency => code,
                amount => money(*minor, code, lang),
                url => memberships_url(MembershipStatus::Active),
            }
        })
        .collect();
    let figure = |status: MembershipStatus, count: i64| {
        let name = status.as_str();
        context! {
            status => name,
            label => t.get(&format!("status_{name}")),
            count => count_label(count),
            url => memberships_url(status),
        }
    };
    let counts: Vec<Value> = figures.counts.iter().map(|(s, n)| figure(*s, *n)).collect();
    let failed: Vec<Value> = figures
        .counts
        .iter()
        .filter(|(s, _)| matches!(s, MembershipStatus::PastDue | MembershipStatus::Unpaid))
        .map(|(s, n)| figure(*s, *n))
        .collect();

    let revenue = &figures.revenue;
    let charts: Vec<Value> = revenue
        .by_currency
        .iter()
        .map(|(code, days)| {
            let rows: Vec<Value> = days
                .iter()
                .enumerate()
                .filter(|(_, amount)| **amount != 0)
                .map(|(i, amount)| {
                    let day = revenue.first_day + Duration::days(i64::try_from(i).unwrap_or(0));
                    context! {
                        date => display_date(day, lang),
                        amount => money(*amount, code, lang),
                    }
                })
                .collect();
            context! {
                currency => code,
                total => money(days.iter().fold(0i64, |sum, d| sum.saturating_add(*d)), code, lang),
                chart_url => link("/dashboard/overview/revenue.svg", &[("currency", Some(code))]),
                days => rows,
            }
        })
        .collect();

    framed(
        &state,
        &staff,
        t,
        "dashboard/overview.html",
        "overview",
        context! {
            mrr => mrr,
            counts => counts,
            failed => failed,
            undeliverable => context! {
                count => count_label(figures.undeliverable),
                url => link("/dashboard/events", &[("deliveryStatus", Some("Undeliverable"))]),
            },
            revenue => charts,
            revenue_days => REVENUE_DAYS,
        },
    )
}

/// `GET /dashboard/overview/revenue.svg?currency=`: the chart of the last 30 days' revenue in
/// one currency (all days zero when there was none). A currency code that is not one is the 400
/// page.
pub async fn revenue_chart(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let code = param(query.as_deref().unwrap_or_default(), "currency").unwrap_or_default();
    let Ok(currency) = Currency::parse(&code) else {
        return notice::bad_request(&state, t);
    };
    let merchant_id = staff.merchant.id;
    let now = state.merchant_now(merchant_id).await?;
    let revenue = revenue(&state, merchant_id, now).await?;
    let zeros = vec![0; usize::try_from(REVENUE_DAYS).unwrap_or(30)];
    let days = revenue.by_currency.get(currency.code()).unwrap_or(&zeros);
    Ok(chart::svg_response(chart::revenue_svg(days)?))
}
