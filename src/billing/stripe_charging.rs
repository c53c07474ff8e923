//! Charge attempts whose card a merchant's connected Stripe account holds (DESIGN §17): each
//! is an off-session PaymentIntent under the attempt's idempotency key, asked concurrently, and
//! read into an outcome from Stripe's answer only. An attempt Stripe gave no answer for (out of
//! reach, slow, 5xx, or a refusal that is the merchant's to fix, such as a revoked key) gets no
//! outcome: it stays `Pending` and is asked again with the same key, which Stripe answers with
//! its first answer instead of charging twice.

use std::collections::HashMap;

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};

use super::BillingError;
use crate::platform::Platform;
use crate::processor::stripe::{charges, Connection, OffSession, StripeError};
use crate::processor::ChargeOutcome;
use crate::store::charges::Charge;
use crate::store::payment_methods::PaymentMethod;
use crate::store::{invoices, memberships, stripe_accounts, stripe_customers};

/// How many PaymentIntents are asked at once: Stripe's live rate limit is 100 requests a
/// second per account.
const IN_FLIGHT: usize = 8;

/// Asks Stripe for each of `charges` (every one's card held by a Stripe account, in `cards`):
/// the outcome of each, in order; `None` where Stripe gave none.
pub async fn charge_many(
    state: &Platform,
    charges: &[&Charge],
    cards: &HashMap<i64, PaymentMethod>,
) -> Result<Vec<Option<ChargeOutcome>>, BillingError> {
    let pool = state.store.pool();
    let pairs = |id: fn(&Charge) -> i64| -> Vec<(i64, i64)> {
        charges.iter().map(|c| (c.merchant_id, id(c))).collect()
    };
    let invoice_keys: HashMap<i64, String> = invoices::get_many(pool, &pairs(|c| c.invoice_id))
        .await?
        .into_iter()
        .map(|(id, invoice)| (id, invoice.invoice_key))
        .collect();
    let membership_keys = memberships::keys_many(pool, &pairs(|c| c.membership_id)).await?;
    let mut asks = Vec::with_capacity(charges.len());
    let mut connections: HashMap<(i64, i64), String> = HashMap::new();
    for charge in charges {
        let card = cards
            .get(&charge.payment_method_id)
            .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("charge without its card")))?;
        let processor_id = card
            .processor_id
            .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("not a Stripe card")))?;
        let account_key = (charge.merchant_id, processor_id);
        if let std::collections::hash_map::Entry::Vacant(slot) = connections.entry(account_key) {
            let account = stripe_accounts::get(pool, charge.merchant_id, processor_id)
                .await?
                .ok_or_else(|| {
                    BillingError::Internal(anyhow::anyhow!(
                        "the Stripe account {processor_id} of a saved card is gone"
                    ))
                })?;
            slot.insert(state.keys.open(&account.secret_key_sealed)?);
        }
        let customer =
            stripe_customers::get(pool, charge.merchant_id, processor_id, card.customer_id)
                .await?
                .ok_or_else(|| {
                    BillingError::Internal(anyhow::anyhow!("a Stripe card without its Customer"))
                })?;
        asks.push((*charge, card, account_key, customer));
    }
    // Futures built in a loop, not by a closure: the handlers that await this stay `Send`.
    let mut asked: Vec<BoxFuture<'_, Option<ChargeOutcome>>> = Vec::with_capacity(asks.len());
    for (charge, card, account_key, customer) in &asks {
        let connection = Connection::new(&state.stripe, connections[account_key].clone());
        let invoice_key = invoice_keys.get(&charge.invoice_id);
        let membership_key = membership_keys.get(&charge.membership_id);
        asked.push(Box::pin(async move {
            let answer = connection
                .charge_off_session(&OffSession {
                    idempotency_key: &charge.idempotency_key,
                    amount: charge.amount,
                    currency: &charge.currency,
                    customer,
                    payment_method: &card.processor_token,
                    invoice_key: invoice_key.map_or("", String::as_str),
                    membership_key: membership_key.map_or("", String::as_str),
                })
                .await;
            outcome(charge, answer)
        }));
    }
    let answers = stream::iter(asked)
        .buffered(IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    Ok(answers)
}

/// What Stripe's answer to `charge` means; logged when it leaves the attempt `Pending`.
fn outcome(
    charge: &Charge,
    answer: Result<crate::processor::stripe::objects::PaymentIntent, StripeError>,
) -> Option<ChargeOutcome> {
    let outcome = match &answer {
        Ok(intent) => charges::outcome(intent),
        Err(StripeError::Refused(refusal)) => charges::refusal_outcome(refusal),
        Err(StripeError::Unanswered(_)) => None,
    };
    if outcome.is_none() {
        let why = match answer {
            Ok(intent) => format!("the PaymentIntent is {}", intent.status),
            Err(error) => error.to_string(),
        };
        tracing::warn!(
            merchant_id = charge.merchant_id,
            charge_id = charge.id,
            why,
            "a Stripe charge stays Pending; it is asked again"
        );
    }
    outcome
}

/// Asks the merchant's Stripe account `processor_id` to refund `amount` of the PaymentIntent
/// `payment_intent` under `idempotency_key`: the outcome, or [`BillingError::Unavailable`] when
/// Stripe has not decided (the refund stays `Pending` and is asked again).
pub async fn refund(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
    payment_intent: &str,
    amount: i64,
    idempotency_key: &str,
) -> Result<ChargeOutcome, BillingError> {
    let account = stripe_accounts::get(state.store.pool(), merchant_id, processor_id)
        .await?
        .ok_or_else(|| {
            BillingError::Internal(anyhow::anyhow!(
                "the Stripe account {processor_id} of a charge is gone"
            ))
        })?;
    let connection = Connection::new(&state.stripe, state.keys.open(&account.secret_key_sealed)?);
    let answer = connection
        .refund(payment_intent, amount, idempotency_key)
        .await;
    let outcome = match &answer {
        Ok(refund) => charges::refund_outcome(refund),
        Err(StripeError::Refused(refusal)) if refusal.status == 400 || refusal.status == 402 => {
            Some(ChargeOutcome::Declined {
                reference: String::new(),
                code: refusal
                    .code
                    .clone()
                    .unwrap_or_else(|| "refund_refused".into()),
                reason: refusal.message.clone(),
            })
        }
        Err(_) => None,
    };
    outcome.ok_or_else(|| {
        let why = match answer {
            Ok(refund) => format!("the refund is {}", refund.status),
            Err(error) => error.to_string(),
        };
        tracing::warn!(
            merchant_id,
            why,
            "a Stripe refund stays Pending; it is asked again"
        );
        BillingError::Unavailable(why)
    })
}
