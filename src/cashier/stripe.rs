//! Cashier payments through the merchant's connected Stripe account (DESIGN §17). The payer is
//! no customer of recur: Stripe.js saves their card with a one-time SetupIntent, and recur pays
//! with an on-session PaymentIntent in two steps. It first makes the PaymentIntent unconfirmed
//! (nothing moves) and parks it on the session; then it confirms it. A lost answer to the
//! confirmation is therefore read back from the PaymentIntent itself, never asked twice.
//!
//! A PaymentIntent Stripe wants the customer to authenticate (3-D Secure) stays parked while
//! the page lets them with Stripe.js; its outcome is read from Stripe ([`resolve`]). One left
//! unauthenticated past [`AUTHENTICATION_WINDOW`] is cancelled and recorded as declined
//! ([`settle_abandoned`]), so it can never succeed unrecorded. Refunds go to the same account
//! ([`refund`]); nothing is recorded of one Stripe has not decided.

use chrono::{DateTime, Utc};

use super::cascade::Cascade;
use super::payer::Payer;
use super::record::{record, Recorded};
use super::CashierError;
use crate::platform::Platform;
use crate::processor::stripe::charges::{self, Authentication, AUTHENTICATION_WINDOW};
use crate::processor::stripe::objects::PaymentIntent;
use crate::processor::stripe::{CashierIntent, Connection, StripeError};
use crate::processor::ChargeOutcome;
use crate::store::cashier_sessions::{self, CashierSession, ParkedIntent, PendingPayment};
use crate::store::cashier_transactions::{self, CardFacts, CashierTransaction, TransactionKind};
use crate::store::refunds;
use crate::store::stripe_accounts::{self, Account};

/// Where a Stripe payment stands after recur asked.
#[derive(Debug)]
pub enum Step {
    /// Stripe decided; the transaction is recorded and notified.
    Recorded(Box<CashierTransaction>),
    /// The customer is to authenticate the parked PaymentIntent with Stripe.js.
    Authenticate(Authentication),
    /// Stripe has not decided, or did not answer: the PaymentIntent stays parked and is read
    /// again (the next page view, the worker).
    Unanswered,
}

/// A customer's payment on the cashier page with the card a one-time SetupIntent saved.
#[derive(Debug)]
pub struct StripePayment<'a> {
    /// The session, claimed by the caller.
    pub session: &'a CashierSession,
    /// The account that holds the card.
    pub account: &'a Account,
    /// The card (its token is the PaymentMethod, `pm_…`).
    pub card: CardFacts,
    /// Minor units.
    pub amount: i64,
    /// The customer's address.
    pub client_ip: Option<String>,
}

/// Pays `payment`: makes its PaymentIntent, parks it on the session and confirms it. A
/// PaymentIntent Stripe would not make (out of reach, refused) is recorded as a failed
/// transaction: nothing moved, and the session stays open for another try.
pub async fn pay(state: &Platform, payment: StripePayment<'_>) -> Result<Step, CashierError> {
    let session = payment.session;
    let account = payment.account;
    let stripe = connect(state, account)?;
    let key = payment_key(state, session, account.processor_id).await?;
    let asked = stripe
        .create_payment_intent(&CashierIntent {
            idempotency_key: &key,
            amount: payment.amount,
            currency: &session.fields.currency,
            payment_method: &payment.card.token,
            order_id: &session.fields.order_id,
        })
        .await;
    let mut pending = PendingPayment {
        card: payment.card,
        amount: payment.amount,
        processor_id: account.processor_id,
        intent: None,
    };
    let intent = match asked {
        Ok(intent) => intent,
        Err(error) => {
            tracing::warn!(
                merchant_id = session.merchant_id,
                %error,
                "Stripe made no PaymentIntent for a cashier payment"
            );
            let refused = match &error {
                StripeError::Refused(refusal) => charges::refusal_outcome(refusal),
                StripeError::Unanswered(_) => None,
            };
            let transaction = write(
                state,
                session,
                &pending,
                account,
                refused,
                payment.client_ip,
            )
            .await?;
            return Ok(Step::Recorded(Box::new(transaction)));
        }
    };
    pending.intent = Some(ParkedIntent {
        id: intent.id.clone(),
        since: state.merchant_now(session.merchant_id).await?,
    });
    cashier_sessions::set_pending(&state.store, session.id, Some(&pending)).await?;
    let confirmed = stripe.confirm_payment_intent(&intent.id).await;
    conclude(
        state,
        session,
        &pending,
        account,
        confirmed,
        payment.client_ip,
    )
    .await
}

/// Reads the session's parked PaymentIntent from Stripe and records it once Stripe decided:
/// what the customer's authentication (or Stripe's delayed answer) came to. One whose
/// confirmation never reached Stripe is confirmed now. `None` when nothing is parked.
pub async fn resolve(
    state: &Platform,
    session: &CashierSession,
    client_ip: Option<String>,
) -> Result<Option<Step>, CashierError> {
    let Some((pending, parked)) = parked(session) else {
        return Ok(None);
    };
    let account = account_of(state, session, &pending).await?;
    let stripe = connect(state, &account)?;
    let read = match stripe.payment_intent(&parked.id).await {
        Ok(intent) if intent.status == "requires_confirmation" => {
            stripe.confirm_payment_intent(&parked.id).await
        }
        read => read,
    };
    conclude(state, session, &pending, &account, read, client_ip)
        .await
        .map(Some)
}

/// Settles the Stripe payments (of one merchant, or of all) parked longer than
/// [`AUTHENTICATION_WINDOW`] at `now` (the merchant's time, as when they were parked): those Stripe decided are recorded; those still waiting
/// for the customer are cancelled at Stripe and recorded as declined
/// (`authentication_required`). Returns how many were recorded.
pub async fn settle_abandoned(
    state: &Platform,
    merchant_id: Option<i64>,
    now: DateTime<Utc>,
) -> Result<usize, CashierError> {
    const BATCH: i64 = 100;
    let sessions = cashier_sessions::parked_intents(
        &state.store,
        merchant_id,
        now - AUTHENTICATION_WINDOW,
        BATCH,
    )
    .await?;
    let mut recorded = 0;
    for session in &sessions {
        // One session's trouble (Stripe out of reach, an unreadable row) leaves it for the next
        // pass and does not hold up the others.
        match settle_if_decided(state, session).await {
            Ok(true) => recorded += 1,
            Ok(false) => {}
            Err(error) => tracing::warn!(
                merchant_id = session.merchant_id,
                session_id = session.id,
                %error,
                "a parked Stripe cashier payment stays parked"
            ),
        }
    }
    Ok(recorded)
}

/// One abandoned parked payment of [`settle_abandoned`]: `true` when it was recorded now.
async fn settle_if_decided(
    state: &Platform,
    session: &CashierSession,
) -> Result<bool, CashierError> {
    let Some((pending, parked)) = parked(session) else {
        return Ok(false);
    };
    let account = account_of(state, session, &pending).await?;
    let stripe = connect(state, &account)?;
    let read = match stripe.payment_intent(&parked.id).await {
        Ok(intent)
            if matches!(
                intent.status.as_str(),
                "requires_action" | "requires_confirmation"
            ) =>
        {
            stripe.cancel_payment_intent(&parked.id).await
        }
        read => read,
    };
    let outcome = match read {
        Ok(intent) if intent.status == "canceled" => Some(ChargeOutcome::Declined {
            reference: intent.id,
            code: charges::AUTHENTICATION_REQUIRED.into(),
            reason: "The customer did not confirm the payment with their bank.".into(),
        }),
        Ok(intent) => charges::outcome(&intent),
        // Read again on the next pass.
        Err(_) => None,
    };
    let Some(outcome) = outcome else {
        return Ok(false);
    };
    match write(state, session, &pending, &account, Some(outcome), None).await {
        Ok(_) => Ok(true),
        // Recorded meanwhile (the page, Stripe's webhook).
        Err(CashierError::Conflict(_)) => Ok(false),
        Err(other) => Err(other),
    }
}

/// Refunds `amount` of the Stripe pay-in `payin` (the `number`th refund of it) through
/// `account`. A refund asked before whose answer was lost is found at Stripe by its key, not
/// made twice. Stripe out of reach, or a refund it has not decided, records nothing
/// ([`CashierError::Unavailable`]): the merchant asks again.
pub async fn refund(
    state: &Platform,
    account: &Account,
    payin: &CashierTransaction,
    amount: i64,
    number: i64,
) -> Result<Cascade, CashierError> {
    let payment_intent = payin.external_id.as_deref().unwrap_or_default();
    let key = format!("refund:{}:{number}:{}", payin.id, account.processor_id);
    let stripe = connect(state, account)?;
    let earlier = stripe
        .refunds_of(payment_intent)
        .await
        .map_err(unavailable)?
        .into_iter()
        .find(|r| r.metadata.get("refundKey") == Some(&key));
    let answer = match earlier {
        Some(refund) => Ok(refund),
        None => stripe.refund(payment_intent, amount, &key, &key).await,
    };
    let outcome = match answer {
        Ok(refund) => charges::refund_outcome(&refund).ok_or_else(|| {
            CashierError::Unavailable(format!(
                "Stripe has not decided the refund yet (it is {}); ask again",
                refund.status
            ))
        })?,
        Err(StripeError::Refused(refusal)) if matches!(refusal.status, 400 | 402) => {
            ChargeOutcome::Declined {
                reference: String::new(),
                code: refusal.code.unwrap_or_else(|| "refund_refused".into()),
                reason: refusal.message,
            }
        }
        Err(error) => return Err(unavailable(error)),
    };
    Ok(Cascade::single(
        account.clone().into_processor(),
        Some(outcome),
        key,
        state.clock.now(),
    ))
}

/// Records a refund made in Stripe's dashboard (`refund`, `re_…`, of `amount` minor units) of
/// the merchant's order `order_id`'s pay-in through `account`, paid by the PaymentIntent
/// `payment_intent`: a `Refund` transaction with its notification, once per Stripe refund
/// (its key names the refund). Returns whether it was recorded now; nothing is recorded for a
/// payment recur does not have or has refunded in full.
pub async fn record_dashboard_refund(
    state: &Platform,
    merchant_id: i64,
    account: &Account,
    order_id: &str,
    payment_intent: &str,
    refund: &str,
    amount: i64,
) -> Result<bool, CashierError> {
    let pool = state.store.pool();
    let Some(payin) =
        cashier_transactions::latest_success(pool, merchant_id, order_id, TransactionKind::PayIn)
            .await?
            .filter(|t| t.external_id.as_deref() == Some(payment_intent))
    else {
        return Ok(false);
    };
    let (_, refunded) = refunds::of_cashier_payment(pool, merchant_id, payin.id).await?;
    let amount = amount.min(payin.amount - refunded);
    if amount <= 0 {
        return Ok(false);
    }
    let session = cashier_sessions::by_id(pool, merchant_id, payin.session_id)
        .await?
        .ok_or(CashierError::NotFound)?;
    let payer = Payer::of(&session)?;
    let approved = ChargeOutcome::Approved {
        reference: refund.to_owned(),
    };
    let cascade = Cascade::single(
        account.clone().into_processor(),
        Some(approved),
        format!("stripe-refund:{refund}"),
        state.clock.now(),
    );
    let recorded = Recorded::refund(&session, &payer, &payin, amount);
    match record(state, recorded, cascade).await {
        Ok(_) => Ok(true),
        // Recorded before (the event again, or another event about the same payment).
        Err(CashierError::Conflict(_)) => Ok(false),
        Err(other) => Err(other),
    }
}

/// What Stripe's answer about the parked PaymentIntent means: recorded once decided.
async fn conclude(
    state: &Platform,
    session: &CashierSession,
    pending: &PendingPayment,
    account: &Account,
    answer: Result<PaymentIntent, StripeError>,
    client_ip: Option<String>,
) -> Result<Step, CashierError> {
    let outcome = match answer {
        Ok(intent) if intent.status == "requires_action" => {
            return Ok(match intent.client_secret {
                Some(client_secret) => Step::Authenticate(Authentication {
                    publishable_key: account.publishable_key.clone(),
                    client_secret,
                }),
                None => Step::Unanswered,
            })
        }
        Ok(intent) if intent.status == "requires_confirmation" => None,
        Ok(intent) => charges::outcome(&intent),
        Err(StripeError::Refused(refusal)) => charges::refusal_outcome(&refusal),
        Err(StripeError::Unanswered(_)) => None,
    };
    let Some(mut outcome) = outcome else {
        return Ok(Step::Unanswered);
    };
    if let ChargeOutcome::Declined { reference, .. } = &mut outcome {
        if reference.is_empty() {
            reference.clone_from(
                &pending
                    .intent
                    .as_ref()
                    .map(|i| i.id.clone())
                    .unwrap_or_default(),
            );
        }
    }
    let transaction = write(state, session, pending, account, Some(outcome), client_ip).await?;
    Ok(Step::Recorded(Box::new(transaction)))
}

/// Records the pay-in with `outcome` (`None`: Stripe made nothing, a failed transaction), its
/// notification and the end of the session's claim and parked payment, together.
async fn write(
    state: &Platform,
    session: &CashierSession,
    pending: &PendingPayment,
    account: &Account,
    outcome: Option<ChargeOutcome>,
    client_ip: Option<String>,
) -> Result<CashierTransaction, CashierError> {
    let key = payment_key(state, session, account.processor_id).await?;
    let cascade = Cascade::single(
        account.clone().into_processor(),
        outcome,
        key,
        state.clock.now(),
    );
    let payer = Payer::of(session)?;
    let recorded = Recorded {
        session,
        payer: &payer,
        kind: TransactionKind::PayIn,
        amount: pending.amount,
        initial_amount: session.fields.locked_amount.unwrap_or(pending.amount),
        card: Some(&pending.card),
        client_ip: client_ip.as_deref(),
        parent_id: None,
        retried: false,
    };
    record(state, recorded, cascade).await
}

/// The key of the session's next pay-in at the account `processor_id`: Stripe's
/// `Idempotency-Key` for its PaymentIntent, and the transaction's.
async fn payment_key(
    state: &Platform,
    session: &CashierSession,
    processor_id: i64,
) -> Result<String, CashierError> {
    let number = cashier_transactions::count_for_session(state.store.pool(), session.id).await?;
    // The session's opening time keeps the key apart from another installation's session of
    // the same row id at the same Stripe account (Stripe keeps keys per account, for a day).
    Ok(format!(
        "cashier:{}.{}:{number}:{processor_id}",
        session.id,
        session.created_at.timestamp_micros()
    ))
}

/// The session row id a payment key names (see [`payment_key`]), if it is one.
pub fn session_of_key(key: &str) -> Option<i64> {
    key.strip_prefix("cashier:")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The payment parked on `session` with its PaymentIntent, if one is.
fn parked(session: &CashierSession) -> Option<(PendingPayment, ParkedIntent)> {
    let pending = session.pending.clone()?;
    let parked = pending.intent.clone()?;
    Some((pending, parked))
}

/// The Stripe account a parked payment was made at.
async fn account_of(
    state: &Platform,
    session: &CashierSession,
    pending: &PendingPayment,
) -> Result<Account, CashierError> {
    stripe_accounts::get(
        state.store.pool(),
        session.merchant_id,
        pending.processor_id,
    )
    .await?
    .ok_or_else(|| {
        CashierError::Internal(anyhow::anyhow!(
            "the Stripe account {} of a parked cashier payment is gone",
            pending.processor_id
        ))
    })
}

fn connect<'a>(state: &'a Platform, account: &Account) -> Result<Connection<'a>, CashierError> {
    Ok(Connection::new(
        &state.stripe,
        state.keys.open(&account.secret_key_sealed)?,
    ))
}

fn unavailable(error: StripeError) -> CashierError {
    CashierError::Unavailable(format!(
        "Stripe did not answer ({error}); nothing was recorded, ask again"
    ))
}

#[cfg(test)]
mod tests {
    use super::session_of_key;

    #[test]
    fn a_payment_key_names_its_session() {
        assert_eq!(
            session_of_key("cashier:42.1795813568000000:0:301"),
            Some(42)
        );
        assert_eq!(session_of_key("charge:42"), None);
        assert_eq!(session_of_key("cashier:x.1:0:301"), None);
    }
}
