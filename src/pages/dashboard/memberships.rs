//! A membership's page in the dashboard: plan, status, periods and next billing, its trial,
//! coupon, scheduled change and resume date, its customer, its invoices (newest first, a page at
//! a time, as `GET /invoices?membershipKey=` lists them) and the timeline of its webhook events,
//! each with every attempt to deliver it to the membership's `webhookUrl` and to each of the
//! merchant's webhook endpoints that took it; with metered prices, its usage so far and the
//! chart of its last periods ([`crate::pages::usage`]). The page offers the actions of [`super::actions`]
//! and [`super::pauses`] and, while the "payment failed" e-mail's pay-now link is open, that link
//! to copy.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::membership::{can_pause, PauseRequest};
use recur_domain::money::display_amount;
use recur_domain::status::MembershipStatus;

use super::coupons::shown_off;
use super::customers::{invoice_rows, membership_row};
use super::staff::Staff;
use super::{framed, link, or_bad_request, without_empty};
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::links;
use crate::pages::failure::PageError;
use crate::pages::format::{display_date, display_time, interval_phrase};
use crate::pages::usage::usage_view;
use crate::pages::{notice, session};
use crate::services::lists::{self, InvoiceFilters};
use crate::services::usage::usage_summary;
use crate::state::AppState;
use crate::store::memberships::{self, Membership};
use crate::store::{checkout_sessions, customers, endpoint_deliveries, events};

/// The newest events the timeline shows.
pub const EVENTS_SHOWN: i64 = 50;

/// `GET /dashboard/memberships/{membershipKey}?cursor=`. Another merchant's membership is the
/// 404 page.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(membership_key): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let merchant_id = staff.merchant.id;
    let pool = state.store.pool();
    let Some(m) = memberships::get(pool, merchant_id, &membership_key).await? else {
        return notice::not_found(&state, t);
    };
    let ListQuery(page) = ListQuery::<PageParams>::parse(&without_empty(query.as_deref()))?;
    let found = lists::invoice_page(
        &state,
        merchant_id,
        page,
        InvoiceFilters::of_membership(&membership_key),
    )
    .await;
    let (invoices, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let customer = customers::by_id(pool, merchant_id, m.customer_id).await?;
    let sessions =
        checkout_sessions::open_for_membership(pool, merchant_id, m.id, staff.now).await?;
    let pay_now_url = links::open_pay_now_url(&state, &sessions);
    let timeline = events::for_membership(&state.store, merchant_id, m.id, EVENTS_SHOWN).await?;
    let event_ids: Vec<i64> = timeline.iter().map(|(event, _)| event.id).collect();
    let mut to_endpoints = endpoint_deliveries::of_events(&state.store, &event_ids).await?;
    let time = |at| display_time(at, lang);
    let attempt_rows = |attempts: Vec<events::Attempt>| -> Vec<_> {
        attempts
            .into_iter()
            .map(|a| {
                context! {
                    number => a.attempt,
                    at => time(a.started_at),
                    status_code => a.status_code,
                    error => a.error,
                    latency_ms => a.latency_ms,
                }
            })
            .collect()
    };
    let status_label =
        |status: events::EventStatus| t.get(&format!("dash_delivery_{}", status.as_str()));
    let timeline: Vec<_> = timeline
        .into_iter()
        .map(|(event, attempts)| {
            let status = event.status.as_str();
            let endpoints: Vec<_> = to_endpoints
                .remove(&event.id)
                .unwrap_or_default()
                .into_iter()
                .map(|d| {
                    context! {
                        url => d.url,
                        endpoint_url => format!("/dashboard/webhooks/{}", d.endpoint_key),
                        status => d.status.as_str(),
                        status_label => status_label(d.status),
                        next_attempt => d.next_attempt_at.map(time),
                        attempts => attempt_rows(d.attempts),
                    }
                })
                .collect();
            context! {
                action => event.action,
                action_id => event.action_id,
                at => time(event.created_at),
                status => status,
                status_label => status_label(event.status),
                url => event.webhook_url,
                next_attempt => event.next_attempt_at.map(time),
                attempts => attempt_rows(attempts),
                endpoints => endpoints,
            }
        })
        .collect();
    let events_cut = i64::try_from(timeline.len()).is_ok_and(|n| n >= EVENTS_SHOWN);
    let usage = usage_summary(&state, &m).await?;
    framed(
        &state,
        &staff,
        t,
        "dashboard/membership.html",
        "customers",
        context! {
            membership => membership_row(t, lang, &m),
            order_id => m.order_id,
            cancelable => m.state.status.can_cancel() && !m.state.status.is_terminal(),
            pausable => can_pause(m.state.status) == Ok(PauseRequest::Pause),
            paused => m.state.status == MembershipStatus::Paused,
            terms => terms(t, lang, &m),
            usage => usage.map(|u| usage_view(t, lang, &u)),
            pay_now_url => pay_now_url,
            next_billing => m.state.next_billing_date().map(|at| display_date(at, lang)),
            canceled => m.state.canceled_at.map(|at| display_date(at, lang)),
            created => display_date(m.created_at, lang),
            customer => customer.map(|c| context! {
                name => format!("{} {}", c.fields.first_name, c.fields.last_name),
                email => c.fields.email,
                url => format!("/dashboard/customers/{}", c.customer_key),
            }),
            invoices => invoice_rows(t, lang, &invoices),
            next_url => next.as_deref().map(|cursor| link(
                &format!("/dashboard/memberships/{membership_key}"),
                &[("cursor", Some(cursor))],
            )),
            events => timeline,
            events_cut => events_cut,
            events_shown => EVENTS_SHOWN,
        },
    )
}

/// What a membership's terms hold beyond its plan: its free trial (days, and its end once
/// started), its coupon (code, what it takes off, for how many more invoices), the change
/// scheduled for its next period (price, units, cycle, when it applies) and, while Paused, when
/// it resumes.
fn terms(t: &BTreeMap<String, String>, lang: &str, m: &Membership) -> Value {
    let currency = m.currency();
    let money = |minor: i64| display_amount(minor, currency, lang);
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    let trial = m.state.trial_days.map(|days| match m.state.trial_end {
        Some(end) => text("dash_trial_until")
            .replace("{n}", &days.to_string())
            .replace("{date}", &display_date(end, lang)),
        None => text("dash_trial_not_started").replace("{n}", &days.to_string()),
    });
    let coupon = m.state.discount.as_ref().map(|d| {
        let off = shown_off(&d.coupon.off, Some(currency.code()), lang);
        context! {
            code => d.coupon.code,
            off => text("dash_coupon_off").replace("{off}", &off),
            duration => match d.cycles_left {
                None => text("dash_coupon_forever"),
                Some(1) => text("dash_coupon_cycle_one"),
                Some(n) => text("dash_coupon_cycles").replace("{n}", &n.to_string()),
            },
        }
    });
    let scheduled = m.state.scheduled.as_ref().map(|change| {
        let price = change.price;
        let when = match m.state.scheduled_change_at() {
            Some(at) => text("dash_scheduled_from").replace("{date}", &display_date(at, lang)),
            None => text("dash_scheduled_on_resume"),
        };
        context! {
            amount => money(price.total),
            interval => interval_phrase(t, change.cycle.interval_type, change.cycle.interval_count),
            units => match (price.units(), price.unit_price()) {
                (Some(units), Some(unit)) if units != 1 || price.quantity.is_some() => {
                    Some(format!("{units} × {}", money(unit)))
                }
                _ => None,
            },
            price_id => change.price_key,
            when => when,
        }
    });
    let resumes = (m.state.status == MembershipStatus::Paused).then(|| match m.state.resume_at {
        Some(at) => display_time(at, lang),
        None => text("dash_resumes_by_hand"),
    });
    context! { trial, coupon, scheduled, resumes }
}
