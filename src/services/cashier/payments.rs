//! The customer's side of an order on the cashier page: the session a link opens, the
//! processors it offers, the amount it pays, the card handed to the processor, the
//! identity-confirmation step a card may ask for, and the payment (or payout) itself under the
//! session's claim.

use std::future::Future;

use chrono::Duration;
use recur_domain::card::CardNumber;
use recur_domain::money::{parse_amount, Currency};

use super::CashierPayment;
use crate::cashier::{orders, CashierError};
use crate::platform::Platform;
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::cashier_sessions::{self, CashierSession, PendingPayment};
use crate::store::cashier_transactions::{CardFacts, CashierTransaction};
use crate::store::processors::{self, PaymentProcessor, ProcessorKind};

/// How long one payment may hold the session before another request may try again.
const CLAIM: Duration = Duration::minutes(2);

/// The session of a valid, unexpired token whose order id matches (open or completed).
pub async fn session(
    state: &AppState,
    token: Option<&str>,
    order_id: Option<&str>,
) -> Result<Option<CashierSession>, ServiceError> {
    let Some(token) = token else { return Ok(None) };
    let session =
        cashier_sessions::by_token_digest(&state.store, &state.keys.lookup_digest(token)).await?;
    Ok(session.filter(|s| {
        s.expires_at > state.clock.now() && order_id == Some(s.fields.order_id.as_str())
    }))
}

/// The processors this session may use, in cascade order: the merchant's, without
/// `disabledPspIds`, only card ones for `creditCardOnly` and payouts, only `m_fixed_pp_id`
/// (`fixed`) when given; no card ones when a Stripe account takes the session's cards
/// (`stripe_takes_cards`, [`super::stripe::offered`]).
pub async fn offered(
    state: &AppState,
    session: &CashierSession,
    fixed: Option<i64>,
    stripe_takes_cards: bool,
) -> Result<Vec<PaymentProcessor>, ServiceError> {
    let all = processors::list(state.store.pool(), session.merchant_id).await?;
    let cards_only = session.fields.credit_card_only || session.fields.is_payout;
    Ok(all
        .into_iter()
        .filter(|p| !session.fields.disabled_psp_ids.contains(&p.processor_id))
        .filter(|p| !cards_only || p.kind == ProcessorKind::Card)
        .filter(|p| !stripe_takes_cards || p.kind != ProcessorKind::Card)
        .filter(|p| fixed.is_none_or(|id| p.processor_id == id))
        .collect())
}

/// What the customer pays (or receives): the session's locked amount, else the amount they
/// typed (a decimal comma is read as a point), in minor units of `currency`; `None` when the
/// typed amount is not one.
pub fn amount(session: &CashierSession, currency: Currency, typed: &str) -> Option<i64> {
    match session.fields.locked_amount {
        Some(locked) => Some(locked),
        None => parse_amount(&typed.trim().replace(',', "."), currency).ok(),
    }
}

/// Hands the card to the processor and keeps what recur may keep of it.
pub async fn card_facts(
    state: &AppState,
    merchant_id: i64,
    number: &CardNumber,
) -> Result<CardFacts, ServiceError> {
    let token = state.processor.tokenize(merchant_id, number).await?;
    let bin = state.processor.bin_info(number.bin()).await?;
    Ok(CardFacts {
        token,
        brand: number.brand().as_str().into(),
        bin: number.bin().into(),
        last4: number.last4().into(),
        fingerprint: state.keys.card_fingerprint(merchant_id, number),
        bin_type: bin.bin_type,
        issuer: bin.issuer,
        country: bin.country,
    })
}

/// Parks `pending` on the session for the identity-confirmation step when its card asks for one
/// (a payout never does): `true` when parked, and the customer answers the step before it is
/// paid.
pub async fn park_for_challenge(
    state: &AppState,
    session: &CashierSession,
    pending: &PendingPayment,
) -> Result<bool, ServiceError> {
    if session.fields.is_payout
        || !state
            .processor
            .requires_authentication(session.merchant_id, &pending.card.token)
            .await?
    {
        return Ok(false);
    }
    cashier_sessions::set_pending(&state.store, session.id, Some(pending)).await?;
    Ok(true)
}

/// Takes the payment parked on the session for the identity-confirmation step off it, to be
/// paid (the customer confirmed) or dropped; `None` when none is parked. A Stripe payment
/// parked with its PaymentIntent is never taken here: only Stripe's answer settles it.
pub async fn take_pending(
    state: &AppState,
    session: &CashierSession,
) -> Result<Option<PendingPayment>, ServiceError> {
    let Some(pending) = session.pending.clone().filter(|p| p.intent.is_none()) else {
        return Ok(None);
    };
    cashier_sessions::set_pending(&state.store, session.id, None).await?;
    Ok(Some(pending))
}

/// Runs the customer's payment (or payout, for a payout session) through the cascade under the
/// session's claim, records it and notifies the merchant (a success closes the session).
/// `None` when the session is claimed already: paid meanwhile (double click, second tab) or a
/// payment in flight. A failure ends the claim and leaves the session open.
pub async fn pay(
    state: &AppState,
    payment: CashierPayment<'_>,
) -> Result<Option<CashierTransaction>, ServiceError> {
    let session = payment.session;
    under_claim(state, session, orders::pay(state, payment)).await
}

/// Runs `work` (a payment of `session`'s) under the session's claim: `None` when another
/// request holds the claim or the session is completed; a failure ends the claim, leaving the
/// session open.
pub(super) async fn under_claim<T>(
    state: &Platform,
    session: &CashierSession,
    work: impl Future<Output = Result<T, CashierError>>,
) -> Result<Option<T>, ServiceError> {
    let now = state.clock.now();
    if !cashier_sessions::claim(&state.store, session.id, now, now + CLAIM).await? {
        return Ok(None);
    }
    match work.await {
        Ok(done) => Ok(Some(done)),
        Err(error) => {
            let mut tx = state.store.begin().await?;
            cashier_sessions::release(&mut tx, session.id, false).await?;
            tx.commit().await?;
            Err(error.into())
        }
    }
}
