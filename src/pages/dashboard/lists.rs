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
use super::staff::Staff;
use super::{framed, link, or_bad_request, param, without_empty};
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::format::display_time;
use crate::pages::session;
use crate::services::lists::{self, EventFilters, InvoiceFilters, MembershipFilters};
use crate::state::AppState;
use crate::store::events::EventStatus;

/// `GET /dashboard/memberships?status=&cursor=`: the merchant's memberships, newest first, a
/// page at a time, all or those in one status.
pub async fn memberships(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
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
    let filter = StatusFilter {
        path: "/dashboard/memberships",
        template: "dashboard/memberships.html",
        nav: "memberships",
        param: "status",
        names: &MembershipStatus::ALL.map(|s| s.as_str()),
        label_prefix: "status_",
    };
    let rows = context! {
        memberships => rows.iter().map(|m| membership_row(t, lang, m)).collect::<Vec<_>>(),
    };
    filter.render(&state, &staff, t, &query, rows, next)
}

/// `GET /dashboard/invoices?status=&cursor=`: the merchant's invoices, newest first, a page at a
/// time, all or those in one status (the overview's revenue links to the paid ones).
pub async fn invoices(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
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
    let filter = StatusFilter {
        path: "/dashboard/invoices",
        template: "dashboard/invoice_list.html",
        nav: "invoices",
        param: "status",
        names: &InvoiceStatus::ALL.map(|s| s.as_str()),
        label_prefix: "invoice_status_",
    };
    let rows = context! { invoices => invoice_rows(t, lang, &rows) };
    filter.render(&state, &staff, t, &query, rows, next)
}

/// `GET /dashboard/events?deliveryStatus=&cursor=`: the merchant's webhook events, newest
/// first, a page at a time, all or those whose delivery is in one status.
pub async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
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
    let filter = StatusFilter {
        path: "/dashboard/events",
        template: "dashboard/events.html",
        nav: "events",
        param: "deliveryStatus",
        names: &EventStatus::ALL.map(|s| s.as_str()),
        label_prefix: "dash_delivery_",
    };
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
    filter.render(&state, &staff, t, &query, context! { events }, next)
}

/// A list filtered by one status parameter: where it is, its template and navigation entry, the
/// parameter, the statuses it takes and the prefix of their labels' strings.
pub(super) struct StatusFilter<'a> {
    pub(super) path: &'a str,
    pub(super) template: &'a str,
    pub(super) nav: &'a str,
    pub(super) param: &'a str,
    pub(super) names: &'a [&'a str],
    pub(super) label_prefix: &'a str,
}

impl StatusFilter<'_> {
    /// The page of the list read with `query`: its `rows` (a context of the template's rows),
    /// the links to each status (the one asked for marked) and the link to the page after, from
    /// the `next` cursor, with the same status.
    pub(super) fn render(
        &self,
        state: &AppState,
        staff: &Staff,
        t: &BTreeMap<String, String>,
        query: &str,
        rows: Value,
        next: Option<String>,
    ) -> Result<Response, PageError> {
        let status = param(query, self.param);
        let statuses: Vec<Value> = self
            .names
            .iter()
            .map(|name| {
                context! {
                    name => name,
                    label => t.get(&format!("{}{name}", self.label_prefix)),
                    url => link(self.path, &[(self.param, Some(name))]),
                    current => status.as_deref() == Some(*name),
                }
            })
            .collect();
        let next_url = next.as_deref().map(|cursor| {
            link(
                self.path,
                &[(self.param, status.as_deref()), ("cursor", Some(cursor))],
            )
        });
        let context = context! { status, statuses, next_url, ..rows };
        framed(state, staff, t, self.template, self.nav, context)
    }
}
