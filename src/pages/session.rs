//! Finding the checkout or portal session behind a page's link, and what every page of it needs:
//! the merchant and its brand (and how its portal switches prices), the customer, the merchant's
//! time and the visitor's language; and the card a customer enters on such a page (or their
//! saved card), through the identity-confirmation step when the card asks for one.

use std::collections::BTreeMap;

use axum::http::{header, HeaderMap};
use chrono::{DateTime, Utc};

use super::brand::Brand;
use crate::pages::failure::PageError;
use crate::services::checkout;
use crate::state::AppState;
use crate::store::checkout_sessions::{self, CheckoutSession, SessionKind};
use crate::store::customers::{self, Customer};
use crate::store::merchant_settings;
use crate::store::merchants::{self, Merchant};
use crate::store::payment_methods::{self, PaymentMethod};
use recur_domain::card_entry::CheckedCard;
use recur_domain::settings::PortalPlanChange;

/// An open session and its surroundings.
pub struct PageSession {
    /// The session.
    pub session: CheckoutSession,
    /// Its merchant.
    pub merchant: Merchant,
    /// How the merchant's pages look.
    pub brand: Brand,
    /// When a price switch in the portal applies (the merchant's `portalPlanChange`).
    pub plan_change: PortalPlanChange,
    /// Its customer.
    pub customer: Customer,
    /// The merchant's current time (its test clock for a sandbox merchant that has one).
    pub now: DateTime<Utc>,
}

/// The session of `token` if it is of `kind` and has not expired.
pub async fn open(
    state: &AppState,
    token: &str,
    kind: SessionKind,
) -> Result<Option<PageSession>, PageError> {
    let digest = state.keys.lookup_digest(token);
    let Some(session) = checkout_sessions::by_token_digest(state.store.pool(), &digest).await?
    else {
        return Ok(None);
    };
    if session.kind != kind {
        return Ok(None);
    }
    let now = state.merchant_now(session.merchant_id).await?;
    if session.expires_at <= now {
        return Ok(None);
    }
    let merchant = merchants::by_id(&state.store, session.merchant_id)
        .await?
        .ok_or(PageError::NotFound)?;
    let customer = customers::by_id(state.store.pool(), session.merchant_id, session.customer_id)
        .await?
        .ok_or(PageError::NotFound)?;
    let settings = merchant_settings::get(state.store.pool(), merchant.id).await?;
    let plan_change = settings.portal_plan_change();
    let brand = Brand::new(&merchant, settings);
    Ok(Some(PageSession {
        session,
        merchant,
        brand,
        plan_change,
        customer,
        now,
    }))
}

/// The visitor's strings, from `Accept-Language`.
pub fn strings<'s>(state: &'s AppState, headers: &HeaderMap) -> &'s BTreeMap<String, String> {
    state.strings.for_accept_language(
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok()),
    )
}

/// A card to pay with on a page: one just entered (saved unattached), or the saved card.
pub enum EnteredCard {
    /// Ready to be charged or attached.
    Ready(Box<PaymentMethod>),
    /// The processor wants the customer to confirm their identity first; the card waits on the
    /// session for [`confirmed_card`].
    NeedsConfirmation,
}

/// Saves `card` for the session's customer (unattached: renewals do not use it yet) and, when the
/// processor asks for an identity check, parks it on the session.
pub async fn enter_card(
    state: &AppState,
    page: &PageSession,
    card: CheckedCard,
) -> Result<EnteredCard, PageError> {
    let merchant_id = page.merchant.id;
    let method = checkout::save_card(
        state,
        merchant_id,
        page.customer.id,
        &card.number,
        false,
        page.now,
    )
    .await?;
    drop(card);
    ready_or_parked(state, page, method).await
}

/// The customer's saved card (the one renewals charge), to pay on a checkout page with one
/// button: ready, or parked for the identity check as an entered card would be. `None` when the
/// customer has no saved card.
pub async fn saved_card(
    state: &AppState,
    page: &PageSession,
) -> Result<Option<EnteredCard>, PageError> {
    let saved =
        payment_methods::current(state.store.pool(), page.merchant.id, page.customer.id).await?;
    match saved {
        Some(method) => Ok(Some(ready_or_parked(state, page, method).await?)),
        None => Ok(None),
    }
}

/// `method` ready to pay, or, when the sandbox processor asks the customer to confirm their
/// identity first, parked on the session for [`confirmed_card`]. A card a Stripe account holds
/// is always ready: Stripe asks for authentication in its answer to the payment.
async fn ready_or_parked(
    state: &AppState,
    page: &PageSession,
    method: PaymentMethod,
) -> Result<EnteredCard, PageError> {
    if method.processor_id.is_none()
        && state
            .processor
            .requires_authentication(page.merchant.id, &method.processor_token)
            .await?
    {
        checkout_sessions::set_challenge(state.store.pool(), &page.session, Some(method.id))
            .await?;
        return Ok(EnteredCard::NeedsConfirmation);
    }
    Ok(EnteredCard::Ready(Box::new(method)))
}

/// The card waiting for the identity check, if any, taken off the session (each check is
/// answered once).
pub async fn confirmed_card(
    state: &AppState,
    page: &PageSession,
) -> Result<Option<PaymentMethod>, PageError> {
    let Some(id) = page
        .session
        .pending_payment_method_id
        .filter(|_| page.session.challenge_pending)
    else {
        return Ok(None);
    };
    checkout_sessions::set_challenge(state.store.pool(), &page.session, None).await?;
    Ok(payment_methods::get(state.store.pool(), page.merchant.id, id).await?)
}

/// The card the identity-check page shows.
pub async fn card_awaiting_confirmation(
    state: &AppState,
    page: &PageSession,
) -> Result<Option<PaymentMethod>, PageError> {
    match page.session.pending_payment_method_id {
        Some(id) => Ok(payment_methods::get(state.store.pool(), page.merchant.id, id).await?),
        None => Ok(None),
    }
}
