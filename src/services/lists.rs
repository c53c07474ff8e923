//! The lists of a merchant's customers, memberships, invoices and events (DESIGN §10), newest
//! first, a page at a time ([`crate::http::pagination`]), for the API's `GET /customers`,
//! `/memberships`, `/invoices` and `/events` and the dashboard's lists alike. Filters are exact
//! (an e-mail in any letter case) or a prefix (`q`); a key of a customer or membership the
//! merchant does not have filters everything out (an empty page, not a 404: a filter is a
//! condition on the list, not a resource).

use recur_domain::status::{InvoiceStatus, MembershipStatus};
use recur_domain::validation::{self as rules, FieldErrors};
use serde::Deserialize;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::ServiceError;
use crate::events::Action;
use crate::http::input::Field;
use crate::http::pagination::{text, Given, ListScope, PageParams};
use crate::state::AppState;
use crate::store::customers::Customer;
use crate::store::events::{self, Event, EventStatus};
use crate::store::invoices;
use crate::store::memberships::Membership;
use crate::store::{customers, memberships};

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

/// The page of the merchant's customers that `page` and `filters` ask for, and the cursor of
/// the next: `GET /customers` and the dashboard's search.
pub async fn customer_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: CustomerFilters,
) -> Result<(Vec<Customer>, Option<String>), ServiceError> {
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

/// The page of the merchant's memberships that `page` and `filters` ask for, and the cursor of
/// the next: `GET /memberships` and the dashboard's memberships list.
pub async fn membership_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: MembershipFilters,
) -> Result<(Vec<Membership>, Option<String>), ServiceError> {
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

/// The page of the merchant's invoices that `page` and `filters` ask for, and the cursor of the
/// next: `GET /invoices` and the dashboard's customer and membership pages.
pub async fn invoice_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: InvoiceFilters,
) -> Result<(Vec<invoices::Listed>, Option<String>), ServiceError> {
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

/// The page of the merchant's events that `page` and `filters` ask for, without their
/// attempts, and the cursor of the next: `GET /events` and the dashboard's events list.
pub async fn event_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: EventFilters,
) -> Result<(Vec<Event>, Option<String>), ServiceError> {
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
