//! The customer portal behind a portal session's link, `/portal/{token}`: the customer's
//! memberships with plan, price, status and next billing date, and for those with metered
//! prices the usage so far with the chart of the last periods; their invoices, each as an HTML
//! page and a PDF; replacing the card; cancelling a membership (after a confirmation, at once,
//! as the spec says); paying what is overdue; switching to another price of the product
//! ([`switch`]); and the way back to the merchant.

mod stripe_card;
pub mod switch;

pub use stripe_card::replace_with_stripe;

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::context;
use recur_domain::money::display_amount;
use recur_domain::status::InvoiceStatus;
use serde::Deserialize;

use super::credit_note_view::credit_note_view;
use super::form::{decline_message, CardForm, CardFormState, PageForm, TokenForm};
use super::format::{display_date, interval_phrase};
use super::invoice_view::{invoice_view, shown_number};
use super::render::{page, with_status, Framing};
use super::session::{self, EnteredCard, PageSession};
use super::stripe_element::{allow_stripe, card_element};
use super::usage::usage_view;
use super::{csrf, expired, invoice_pdf, notice};
use crate::i18n;
use crate::links::{self, Document};
use crate::pages::failure::PageError;
use crate::processor::Verification;
use crate::services::memberships::switch as switching;
use crate::services::usage::usage_summary;
use crate::services::{self, sessions, stripe_cards, ServiceError};
use crate::state::AppState;
use crate::store::checkout_sessions::SessionKind;
use crate::store::credit_notes;
use crate::store::invoices::{self, Invoice};
use crate::store::memberships::{self, Membership};
use crate::store::merchants::Mode;
use crate::store::payment_methods::{self, PaymentMethod};

/// Invoices listed per membership.
const INVOICES_SHOWN: i64 = 24;

/// `?done=` after an action, for the confirmation banner.
#[derive(Debug, Deserialize)]
pub struct Done {
    /// `card`, `canceled`, `switched`, `scheduled`, `dropped` or `changed`.
    pub done: Option<String>,
}

async fn load(
    state: &AppState,
    headers: &HeaderMap,
    token: &str,
) -> Result<Result<PageSession, Response>, PageError> {
    match session::open(state, token, SessionKind::Portal).await? {
        Some(page) => Ok(Ok(page)),
        None => Ok(Err(expired::page_for(
            state,
            session::strings(state, headers),
        )?)),
    }
}

/// The portal session a form was posted for, or the page that refuses the post
/// ([`csrf::accept_post`]).
async fn posted(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    token: &str,
    csrf_token: &str,
) -> Result<Result<PageSession, Response>, PageError> {
    let page = session::open(state, token, SessionKind::Portal).await?;
    csrf::accept_post(state, t, headers, token, csrf_token, page)
}

/// `GET /portal/{token}`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    Query(done): Query<Done>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match load(&state, &headers, &token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let lang = i18n::lang(t);
    let merchant_id = portal.merchant.id;
    let list =
        memberships::for_customer(state.store.pool(), merchant_id, portal.customer.id).await?;
    let mut cards = Vec::new();
    for m in &list {
        let invoices = invoices::recent(state.store.pool(), m.id, INVOICES_SHOWN).await?;
        let offers = switching::offers(&state, portal.plan_change, m).await?;
        let usage = usage_summary(&state, m)
            .await?
            .map(|u| usage_view(t, lang, &u));
        cards.push(membership_card(
            t, lang, &token, m, &invoices, &offers, usage,
        ));
    }
    let card =
        payment_methods::current(state.store.pool(), merchant_id, portal.customer.id).await?;
    let banner = match done.done.as_deref() {
        Some("card") => t.get("portal_card_updated"),
        Some("canceled") => t.get("portal_canceled"),
        Some("switched") => t.get("portal_switched"),
        Some("scheduled") => t.get("portal_switch_scheduled"),
        Some("dropped") => t.get("portal_pending_dropped"),
        Some("changed") => t.get("portal_switch_changed"),
        _ => None,
    };
    page(
        &state,
        StatusCode::OK,
        "portal.html",
        context! {
            t => t,
            customer_name => format!("{} {}", portal.customer.fields.first_name, portal.customer.fields.last_name),
            email => portal.customer.fields.email,
            memberships => cards,
            card => card.map(|c| context! { brand => c.brand, last4 => c.last4 }),
            card_url => format!("/portal/{token}/payment-method"),
            return_url => portal.session.return_url,
            banner => banner,
            csrf_token => csrf::form_token(&state.keys, &token),
        },
        Some(&portal.brand),
        Framing::Deny,
    )
}

fn membership_card(
    t: &BTreeMap<String, String>,
    lang: &str,
    token: &str,
    m: &Membership,
    invoices: &[Invoice],
    offers: &[switching::Offer],
    usage: Option<minijinja::Value>,
) -> minijinja::Value {
    let currency = m.currency();
    let money = |minor: i64| display_amount(minor, currency, lang);
    let status = m.state.status.as_str();
    context! {
        key => m.membership_key,
        name => m.subscription_name,
        price => money(m.state.price.total),
        interval => interval_phrase(t, m.state.cycle.interval_type, m.state.cycle.interval_count),
        status => status,
        status_label => t.get(&format!("status_{status}")),
        next_billing => m.state.next_billing_date().map(|at| display_date(at, lang)),
        period_end => m.state.current_period.map(|p| display_date(p.end, lang)),
        canceled_at => m.state.canceled_at.map(|at| display_date(at, lang)),
        can_cancel => !m.state.status.is_terminal(),
        can_pay => m.state.status.pays_open_invoice() && invoices.iter().any(|i| i.status == InvoiceStatus::Open),
        cancel_url => format!("/portal/{token}/memberships/{}/cancel", m.membership_key),
        pay_url => format!("/portal/{token}/memberships/{}/pay", m.membership_key),
        offers => offers.iter().map(|o| switch::offer_view(t, lang, token, m, o)).collect::<Vec<_>>(),
        pending => switch::pending_view(t, lang, token, m),
        usage => usage,
        invoices => invoices.iter().map(|i| {
            let status = i.status.as_str();
            context! {
                number => shown_number(i),
                date => display_date(i.created_at, lang),
                amount => money(i.amount_due),
                status => status,
                status_label => t.get(&format!("invoice_status_{status}")),
                url => format!("/portal/{token}/invoices/{}", i.invoice_key),
                pdf_url => format!("/portal/{token}/invoices/{}/pdf", i.invoice_key),
            }
        }).collect::<Vec<_>>(),
    }
}

/// The customer's invoice with this key, with its membership; `None` for anyone else's.
async fn customers_invoice(
    state: &AppState,
    portal: &PageSession,
    invoice_key: &str,
) -> Result<Option<(Invoice, Membership)>, PageError> {
    let merchant_id = portal.merchant.id;
    let Some(invoice) = invoices::by_key(state.store.pool(), merchant_id, invoice_key).await?
    else {
        return Ok(None);
    };
    let membership =
        memberships::by_id(state.store.pool(), merchant_id, invoice.membership_id).await?;
    Ok(membership
        .filter(|m| m.customer_id == portal.customer.id)
        .map(|m| (invoice, m)))
}

/// `GET /portal/{token}/invoices/{invoiceKey}`: the invoice as a printable page.
pub async fn invoice_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, invoice_key)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match load(&state, &headers, &token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let Some((invoice, m)) = customers_invoice(&state, &portal, &invoice_key).await? else {
        return notice::not_found(&state, t);
    };
    let view = invoice_view(t, &portal.brand, &portal.customer, &m, &invoice);
    let merchant_id = portal.merchant.id;
    let notes = credit_notes::of_invoice(state.store.pool(), merchant_id, invoice.id).await?;
    let now = state.clock.now();
    let notes: Vec<_> = notes
        .iter()
        .map(|note| {
            let key = &note.credit_note_key;
            let url = links::document_url(&state, merchant_id, Document::CreditNote, key, now);
            credit_note_view(t, &view, note, url)
        })
        .collect();
    page(
        &state,
        StatusCode::OK,
        "invoice.html",
        context! {
            t => t,
            invoice => view,
            credit_notes => notes,
            pdf_url => format!("/portal/{token}/invoices/{invoice_key}/pdf"),
            back_url => format!("/portal/{token}"),
        },
        Some(&portal.brand),
        Framing::Deny,
    )
}

/// `GET /portal/{token}/invoices/{invoiceKey}/pdf`: the invoice as a PDF download.
pub async fn invoice_pdf(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, invoice_key)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match load(&state, &headers, &token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let Some((invoice, m)) = customers_invoice(&state, &portal, &invoice_key).await? else {
        return notice::not_found(&state, t);
    };
    let view = invoice_view(t, &portal.brand, &portal.customer, &m, &invoice);
    invoice_pdf::download(&view, t, &invoice.invoice_key)
}

/// `GET /portal/{token}/payment-method`: the form for a new card.
pub async fn card_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match load(&state, &headers, &token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    if portal.session.challenge_pending {
        return challenge_page(&state, t, &portal, &token).await;
    }
    card_form(&state, t, &portal, &token, CardFormState::default()).await
}

/// `POST /portal/{token}/payment-method`: checks the new card with the issuer and makes it the
/// payment method, after the identity-confirmation step when the card asks for one.
pub async fn replace_card(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<CardForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match posted(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let card = match form.check(portal.now, t) {
        Ok(card) => card,
        Err(errors) => {
            return card_form(
                &state,
                t,
                &portal,
                &token,
                CardFormState::rejected(&form, errors),
            )
            .await
            .map(|r| with_status(r, StatusCode::BAD_REQUEST));
        }
    };
    match session::enter_card(&state, &portal, card).await? {
        EnteredCard::Ready(method) => verify_and_attach(&state, t, &portal, &token, &method).await,
        EnteredCard::NeedsConfirmation => {
            Ok(Redirect::to(&format!("/portal/{token}/payment-method")).into_response())
        }
    }
}

/// `POST /portal/{token}/payment-method/confirm`: the outcome of the identity-confirmation step.
pub async fn confirm_card(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match posted(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let Some(method) = session::confirmed_card(&state, &portal).await? else {
        return Ok(Redirect::to(&format!("/portal/{token}/payment-method")).into_response());
    };
    if form.action != "confirm" {
        let failed = CardFormState::with_message(t.get("challenge_failed").cloned());
        return card_form(&state, t, &portal, &token, failed)
            .await
            .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED));
    }
    verify_and_attach(&state, t, &portal, &token, &method).await
}

async fn verify_and_attach(
    state: &AppState,
    t: &BTreeMap<String, String>,
    portal: &PageSession,
    token: &str,
    method: &PaymentMethod,
) -> Result<Response, PageError> {
    let merchant_id = portal.merchant.id;
    match state
        .processor
        .verify(merchant_id, &method.processor_token)
        .await?
    {
        Verification::Valid => {
            let mut tx = state.store.begin().await?;
            payment_methods::attach(&mut tx, merchant_id, method.id, portal.now).await?;
            tx.commit().await?;
            Ok(Redirect::to(&format!("/portal/{token}?done=card")).into_response())
        }
        Verification::Refused { code, .. } => {
            let refused = CardFormState::with_message(Some(decline_message(t, &code)));
            card_form(state, t, portal, token, refused)
                .await
                .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED))
        }
    }
}

/// The form for a new card: Stripe's card Element when the merchant's default card processor
/// is a Stripe account, recur's card fields otherwise.
async fn card_form(
    state: &AppState,
    t: &BTreeMap<String, String>,
    portal: &PageSession,
    token: &str,
    form: CardFormState,
) -> Result<Response, PageError> {
    let stripe = stripe_cards::setup(state, portal.merchant.id, &portal.customer)
        .await?
        .map(|setup| {
            let action = format!("/portal/{token}/payment-method/stripe");
            card_element(state, &setup, action)
        });
    let uses_stripe = stripe.is_some();
    page(
        state,
        StatusCode::OK,
        "portal_card.html",
        context! {
            t => t,
            action => format!("/portal/{token}/payment-method"),
            back_url => format!("/portal/{token}"),
            csrf_token => csrf::form_token(&state.keys, token),
            errors => form.errors,
            message => form.message,
            holder => form.holder_or(&portal.customer.fields),
            expiry => form.expiry,
            stripe => stripe,
        },
        Some(&portal.brand),
        Framing::Deny,
    )
    .map(|r| {
        if uses_stripe {
            allow_stripe(r, state)
        } else {
            r
        }
    })
}

async fn challenge_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    portal: &PageSession,
    token: &str,
) -> Result<Response, PageError> {
    let card = session::card_awaiting_confirmation(state, portal).await?;
    page(
        state,
        StatusCode::OK,
        "challenge.html",
        context! {
            t => t,
            plan => context! {},
            card => card.map(|c| context! { brand => c.brand, last4 => c.last4 }),
            action => format!("/portal/{token}/payment-method/confirm"),
            csrf_token => csrf::form_token(&state.keys, token),
            sandbox => portal.merchant.mode == Mode::Sandbox,
        },
        Some(&portal.brand),
        Framing::Deny,
    )
}

/// The customer's membership with this key; `None` for anyone else's.
async fn customers_membership(
    state: &AppState,
    portal: &PageSession,
    key: &str,
) -> Result<Option<Membership>, PageError> {
    Ok(
        memberships::get(state.store.pool(), portal.merchant.id, key)
            .await?
            .filter(|m| m.customer_id == portal.customer.id),
    )
}

/// The portal session and the customer's membership `key` names, or the page to answer instead:
/// the session's error page, the refusal of a forged post, or the 404 for a key that is not this
/// customer's. `csrf_token` is a posted form's token, `None` for a page read with `GET`.
async fn portal_membership(
    state: &AppState,
    headers: &HeaderMap,
    token: &str,
    key: &str,
    csrf_token: Option<&str>,
) -> Result<Result<(PageSession, Membership), Response>, PageError> {
    let t = session::strings(state, headers);
    let opened = match csrf_token {
        None => load(state, headers, token).await?,
        Some(csrf_token) => posted(state, t, headers, token, csrf_token).await?,
    };
    let portal = match opened {
        Ok(portal) => portal,
        Err(page) => return Ok(Err(page)),
    };
    match customers_membership(state, &portal, key).await? {
        Some(m) => Ok(Ok((portal, m))),
        None => notice::not_found(state, t).map(Err),
    }
}

/// `GET /portal/{token}/memberships/{key}/cancel`: asks for confirmation.
pub async fn cancel_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (portal, m) = match portal_membership(&state, &headers, &token, &key, None).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    if m.state.status.is_terminal() {
        return Ok(Redirect::to(&format!("/portal/{token}")).into_response());
    }
    let lang = i18n::lang(t);
    page(
        &state,
        StatusCode::OK,
        "portal_cancel.html",
        context! {
            t => t,
            name => m.subscription_name,
            price => display_amount(m.state.price.total, m.currency(), lang),
            interval => interval_phrase(t, m.state.cycle.interval_type, m.state.cycle.interval_count),
            action => format!("/portal/{token}/memberships/{key}/cancel"),
            back_url => format!("/portal/{token}"),
            csrf_token => csrf::form_token(&state.keys, &token),
        },
        Some(&portal.brand),
        Framing::Deny,
    )
}

/// `POST /portal/{token}/memberships/{key}/cancel`: cancels at once (no more charges; open
/// invoices Void but a failed renewal's), then back to the portal.
pub async fn cancel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key)): Path<(String, String)>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let (portal, m) =
        match portal_membership(&state, &headers, &token, &key, Some(&form.csrf_token)).await? {
            Ok(found) => found,
            Err(page) => return Ok(page),
        };
    if !m.state.status.is_terminal() {
        services::memberships::cancel(&state, portal.merchant.id, &m.membership_key).await?;
    }
    Ok(Redirect::to(&format!("/portal/{token}?done=canceled")).into_response())
}

/// `POST /portal/{token}/memberships/{key}/pay`: opens a checkout for an overdue membership and
/// sends the customer there.
pub async fn pay(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key)): Path<(String, String)>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let (portal, m) =
        match portal_membership(&state, &headers, &token, &key, Some(&form.csrf_token)).await? {
            Ok(found) => found,
            Err(page) => return Ok(page),
        };
    let opened = sessions::open_checkout(
        &state,
        portal.merchant.id,
        portal.customer.id,
        &m,
        Some(format!("{}/portal/{token}", state.public_url)),
        portal.now,
    )
    .await;
    match opened {
        Ok((checkout_token, _)) => {
            Ok(Redirect::to(&format!("/checkout/{checkout_token}")).into_response())
        }
        // Nothing is due (any more): back to the portal, which no longer offers to pay.
        Err(ServiceError::Conflict(_)) => {
            Ok(Redirect::to(&format!("/portal/{token}")).into_response())
        }
        Err(other) => Err(other.into()),
    }
}
