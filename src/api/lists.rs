//! The lists of a merchant's customers, memberships, invoices and events (DESIGN §10), newest
//! first, a page at a time ([`super::pagination`]), each record as its single-record `GET`
//! answers it. Filters are exact (an e-mail in any letter case) or a prefix (`q`); a key of a
//! customer or membership the merchant does not have filters everything out (an empty page, not
//! a 404: a filter is a condition on the list, not a resource).

use axum::extract::State;
use axum::Json;
use recur_domain::status::{InvoiceStatus, MembershipStatus};
use recur_domain::validation::{self as rules, FieldErrors};
use serde::Deserialize;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::customers::CustomerRecord;
use super::events::EventRecord;
use super::extract::AuthMerchant;
use super::invoices::InvoiceDocument;
use super::membership_records::{CreditNotes, MembershipRecord};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::events::Action;
use crate::http::input::Field;
use crate::http::pagination::{text, Given, ListQuery, ListScope, PageParams};
use crate::state::AppState;
use crate::store::customers::Customer;
use crate::store::events::{self, Event, EventStatus};
use crate::store::invoices::{self, RECENT_INVOICES};
use crate::store::memberships::Membership;
use crate::store::{credit_notes, customers, memberships, refunds};

/// A value a filter names by one of a fixed set of names.
pub trait Named: Copy + 'static {
    /// Every value.
    fn all() -> &'static [Self];
    /// Its name, as filters and records spell it.
    fn name(self) -> &'static str;
}

impl Named for MembershipStatus {
    fn all() -> &'static [Self] {
        &MembershipStatus::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for InvoiceStatus {
    fn all() -> &'static [Self] {
        &InvoiceStatus::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for EventStatus {
    fn all() -> &'static [Self] {
        &EventStatus::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for Action {
    fn all() -> &'static [Self] {
        &Action::ALL
    }
    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// The OpenAPI schema of a parameter that takes one of `T`'s names, built from `T` itself.
fn names_schema<T: Named>() -> RefOr<Schema> {
    let names: Vec<&str> = T::all().iter().map(|v| v.name()).collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
        .into()
}

/// Declares `$schema`, the OpenAPI schema of a parameter taking one of `$named`'s names.
macro_rules! names_schema {
    ($(#[$doc:meta])* $schema:ident, $named:ty) => {
        $(#[$doc])*
        pub struct $schema;

        impl PartialSchema for $schema {
            fn schema() -> RefOr<Schema> {
                names_schema::<$named>()
            }
        }

        impl ToSchema for $schema {}
    };
}

names_schema!(
    /// A membership status.
    MembershipStatusName,
    MembershipStatus
);
names_schema!(
    /// An invoice status.
    InvoiceStatusName,
    InvoiceStatus
);
names_schema!(
    /// A webhook event's `Action`.
    ActionName,
    Action
);
names_schema!(
    /// Where an event's delivery stands.
    DeliveryStatusName,
    EventStatus
);

/// The value of an optional parameter that is one of `T`'s names, spelled exactly; anything
/// else is a 400 on `name` that lists them.
fn one_of<T: Named>(param: Field<Given>, name: &str, errors: &mut FieldErrors) -> Option<T> {
    let given = text(param, name, errors)?;
    let found = T::all().iter().copied().find(|v| v.name() == given);
    if found.is_none() {
        let names: Vec<&str> = T::all().iter().map(|v| v.name()).collect();
        errors.add(name, format!("must be one of {}", names.join(", ")));
    }
    found
}

/// Filters of `GET /customers`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CustomerFilters {
    /// Only the customer with this e-mail, in any letter case (as a create compares it).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    email: Field<Given>,
    /// Only customers whose e-mail, first name or last name starts with this text, in any
    /// letter case (its first 100 characters count).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    q: Field<Given>,
}

/// Filters of `GET /memberships`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MembershipFilters {
    /// Only memberships in this status.
    #[serde(default)]
    #[param(inline, value_type = Option<MembershipStatusName>)]
    status: Field<Given>,
    /// Only the memberships of this customer (`cstmr_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    customer_key: Field<Given>,
}

/// Filters of `GET /invoices`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct InvoiceFilters {
    /// Only invoices in this status.
    #[serde(default)]
    #[param(inline, value_type = Option<InvoiceStatusName>)]
    status: Field<Given>,
    /// Only the invoices of this membership (`mmbrshp_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    membership_key: Field<Given>,
    /// Only the invoices of this customer's memberships (`cstmr_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    customer_key: Field<Given>,
}

impl InvoiceFilters {
    /// Only the invoices of the customer with this key.
    pub fn of_customer(customer_key: &str) -> Self {
        Self {
            status: Field::Absent,
            membership_key: Field::Absent,
            customer_key: Field::Present(Given(customer_key.to_string())),
        }
    }

    /// Only the invoices of the membership with this key.
    pub fn of_membership(membership_key: &str) -> Self {
        Self {
            status: Field::Absent,
            membership_key: Field::Present(Given(membership_key.to_string())),
            customer_key: Field::Absent,
        }
    }
}

/// Filters of `GET /events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct EventFilters {
    /// Only events with this `Action`.
    #[serde(default, rename = "type")]
    #[param(inline, value_type = Option<ActionName>)]
    action: Field<Given>,
    /// Only the events of this membership (`mmbrshp_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    membership_key: Field<Given>,
    /// Only events whose delivery to the membership's `webhookUrl` is in this status.
    #[serde(default)]
    #[param(inline, value_type = Option<DeliveryStatusName>)]
    delivery_status: Field<Given>,
}

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
    let (rows, next) = customer_page(&state, auth.merchant_id, page, filters).await?;
    let records = rows.into_iter().map(CustomerRecord::from).collect();
    Ok(Json(Page::new(records, next)))
}

/// The page of the merchant's customers that `page` and `filters` ask for, and the cursor of
/// the next: `GET /customers` and the dashboard's search.
pub async fn customer_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: CustomerFilters,
) -> Result<(Vec<Customer>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let filter = customers::Filter {
        email_identity: text(filters.email, "email", &mut errors)
            .map(|email| rules::email_identity(&email)),
        prefix: text(filters.q, "q", &mut errors).map(|q| customers::search_key(&q)),
    };
    let scope = ListScope::new(
        "customers",
        merchant_id,
        &[
            ("email", filter.email_identity.as_deref()),
            ("q", filter.prefix.as_deref()),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = customers::page(state.store.pool(), merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |c| c.id))
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
    let (rows, next) = membership_page(&state, auth.merchant_id, page, filters).await?;
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

/// The page of the merchant's memberships that `page` and `filters` ask for, and the cursor of
/// the next: `GET /memberships` and the dashboard's memberships list.
pub async fn membership_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: MembershipFilters,
) -> Result<(Vec<Membership>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let filter = memberships::list::Filter {
        status: one_of(filters.status, "status", &mut errors),
        customer_key: text(filters.customer_key, "customerKey", &mut errors),
    };
    let scope = ListScope::new(
        "memberships",
        merchant_id,
        &[
            ("status", filter.status.map(MembershipStatus::name)),
            ("customerKey", filter.customer_key.as_deref()),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let pool = state.store.pool();
    let rows = memberships::list::page(pool, merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |m| m.id))
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
    let (rows, next) = invoice_page(&state, auth.merchant_id, page, filters).await?;
    let pool = state.store.pool();
    let ids: Vec<i64> = rows.iter().map(|listed| listed.invoice.id).collect();
    let mut refunds = refunds::of_invoices(pool, &ids).await?;
    let mut notes = credit_notes::of_invoices(pool, auth.merchant_id, &ids).await?;
    let now = state.clock.now();
    let records = rows
        .into_iter()
        .map(|listed| {
            let given_back = refunds.remove(&listed.invoice.id).unwrap_or_default();
            let credited = notes.remove(&listed.invoice.id).unwrap_or_default();
            InvoiceDocument::new(
                &state,
                &listed.invoice,
                (listed.membership_key, listed.customer_key),
                &given_back,
                &credited,
                now,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(Json(Page::new(records, next)))
}

/// The page of the merchant's invoices that `page` and `filters` ask for, and the cursor of the
/// next: `GET /invoices` and the dashboard's customer and membership pages.
pub async fn invoice_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: InvoiceFilters,
) -> Result<(Vec<invoices::Listed>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let filter = invoices::Filter {
        status: one_of(filters.status, "status", &mut errors),
        membership_key: text(filters.membership_key, "membershipKey", &mut errors),
        customer_key: text(filters.customer_key, "customerKey", &mut errors),
    };
    let scope = ListScope::new(
        "invoices",
        merchant_id,
        &[
            ("status", filter.status.map(InvoiceStatus::name)),
            ("membershipKey", filter.membership_key.as_deref()),
            ("customerKey", filter.customer_key.as_deref()),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = invoices::page(state.store.pool(), merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |listed| listed.invoice.id))
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
    let (rows, next) = event_page(&state, auth.merchant_id, page, filters).await?;
    let pool = state.store.pool();
    let ids: Vec<i64> = rows.iter().map(|event| event.id).collect();
    let mut attempts = events::attempts_of(pool, &ids).await?;
    let records = rows
        .into_iter()
        .map(|event| {
            let made = attempts.remove(&event.id).unwrap_or_default();
            EventRecord::new(event, made)
        })
        .collect();
    Ok(Json(Page::new(records, next)))
}

/// The page of the merchant's events that `page` and `filters` ask for, without their
/// attempts, and the cursor of the next: `GET /events` and the dashboard's events list.
pub async fn event_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: EventFilters,
) -> Result<(Vec<Event>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let action: Option<Action> = one_of(filters.action, "type", &mut errors);
    let filter = events::Filter {
        action: action.map(|a| a.name().to_string()),
        membership_key: text(filters.membership_key, "membershipKey", &mut errors),
        status: one_of(filters.delivery_status, "deliveryStatus", &mut errors),
    };
    let scope = ListScope::new(
        "events",
        merchant_id,
        &[
            ("type", filter.action.as_deref()),
            ("membershipKey", filter.membership_key.as_deref()),
            ("deliveryStatus", filter.status.map(EventStatus::name)),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = events::page(state.store.pool(), merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |event| event.id))
}
