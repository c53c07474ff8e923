//! The lists of a merchant's customers, memberships, invoices and events (DESIGN §10), newest
//! first, a page at a time, over [`crate::services::lists`], each record as its single-record
//! `GET` answers it.

use axum::extract::State;
use axum::Json;

use super::customers::CustomerRecord;
use super::events::EventRecord;
use super::extract::AuthMerchant;
use super::invoices::InvoiceDocument;
use super::membership_records::{CreditNotes, MembershipRecord};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::lists::{
    self, CustomerFilters, EventFilters, InvoiceFilters, MembershipFilters,
};
use crate::services::{events, invoices as invoice_details};
use crate::state::AppState;
use crate::store::invoices::{self, RECENT_INVOICES};

// The schema of an event's `Action` that webhook endpoints' filters name too.

/// Lists the merchant's customers, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/customers",
    tag = "customers",
    params(PageParams, CustomerFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of customers, newest first", body = Page<CustomerRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an empty filter, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_customers(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<CustomerFilters>,
) -> Result<Json<Page<CustomerRecord>>, ApiError> {
    let (rows, next) = lists::customer_page(&state, auth.merchant_id, page, filters).await?;
    let records = rows.into_iter().map(CustomerRecord::from).collect();
    Ok(Json(Page::new(records, next)))
}

/// Lists the merchant's memberships, newest first, a page at a time; each with its latest
/// invoices, as `GET /membership/{membershipKey}` answers it.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/memberships",
    tag = "memberships",
    params(PageParams, MembershipFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of memberships, newest first; an unknown customerKey gives an empty page", body = Page<MembershipRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an unknown status, an empty filter, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_memberships(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<MembershipFilters>,
) -> Result<Json<Page<MembershipRecord>>, ApiError> {
    let (rows, next) = lists::membership_page(&state, auth.merchant_id, page, filters).await?;
    let pool = state.store.pool();
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    let recent = invoices::recent_many(pool, &ids, RECENT_INVOICES).await?;
    let mut notes = CreditNotes::of(&state, auth.merchant_id, recent.values().flatten()).await?;
    let records = rows
        .iter()
        .map(|m| {
            let invoices = recent.get(&m.id).map_or(&[][..], Vec::as_slice);
            MembershipRecord::new(m, invoices, &mut notes)
        })
        .collect();
    Ok(Json(Page::new(records, next)))
}

/// Lists the merchant's invoices, newest first, a page at a time; each as
/// `GET /invoice/{invoiceKey}` answers it.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/invoices",
    tag = "invoices",
    params(PageParams, InvoiceFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of invoices, newest first; an unknown membershipKey or customerKey gives an empty page", body = Page<InvoiceDocument>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an unknown status, an empty filter, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_invoices(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<InvoiceFilters>,
) -> Result<Json<Page<InvoiceDocument>>, ApiError> {
    let (rows, next) = lists::invoice_page(&state, auth.merchant_id, page, filters).await?;
    let details = invoice_details::details(&state, auth.merchant_id, rows).await?;
    let now = state.clock.now();
    let records = details
        .into_iter()
        .map(|detail| InvoiceDocument::new(&state, detail, now))
        .collect::<Result<_, _>>()?;
    Ok(Json(Page::new(records, next)))
}

/// Lists the merchant's webhook events (of memberships and of cashier orders), newest first, a
/// page at a time; each with its delivery attempts, as
/// `GET /membership/{membershipKey}/events` answers it.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/events",
    tag = "events",
    params(PageParams, EventFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of events, newest first; an unknown membershipKey gives an empty page", body = Page<EventRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an unknown type or deliveryStatus, an empty filter, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_events(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<EventFilters>,
) -> Result<Json<Page<EventRecord>>, ApiError> {
    let (rows, next) = lists::event_page(&state, auth.merchant_id, page, filters).await?;
    let records = events::with_attempts(&state, rows)
        .await?
        .into_iter()
        .map(|(event, attempts)| EventRecord::new(event, attempts))
        .collect();
    Ok(Json(Page::new(records, next)))
}
