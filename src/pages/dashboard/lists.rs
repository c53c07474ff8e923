//! The dashboard's lists behind the overview's figures: memberships by status (the filters and
//! cursors of `GET /memberships`, through [`lists::membership_page`]), invoices by status (those
//! of `GET /invoices`, through [`lists::invoice_page`]) and webhook events by delivery status
//! (those of `GET /events`, through [`lists::event_page`]).

use std::collections::BTreeMap;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::status::{InvoiceStatus, MembershipStatus};

use super::customers::{invoice_rows, membership_row};
use super::{framed, link, or_bad_request, param, staff, without_empty};
use crate::api::lists::{self, EventFilters, InvoiceFilters, MembershipFilters};
use crate::api::pagination::{ListQuery, PageParams};
use crate::api::problem::ApiError;
use crate::i18n;
use crate::pages::format::display_time;
use crate::pages::session;
use crate::state::AppState;
use crate::store::events::EventStatus;

/// `GET /dashboard/memberships?status=&cursor=`: the merchant's memberships, newest first, a
/// page at a time, all or those in one status.
pub async fn memberships(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let staff = match staff::require(&state, &headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(redirect),
    };
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let query = without_empty(query.as_deref());
    let ListQuery(page) = ListQuery::<PageParams>::parse(&query)?;
    let ListQuery(filters) = ListQuery::<MembershipFilters>::parse(&query)?;
    let found = lists::membership_page(&state, staff.merchant.id, page, filters).await;
    let (rows, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let status = param(&query, "status");
    let names = MembershipStatus::ALL.map(|s| s.as_str());
    let statuses = filter_links(
        t,
        ("/dashboard/memberships", "status"),
        &names,
        "status_",
        &status,
    );
    framed(
        &state,
        &staff,
        t,
        "dashboard/memberships.html",
        "memberships",
        context! {
            status => status,
            statuses => statuses,
            memberships => rows.iter().map(|m| membership_row(t, lang, m)).collect::<Vec<_>>(),
            next_url => next.as_deref().map(|cursor| link(
                "/dashboard/memberships",
                &[("status", status.as_deref()), ("cursor", Some(cursor))],
            )),
        },
    )
}

/// `GET /dashboard/invoices?status=&cursor=`: the merchant's invoices, newest first, a page at a
/// time, all or those in one status (the overview's revenue links to the paid ones).
pub async fn invoices(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let staff = match staff::require(&state, &headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(redirect),
    };
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let query = without_empty(query.as_deref());
    let ListQuery(page) = ListQuery::<PageParams>::parse(&query)?;
    let ListQuery(filters) = ListQuery::<InvoiceFilters>::parse(&query)?;
    let found = lists::invoice_page(&state, staff.merchant.id, page, filters).await;
    let (rows, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let status = param(&query, "status");
    let names = InvoiceStatus::ALL.map(|s| s.as_str());
    let statuses = filter_links(
        t,
        ("/dashboard/invoices", "status"),
        &names,
        "invoice_status_",
        &status,
    );
    framed(
        &state,
        &staff,
        t,
        "dashboard/invoice_list.html",
        "invoices",
        context! {
            status => status,
            statuses => statuses,
            invoices => invoice_rows(t, lang, &rows),
            next_url => next.as_deref().map(|cursor| link(
                "/dashboard/invoices",
                &[("status", status.as_deref()), ("cursor", Some(cursor))],
            )),
        },
    )
}

/// `GET /dashboard/events?deliveryStatus=&cursor=`: the merchant's webhook events, newest
/// first, a page at a time, all or those whose delivery is in one status.
pub async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let staff = match staff::require(&state, &headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(redirect),
    };
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let query = without_empty(query.as_deref());
    let ListQuery(page) = ListQuery::<PageParams>::parse(&query)?;
    let ListQuery(filters) = ListQuery::<EventFilters>::parse(&query)?;
    let found = lists::event_page(&state, staff.merchant.id, page, filters).await;
    let (rows, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let status = param(&query, "deliveryStatus");
    let names = EventStatus::ALL.map(|s| s.as_str());
    let statuses = filter_links(
        t,
        ("/dashboard/events", "deliveryStatus"),
        &names,
        "dash_delivery_",
        &status,
    );
    let events: Vec<_> = rows
        .iter()
        .map(|e| {
            let name = e.status.as_str();
            context! {
                action => e.action,
                action_id => e.action_id,
                order_id => e.order_id,
                url => e.webhook_url,
                at => display_time(e.created_at, lang),
                status => name,
                status_label => t.get(&format!("dash_delivery_{name}")),
                attempts => e.attempts,
            }
        })
        .collect();
    framed(
        &state,
        &staff,
        t,
        "dashboard/events.html",
        "events",
        context! {
            status => status,
            statuses => statuses,
            events => events,
            next_url => next.as_deref().map(|cursor| link(
                "/dashboard/events",
                &[("deliveryStatus", status.as_deref()), ("cursor", Some(cursor))],
            )),
        },
    )
}

/// The links that filter the list at `path` by its parameter `param` to each of `names`, each
/// labelled with the string `{label_prefix}{name}`, the one `current` marked.
fn filter_links(
    t: &BTreeMap<String, String>,
    (path, param): (&str, &str),
    names: &[&str],
    label_prefix: &str,
    current: &Option<String>,
) -> Vec<Value> {
    names
        .iter()
        .map(|name| {
            context! {
                name => name,
                label => t.get(&format!("{label_prefix}{name}")),
                url => link(path, &[(param, Some(name))]),
                current => current.as_deref() == Some(*name),
            }
        })
        .collect()
}
