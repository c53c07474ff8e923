//! Stripe's webhooks (DESIGN §17): `POST /webhooks/stripe/{paymentProcessorId}`. An event is
//! taken only with a `Stripe-Signature` that the account's webhook secret made over the raw
//! body, within five minutes of the real clock ([`recur_domain::stripe_signature`]); each event
//! id is handled once. `payment_intent.succeeded` and `payment_intent.payment_failed` settle an
//! attempt still `Pending` (its answer was lost), named by the intent's `attemptKey`, or a
//! cashier payment still parked, named by its `cashierKey`; `charge.refunded` records refunds made in Stripe's dashboard; `charge.dispute.created`
//! records a chargeback. Other types are acknowledged and ignored.

use recur_domain::stripe_signature;
use serde::Deserialize;

use super::cashier::stripe as cashier_stripe;
use super::ServiceError;
use crate::billing::{charging, disputes, refunds};
use crate::events::subscription::Chargeback;
use crate::platform::Platform;
use crate::processor::stripe::objects::{PaymentIntent, Refund};
use crate::processor::stripe::{charges, Connection, StripeError};
use crate::store::charges::{self as attempts, Charge, ChargeStatus};
use crate::store::{stripe_accounts, stripe_events};

/// The parts of an Event recur reads.
#[derive(Debug, Deserialize)]
struct Event {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Debug, Deserialize)]
struct EventData {
    object: serde_json::Value,
}

/// What became of an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// Handled now.
    Handled,
    /// Handled before: nothing changed.
    Repeated,
    /// Of a type recur does not act on.
    Ignored,
}

/// Checks and handles the event `body` sent to account `processor_id` with `signature`. An
/// unknown account is a 404; a missing, forged or stale signature or a body that is not an
/// event a 400, with nothing changed.
pub async fn receive(
    state: &Platform,
    processor_id: i64,
    signature: Option<&str>,
    body: &[u8],
) -> Result<Received, ServiceError> {
    let pool = state.store.pool();
    let (merchant_id, account) = stripe_accounts::by_processor_id(pool, processor_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let secret = state.keys.open(&account.webhook_secret_sealed)?;
    let now = state.clock.now();
    let signature =
        signature.ok_or_else(|| ServiceError::invalid("Stripe-Signature", "is required"))?;
    stripe_signature::verify(signature, body, &secret, now.timestamp())
        .map_err(|refusal| ServiceError::invalid("Stripe-Signature", refusal.to_string()))?;
    let event: Event = serde_json::from_slice(body)
        .map_err(|e| ServiceError::invalid("body", format!("is not a Stripe event: {e}")))?;
    if stripe_events::handled(pool, processor_id, &event.id).await? {
        return Ok(Received::Repeated);
    }
    // Act first, then remember the event: a failure in between is retried by Stripe, and
    // every action records once.
    // The secret key is opened only for the events that read from Stripe.
    let stripe = || -> Result<Connection<'_>, ServiceError> {
        Ok(Connection::new(
            &state.stripe,
            state.keys.open(&account.secret_key_sealed)?,
        ))
    };
    let object = &event.data.object;
    let handled = match event.kind.as_str() {
        "payment_intent.succeeded" | "payment_intent.payment_failed" => {
            settle(state, merchant_id, object).await?;
            true
        }
        "charge.refunded" => {
            refunded(state, &stripe()?, merchant_id, processor_id, object).await?;
            true
        }
        "charge.dispute.created" => {
            disputed(state, &stripe()?, merchant_id, object).await?;
            true
        }
        _ => false,
    };
    if !stripe_events::first_arrival(pool, processor_id, &event.id, now).await? {
        return Ok(Received::Repeated);
    }
    Ok(if handled {
        Received::Handled
    } else {
        Received::Ignored
    })
}

/// `payment_intent.succeeded` / `payment_intent.payment_failed`: settles the attempt the
/// PaymentIntent's `attemptKey` names when it is still `Pending` (its answer was lost), or the
/// cashier payment its `cashierKey` names when it is still parked (read from Stripe).
async fn settle(
    state: &Platform,
    merchant_id: i64,
    object: &serde_json::Value,
) -> Result<(), ServiceError> {
    let intent: PaymentIntent = serde_json::from_value(object.clone())
        .map_err(|e| ServiceError::invalid("body", format!("is not a PaymentIntent: {e}")))?;
    if let Some(key) = object["metadata"]["cashierKey"].as_str() {
        return cashier_stripe::settle_parked(state, merchant_id, key, &intent.id).await;
    }
    let attempt_key = object["metadata"]["attemptKey"].as_str();
    if let (Some(key), Some(outcome)) = (attempt_key, charges::outcome(&intent)) {
        let pool = state.store.pool();
        if let Some(charge) = attempts::by_idempotency_key(pool, merchant_id, key).await? {
            if charge.status == ChargeStatus::Pending {
                let at = state.merchant_now(merchant_id).await?;
                charging::record(state, charge, outcome, at).await?;
            }
        }
    }
    Ok(())
}

/// The PaymentIntent `payment_intent` (an event's, when it names one) as Stripe has it now.
async fn read_intent(
    stripe: &Connection<'_>,
    payment_intent: Option<&str>,
) -> Result<Option<PaymentIntent>, ServiceError> {
    let Some(payment_intent) = payment_intent.filter(|id| id.starts_with("pi_")) else {
        return Ok(None);
    };
    stripe
        .payment_intent(payment_intent)
        .await
        .map(Some)
        .map_err(unanswered)
}

/// The merchant's approved attempt `intent` paid (its `attemptKey`); `None` for a payment
/// that is not an invoice's.
async fn approved_attempt(
    state: &Platform,
    merchant_id: i64,
    intent: &PaymentIntent,
) -> Result<Option<Charge>, ServiceError> {
    let Some(key) = intent.metadata.get("attemptKey") else {
        return Ok(None);
    };
    Ok(
        attempts::by_idempotency_key(state.store.pool(), merchant_id, key)
            .await?
            .filter(|charge| charge.status == ChargeStatus::Success),
    )
}

/// `charge.refunded`: every succeeded refund of the payment that recur did not ask for (made in
/// Stripe's dashboard, without recur's `refundKey`) is recorded once per Stripe refund: as a
/// refund of its invoice with its credit note, or as a `Refund` transaction of its cashier order
/// (a PaymentIntent with a `cashierKey`). The refunds are read from Stripe.
async fn refunded(
    state: &Platform,
    stripe: &Connection<'_>,
    merchant_id: i64,
    processor_id: i64,
    object: &serde_json::Value,
) -> Result<(), ServiceError> {
    let Some(intent) = read_intent(stripe, object["payment_intent"].as_str()).await? else {
        return Ok(());
    };
    if intent.metadata.contains_key("cashierKey") {
        let made = made_elsewhere(stripe, &intent).await?;
        return cashier_stripe::record_dashboard_refunds(
            state,
            merchant_id,
            processor_id,
            &intent,
            &made,
        )
        .await;
    }
    let Some(charge) = approved_attempt(state, merchant_id, &intent).await? else {
        return Ok(());
    };
    let made = made_elsewhere(stripe, &intent).await?;
    let at = state.merchant_now(merchant_id).await?;
    for refund in made {
        refunds::record_external(state, &charge, &refund.id, refund.amount, at).await?;
    }
    Ok(())
}

/// The succeeded refunds of `intent`'s payment that recur did not ask for (made in Stripe's
/// dashboard, without recur's `refundKey`), read from Stripe.
async fn made_elsewhere(
    stripe: &Connection<'_>,
    intent: &PaymentIntent,
) -> Result<Vec<Refund>, ServiceError> {
    Ok(stripe
        .refunds_of(&intent.id)
        .await
        .map_err(unanswered)?
        .into_iter()
        .filter(|refund| refund.status == "succeeded" && !refund.metadata.contains_key("refundKey"))
        .collect())
}

/// `charge.dispute.created`: the disputed payment's invoice is marked `disputed` and the
/// merchant told with a `Chargeback` notification, once per invoice.
async fn disputed(
    state: &Platform,
    stripe: &Connection<'_>,
    merchant_id: i64,
    object: &serde_json::Value,
) -> Result<(), ServiceError> {
    let Some(intent) = read_intent(stripe, object["payment_intent"].as_str()).await? else {
        return Ok(());
    };
    let Some(charge) = approved_attempt(state, merchant_id, &intent).await? else {
        return Ok(());
    };
    let (Some(reference), Some(amount)) = (object["id"].as_str(), object["amount"].as_i64()) else {
        return Err(ServiceError::invalid("body", "is not a Dispute"));
    };
    let at = state.merchant_now(merchant_id).await?;
    let chargeback = Chargeback {
        amount: amount.min(charge.amount),
        charge,
        reference: reference.to_owned(),
        reason: object["reason"].as_str().unwrap_or("general").to_owned(),
        at,
    };
    disputes::record(state, &chargeback, at).await?;
    Ok(())
}

/// Stripe did not answer a read the event needs: 503, for Stripe to send the event again.
fn unanswered(error: StripeError) -> ServiceError {
    ServiceError::Unavailable(format!(
        "Stripe did not answer ({error}); send the event again"
    ))
}
