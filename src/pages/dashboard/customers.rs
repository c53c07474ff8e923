//! The dashboard's customers: the search (by e-mail, or a prefix of the e-mail or a name — the
//! filters and cursors of `GET /customers`, through [`lists::customer_page`]) and a customer's
//! page with their details ([`customers::customer`]), memberships, invoices, card and SEPA
//! mandates ([`mandates::of_customer`]).

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::money::{display_amount, Currency};
use recur_domain::status::InvoiceStatus;

use super::staff::Staff;
use super::{framed, link, or_bad_request, param, without_empty};
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::format::{display_date, interval_phrase};
use crate::pages::invoice_view::shown_number;
use crate::pages::{notice, session};
use crate::services::lists::{self, CustomerFilters, InvoiceFilters};
use crate::services::sepa::mandates::{self, CustomerMandate};
use crate::services::{customers, ServiceError};
use crate::state::AppState;
use crate::store::customers::Customer;
use crate::store::invoices::Listed;
use crate::store::memberships::{self, Membership};
use crate::store::payment_methods;

/// `GET /dashboard/customers?q=&email=&cursor=`: the merchant's customers, newest first, a page
/// at a time; `q` keeps those whose e-mail, first or last name starts with it (any case),
/// `email` the one with that e-mail.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let query = without_empty(query.as_deref());
    let ListQuery(page) = ListQuery::<PageParams>::parse(&query)?;
    let ListQuery(filters) = ListQuery::<CustomerFilters>::parse(&query)?;
    let found = lists::customer_page(&state, staff.merchant.id, page, filters).await;
    let (rows, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let next_url = next.as_deref().map(|cursor| {
        link(
            "/dashboard/customers",
            &[
                ("q", param(&query, "q").as_deref()),
                ("email", param(&query, "email").as_deref()),
                ("cursor", Some(cursor)),
            ],
        )
    });
    framed(
        &state,
        &staff,
        t,
        "dashboard/customers.html",
        "customers",
        context! {
            q => param(&query, "q").or_else(|| param(&query, "email")),
            customers => rows.iter().map(|c| customer_row(c, lang)).collect::<Vec<_>>(),
            next_url => next_url,
        },
    )
}

fn customer_row(c: &Customer, lang: &str) -> Value {
    context! {
        key => c.customer_key,
        name => format!("{} {}", c.fields.first_name, c.fields.last_name),
        email => c.fields.email,
        created => display_date(c.created_at, lang),
        url => format!("/dashboard/customers/{}", c.customer_key),
    }
}

/// `GET /dashboard/customers/{customerKey}?cursor=`: the customer's details, memberships, card,
/// SEPA mandates (newest first) and invoices (newest first, a page at a time). Another
/// merchant's customer is the 404 page.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(customer_key): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let lang = i18n::lang(t);
    let merchant_id = staff.merchant.id;
    let customer = match customers::customer(&state, merchant_id, &customer_key).await {
        Ok(customer) => customer,
        Err(ServiceError::NotFound) => return notice::not_found(&state, t),
        Err(other) => return Err(other.into()),
    };
    let ListQuery(page) = ListQuery::<PageParams>::parse(&without_empty(query.as_deref()))?;
    let found = lists::invoice_page(
        &state,
        merchant_id,
        page,
        InvoiceFilters::of_customer(&customer_key),
    )
    .await;
    let (invoices, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let pool = state.store.pool();
    let list = memberships::for_customer(pool, merchant_id, customer.id).await?;
    let card = payment_methods::current(pool, merchant_id, customer.id).await?;
    let current = card.as_ref().map(|c| c.id);
    let mandates = mandates::of_customer(&state, merchant_id, customer.id).await?;
    let fields = &customer.fields;
    framed(
        &state,
        &staff,
        t,
        "dashboard/customer.html",
        "customers",
        context! {
            customer => context! {
                key => customer.customer_key,
                name => format!("{} {}", fields.first_name, fields.last_name),
                email => fields.email,
                phone => fields.phone,
                country => fields.country_code,
                created => display_date(customer.created_at, lang),
            },
            memberships => list.iter().map(|m| membership_row(t, lang, m)).collect::<Vec<_>>(),
            card => card.map(|c| context! { brand => c.brand, last4 => c.last4 }),
            mandates => mandates.iter().map(|m| mandate_row(lang, m, current)).collect::<Vec<_>>(),
            invoices => invoice_rows(t, lang, &invoices),
            next_url => next.as_deref().map(|cursor| link(
                &format!("/dashboard/customers/{customer_key}"),
                &[("cursor", Some(cursor))],
            )),
        },
    )
}

/// A mandate as the customer's page lists it; `current` is the customer's current payment
/// method.
fn mandate_row(lang: &str, m: &CustomerMandate, current: Option<i64>) -> Value {
    let mandate = &m.listed.mandate;
    context! {
        reference => mandate.mandate_reference,
        holder => mandate.account_holder,
        iban_last4 => m.listed.iban_last4,
        signed => display_date(mandate.signed_at, lang),
        processor => m.processor_name,
        revoked => mandate.revoked_at.map(|at| display_date(at, lang)),
        current => current == Some(mandate.payment_method_id),
    }
}

/// A membership as the dashboard lists it: plan, status, amount, period and its page.
pub(super) fn membership_row(t: &BTreeMap<String, String>, lang: &str, m: &Membership) -> Value {
    let status = m.state.status.as_str();
    context! {
        key => m.membership_key,
        plan => m.subscription_name,
        status => status,
        status_label => t.get(&format!("status_{status}")),
        amount => display_amount(m.state.price.total, m.currency(), lang),
        interval => interval_phrase(t, m.state.cycle.interval_type, m.state.cycle.interval_count),
        period => m.state.current_period.map(|p| context! {
            start => display_date(p.start, lang),
            end => display_date(p.end, lang),
        }),
        url => format!("/dashboard/memberships/{}", m.membership_key),
    }
}

/// Invoices as the dashboard lists them.
pub(super) fn invoice_rows(
    t: &BTreeMap<String, String>,
    lang: &str,
    rows: &[Listed],
) -> Vec<Value> {
    rows.iter()
        .map(|listed| {
            let i = &listed.invoice;
            let status = i.status.as_str();
            let money = |minor: i64| {
                Currency::parse(&i.currency)
                    .map(|currency| display_amount(minor, currency, lang))
                    .unwrap_or_else(|_| format!("{minor} {}", i.currency))
            };
            context! {
                number => shown_number(i),
                date => display_date(i.created_at, lang),
                period => i.period.map(|p| format!(
                    "{} – {}",
                    display_date(p.start, lang),
                    display_date(p.end, lang)
                )),
                amount => money(i.amount_due),
                refunded => (i.amount_refunded > 0).then(|| money(i.amount_refunded)),
                status => status,
                status_label => t.get(&format!("invoice_status_{status}")),
                paid => i.paid_at.map(|at| display_date(at, lang)),
                membership_url => format!("/dashboard/memberships/{}", listed.membership_key),
                url => format!("/dashboard/invoices/{}", i.invoice_key),
                pdf_url => format!("/dashboard/invoices/{}/pdf", i.invoice_key),
                refund_url => (i.status == InvoiceStatus::Paid
                    && i.amount_paid > i.amount_refunded)
                    .then(|| format!(
                        "/dashboard/memberships/{}/invoices/{}/refund",
                        listed.membership_key, i.invoice_key
                    )),
            }
        })
        .collect()
}
