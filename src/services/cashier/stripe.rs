//! The cashier page's card payments when the merchant's default card processor is a connected
//! Stripe account (DESIGN §17): the card Element replaces recur's card fields (the sandbox card
//! processors are not offered then; alternative methods still are). Stripe.js saves the card
//! with a one-time SetupIntent bound to the session ([`setup`]); the page posts its id with the
//! amount; recur reads it from Stripe and pays ([`pay`]). Card numbers never reach recur. A
//! payment Stripe wants the customer to authenticate is read back from Stripe afterwards
//! ([`resolve`]). Payouts are never made through Stripe.

use recur_domain::card::CardBrand;
use recur_domain::stripe_keys;

use super::payments::under_claim;
pub use crate::cashier::stripe::Step;
use crate::cashier::stripe::{self, StripePayment};
use crate::cashier::CashierError;
use crate::ids;
use crate::platform::Platform;
use crate::processor::stripe::objects::{PaymentIntent, Refund};
use crate::processor::stripe::Connection;
use crate::services::payment_methods::{refused_on, stripe_fingerprint};
use crate::services::stripe_cards::{card_setup, default_account, saved_card, CardSetup};
use crate::services::ServiceError;
use crate::store::cashier_sessions::{self, CashierSession};
use crate::store::cashier_transactions::CardFacts;
use crate::store::stripe_accounts::{self, Account};

/// The Stripe account that takes this session's cards: the merchant's default card processor
/// when it is one, for a payment (not a payout) that does not disable it (`disabledPspIds`)
/// nor fix another processor (`m_fixed_pp_id`, `fixed`).
pub async fn offered(
    state: &Platform,
    session: &CashierSession,
    fixed: Option<i64>,
) -> Result<Option<Account>, ServiceError> {
    if session.fields.is_payout {
        return Ok(None);
    }
    let account = default_account(state, session.merchant_id).await?;
    Ok(account.filter(|account| {
        !session
            .fields
            .disabled_psp_ids
            .contains(&account.processor_id)
            && fixed.is_none_or(|id| id == account.processor_id)
    }))
}

/// A one-time SetupIntent at `account` for the session's card Element, bound to the session.
/// Stripe out of reach is a 503.
pub async fn setup(
    state: &Platform,
    session: &CashierSession,
    account: &Account,
) -> Result<CardSetup, ServiceError> {
    let stripe = Connection::new(&state.stripe, state.keys.open(&account.secret_key_sealed)?);
    let idempotency_key = ids::prefixed("recur-setup-", 24);
    let intent = stripe
        .create_one_time_setup_intent(&session.id.to_string(), &idempotency_key)
        .await;
    card_setup(account, intent)
}

/// Pays `amount` (minor units) with the card Stripe.js saved with the SetupIntent
/// `setup_intent`, under the session's claim. The SetupIntent is read from Stripe: one that is
/// not this session's is refused on `setupIntent` (400), one that has not succeeded is a
/// decline (402); nothing is paid then. `None` when the session is claimed already (paid
/// meanwhile, a payment in flight).
pub async fn pay(
    state: &Platform,
    session: &CashierSession,
    account: &Account,
    setup_intent: &str,
    amount: i64,
    client_ip: Option<String>,
) -> Result<Option<Step>, ServiceError> {
    let card = collected(state, session, account, setup_intent).await?;
    let payment = StripePayment {
        session,
        account,
        card,
        amount,
        client_ip,
    };
    under_claim(state, session, stripe::pay(state, payment)).await
}

/// Where the session's parked Stripe payment stands now, read from Stripe (recorded once Stripe
/// decided); `None` when none is parked.
pub async fn resolve(
    state: &Platform,
    session: &CashierSession,
    client_ip: Option<String>,
) -> Result<Option<Step>, ServiceError> {
    match stripe::resolve(state, session, client_ip).await {
        Ok(step) => Ok(step),
        // Recorded meanwhile by another request (Stripe's webhook, a second tab).
        Err(CashierError::Conflict(_)) => Ok(None),
        Err(other) => Err(other.into()),
    }
}

/// Stripe's `payment_intent.succeeded` or `payment_intent.payment_failed` about the cashier
/// payment `key` (its PaymentIntent `intent`): the session's parked payment is read from
/// Stripe and recorded once Stripe decided. Nothing happens when the payment is not parked
/// (recorded already, or not a session of this merchant).
pub async fn settle_parked(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    intent: &str,
) -> Result<(), ServiceError> {
    let Some(session_id) = stripe::session_of_key(key) else {
        return Ok(());
    };
    let Some(session) =
        cashier_sessions::by_id(state.store.pool(), merchant_id, session_id).await?
    else {
        return Ok(());
    };
    let parked = session.pending.as_ref().and_then(|p| p.intent.as_ref());
    if parked.is_some_and(|parked| parked.id == intent) {
        resolve(state, &session, None).await?;
    }
    Ok(())
}

/// Refunds made in Stripe's dashboard (`refunds`, read from Stripe) of the cashier payment
/// `intent` at the merchant's account `processor_id`: each recorded once as a `Refund`
/// transaction of its order, with its notification.
pub async fn record_dashboard_refunds(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
    intent: &PaymentIntent,
    refunds: &[Refund],
) -> Result<(), ServiceError> {
    let (Some(order_id), Some(account)) = (
        intent.metadata.get("orderId"),
        stripe_accounts::get(state.store.pool(), merchant_id, processor_id).await?,
    ) else {
        return Ok(());
    };
    for refund in refunds {
        stripe::record_dashboard_refund(
            state,
            merchant_id,
            &account,
            order_id,
            &intent.id,
            &refund.id,
            refund.amount,
        )
        .await?;
    }
    Ok(())
}

/// The card of the SetupIntent `setup_intent` (as the page posted it), read from Stripe, when
/// it is this session's and has succeeded.
async fn collected(
    state: &Platform,
    session: &CashierSession,
    account: &Account,
    setup_intent: &str,
) -> Result<CardFacts, ServiceError> {
    let id = stripe_keys::object_id(setup_intent, "seti_")
        .map_err(|why| ServiceError::invalid("setupIntent", why))?;
    let stripe = Connection::new(&state.stripe, state.keys.open(&account.secret_key_sealed)?);
    let intent = stripe
        .setup_intent(&id)
        .await
        .map_err(|e| refused_on("setupIntent", e))?;
    if intent.metadata.get("cashierSession") != Some(&session.id.to_string()) {
        return Err(ServiceError::invalid(
            "setupIntent",
            "is not this cashier session's",
        ));
    }
    let method_id = saved_card(intent)?;
    let method = stripe
        .payment_method(&method_id)
        .await
        .map_err(|e| refused_on("setupIntent", e))?;
    let Some(card) = method.card.filter(|_| method.kind == "card") else {
        return Err(ServiceError::invalid(
            "setupIntent",
            format!("saved a {} payment method, not a card", method.kind),
        ));
    };
    Ok(CardFacts {
        fingerprint: stripe_fingerprint(account, &method.id, &card),
        brand: CardBrand::of_stripe(&card.brand)
            .map_or(card.brand.clone(), |brand| brand.as_str().into()),
        bin: String::new(),
        last4: card.last4,
        bin_type: None,
        issuer: None,
        country: None,
        token: method.id,
    })
}
