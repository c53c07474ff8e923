//! Stripe's webhooks (DESIGN §17): `POST /webhooks/stripe/{paymentProcessorId}`. An event is
//! taken only with a `Stripe-Signature` that the account's webhook secret made over the raw
//! body, within five minutes of the real clock ([`recur_domain::stripe_signature`]); each event
//! id is handled once. `payment_intent.succeeded` and `payment_intent.payment_failed` settle an
//! attempt still `Pending` (its answer was lost), named by the intent's `attemptKey`; other
//! types are acknowledged and ignored.

use recur_domain::stripe_signature;
use serde::Deserialize;

use super::ServiceError;
use crate::billing::charging;
use crate::platform::Platform;
use crate::processor::stripe::charges;
use crate::processor::stripe::objects::PaymentIntent;
use crate::store::charges::{self as attempts, ChargeStatus};
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
    let settles = matches!(
        event.kind.as_str(),
        "payment_intent.succeeded" | "payment_intent.payment_failed"
    );
    if settles {
        let intent: PaymentIntent = serde_json::from_value(event.data.object.clone())
            .map_err(|e| ServiceError::invalid("body", format!("is not a PaymentIntent: {e}")))?;
        let attempt_key = event.data.object["metadata"]["attemptKey"].as_str();
        // Settle first, then remember the event: a failure in between is retried by Stripe,
        // and settling twice records once.
        if let (Some(key), Some(outcome)) = (attempt_key, charges::outcome(&intent)) {
            if let Some(charge) = attempts::by_idempotency_key(pool, merchant_id, key).await? {
                if charge.status == ChargeStatus::Pending {
                    let at = state.merchant_now(merchant_id).await?;
                    charging::record(state, charge, outcome, at).await?;
                }
            }
        }
    }
    if !stripe_events::first_arrival(pool, processor_id, &event.id, now).await? {
        return Ok(Received::Repeated);
    }
    Ok(if settles {
        Received::Handled
    } else {
        Received::Ignored
    })
}
