//! Charge attempts whose card a merchant's connected Stripe account holds (DESIGN §17): each
//! is a PaymentIntent under the attempt's idempotency key, asked concurrently, and read into an
//! outcome from Stripe's answer only. An attempt Stripe gave no answer for (out of reach, slow,
//! 5xx, or a refusal that is the merchant's to fix, such as a revoked key) gets no outcome: it
//! stays `Pending` and is asked again with the same key, which Stripe answers with its first
//! answer instead of charging twice.
//!
//! Renewals, retries and prorations are off-session. A payment made on a hosted page is
//! on-session: when Stripe wants the customer to authenticate (3-D Secure) the attempt stays
//! `Pending` with its PaymentIntent, the page lets the customer authenticate with Stripe.js, and
//! the attempt is settled from the PaymentIntent as Stripe then has it. A customer who does not
//! authenticate within [`AUTHENTICATION_WINDOW`] has the PaymentIntent cancelled, so it can
//! never succeed unrecorded, and the attempt declined (`authentication_required`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};

use super::BillingError;
use crate::platform::Platform;
use crate::processor::stripe::charges::{Authentication, AUTHENTICATION_WINDOW};
use crate::processor::stripe::objects::{ClientSecret, PaymentIntent};
use crate::processor::stripe::{charges, ChargeIntent, Connection, StripeError};
use crate::processor::ChargeOutcome;
use crate::store::charges::Charge;
use crate::store::payment_methods::PaymentMethod;
use crate::store::{invoices, memberships, stripe_accounts, stripe_customers};

/// How many PaymentIntents are asked at once: Stripe's live rate limit is 100 requests a
/// second per account.
const IN_FLIGHT: usize = 8;

/// What Stripe's answer means for one attempt.
#[derive(Debug)]
pub enum Answer {
    /// Stripe decided.
    Settled(ChargeOutcome),
    /// No decision yet: the attempt stays `Pending` and is asked again.
    Unanswered,
    /// The customer, on a hosted page, is to authenticate the PaymentIntent `intent` with
    /// Stripe.js; the attempt stays `Pending`.
    Authenticate {
        /// `pi_…`.
        intent: String,
        /// What the page's Stripe.js needs.
        authentication: Authentication,
    },
}

/// How many of a customer's latest PaymentIntents a recovery reads to find an attempt's.
const RECOVERY_LOOKUP: usize = 20;

/// Asks Stripe for each of `charges` (every one's card held by a Stripe account, in `cards`)
/// at `at`: what each answer means, in order. An attempt that already has a PaymentIntent (one
/// awaiting authentication) is read from it, not charged again. When `recovering` (attempts
/// whose answer was lost), the customer's latest PaymentIntents are searched for the attempt's
/// (`attemptKey`) before it is asked again: Stripe keeps an `Idempotency-Key` for 24 hours
/// only, and an attempt may stay unanswered longer (an outage, a revoked key).
pub async fn charge_many(
    state: &Platform,
    charges: &[&Charge],
    cards: &HashMap<i64, PaymentMethod>,
    at: DateTime<Utc>,
    recovering: bool,
) -> Result<Vec<Answer>, BillingError> {
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
    // Per account: its secret key and its publishable key.
    let mut connections: HashMap<(i64, i64), (String, String)> = HashMap::new();
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
            let secret_key = state.keys.open(&account.secret_key_sealed)?;
            slot.insert((secret_key, account.publishable_key));
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
    let mut asked: Vec<BoxFuture<'_, Answer>> = Vec::with_capacity(asks.len());
    for (charge, card, account_key, customer) in &asks {
        let (secret_key, publishable_key) = &connections[account_key];
        let connection = Connection::new(&state.stripe, secret_key.clone());
        let invoice_key = invoice_keys.get(&charge.invoice_id);
        let membership_key = membership_keys.get(&charge.membership_id);
        let awaiting = charge
            .processor_reference
            .as_deref()
            .filter(|reference| reference.starts_with("pi_"));
        asked.push(Box::pin(async move {
            if let Some(intent) = awaiting {
                return awaited(&connection, publishable_key, charge, intent, at).await;
            }
            if recovering {
                match made_before(&connection, customer, &charge.idempotency_key).await {
                    Ok(Some(intent)) => return read(charge, publishable_key, Ok(intent)),
                    Ok(None) => {}
                    Err(error) => return read(charge, publishable_key, Err(error)),
                }
            }
            let answer = connection
                .confirm_charge(&ChargeIntent {
                    idempotency_key: &charge.idempotency_key,
                    amount: charge.amount,
                    currency: &charge.currency,
                    customer,
                    payment_method: &card.processor_token,
                    invoice_key: invoice_key.map_or("", String::as_str),
                    membership_key: membership_key.map_or("", String::as_str),
                    customer_present: charge.page.is_some(),
                })
                .await;
            read(charge, publishable_key, answer)
        }));
    }
    let answers = stream::iter(asked)
        .buffered(IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    Ok(answers)
}

/// The PaymentIntent Stripe made for the attempt `attempt_key` of the Customer `customer`
/// before its answer was lost, among the customer's latest ones; `None` when it made none.
async fn made_before(
    connection: &Connection<'_>,
    customer: &str,
    attempt_key: &str,
) -> Result<Option<PaymentIntent>, StripeError> {
    let mut intents: Vec<String> = Vec::new();
    for made in connection.charges_of(customer).await? {
        if let Some(intent) = made.payment_intent {
            if !intents.contains(&intent) {
                intents.push(intent);
            }
        }
    }
    for id in intents.iter().take(RECOVERY_LOOKUP) {
        let intent = connection.payment_intent(id).await?;
        if intent.metadata.get("attemptKey").map(String::as_str) == Some(attempt_key) {
            return Ok(Some(intent));
        }
    }
    Ok(None)
}

/// What Stripe's answer to `charge` means: a PaymentIntent of a customer on a hosted page
/// that wants them to authenticate is theirs to authenticate; otherwise its outcome, logged
/// when it leaves the attempt `Pending`.
fn read(
    charge: &Charge,
    publishable_key: &str,
    answer: Result<PaymentIntent, StripeError>,
) -> Answer {
    if let Ok(intent) = &answer {
        if let Some(client_secret) = authenticable(charge, intent) {
            return Answer::Authenticate {
                intent: intent.id.clone(),
                authentication: Authentication {
                    publishable_key: publishable_key.to_owned(),
                    client_secret,
                },
            };
        }
    }
    outcome(charge, answer).map_or(Answer::Unanswered, Answer::Settled)
}

/// The client secret of `intent` when it waits for the customer of `charge` to authenticate
/// and they can: a page payment, within [`AUTHENTICATION_WINDOW`] of its start.
fn authenticable(charge: &Charge, intent: &PaymentIntent) -> Option<ClientSecret> {
    let waits = matches!(
        intent.status.as_str(),
        "requires_action" | "requires_confirmation"
    );
    (waits && charge.page.is_some())
        .then(|| intent.client_secret.clone())
        .flatten()
}

/// The attempt `charge` whose PaymentIntent `intent` awaited the customer's authentication,
/// read from Stripe at `at`: still waiting within the window, settled once Stripe decided.
/// Past the window the PaymentIntent is cancelled first, so it cannot succeed afterwards; a
/// cancellation Stripe refuses because it succeeded or failed meanwhile reads that instead.
async fn awaited(
    connection: &Connection<'_>,
    publishable_key: &str,
    charge: &Charge,
    intent: &str,
    at: DateTime<Utc>,
) -> Answer {
    let now = match connection.payment_intent(intent).await {
        Ok(now) => now,
        Err(error) => {
            return outcome(charge, Err(error)).map_or(Answer::Unanswered, Answer::Settled)
        }
    };
    let waiting = authenticable(charge, &now).is_some();
    if !waiting || at < charge.created_at + AUTHENTICATION_WINDOW {
        return read(charge, publishable_key, Ok(now));
    }
    let answer = match connection.cancel_payment_intent(intent).await {
        Ok(canceled) if canceled.status == "canceled" => {
            return Answer::Settled(ChargeOutcome::Declined {
                reference: canceled.id,
                code: charges::AUTHENTICATION_REQUIRED.into(),
                reason: "The customer did not confirm the payment in time.".into(),
            })
        }
        Ok(other) => Ok(other),
        Err(StripeError::Refused(_)) => connection.payment_intent(intent).await,
        Err(unanswered) => Err(unanswered),
    };
    outcome(charge, answer).map_or(Answer::Unanswered, Answer::Settled)
}

/// What Stripe's answer to `charge` means; logged when it leaves the attempt `Pending`.
fn outcome(charge: &Charge, answer: Result<PaymentIntent, StripeError>) -> Option<ChargeOutcome> {
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
/// `payment_intent` for recur's refund `refund_key`, under `idempotency_key`: the outcome, or [`BillingError::Unavailable`] when
/// Stripe has not decided (the refund stays `Pending` and is asked again).
pub async fn refund(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
    payment_intent: &str,
    amount: i64,
    refund_key: &str,
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
        .refund(payment_intent, amount, refund_key, idempotency_key)
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
