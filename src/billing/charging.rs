//! Charge attempts: call the processor for committed `Pending` attempts, then record the answers
//! and what follows from them in one transaction. One attempt (a checkout, a retry) and a batch
//! of renewals take the same path; a batch costs a handful of statements whatever its size.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use recur_domain::membership::{InvoiceChange, Settlement};

use super::attempt_rules::settle;
use super::charge_context::{distinct, Context};
use super::followups::{self, Followups};
use super::sepa_debits::{self, Scheduling};
use super::stripe_charging::Answer;
use super::{credit_notes, proration, BillingError};
use crate::platform::Platform;
use crate::processor::stripe::charges::Authentication;
use crate::processor::{ChargeOutcome, ChargeRequest};
use crate::store::charges::{self, Charge, ChargeStatus, Completion};
use crate::store::coupons;
use crate::store::invoices;
use crate::store::memberships::{self, Membership};
use crate::store::payment_methods::{self, MethodType, PaymentMethod};

/// How a charge attempt ended.
#[derive(Debug)]
pub enum Settled {
    /// The processor took the money.
    Approved(Charge),
    /// The processor declined.
    Declined(Charge),
    /// Another process recorded the answer first; nothing was done here.
    AlreadyRecorded,
    /// A SEPA debit: pre-notified for its collection date and `Pending` until a collection
    /// file takes it; the membership stands as if paid (DESIGN §18).
    Scheduled(Charge),
}

/// Where an attempt asked of the processor stands afterwards.
#[derive(Debug)]
pub enum Asked {
    /// Answered, and the answer recorded (here or by another process).
    Recorded(Box<Settled>),
    /// The processor gave no answer: the attempt stays `Pending` and is asked again.
    Unanswered,
    /// The customer, on a hosted page, is to authenticate the payment with Stripe.js; the
    /// attempt stays `Pending` with its PaymentIntent.
    Authenticate(Authentication),
    /// A SEPA debit, scheduled: `Pending` until a collection file takes it.
    Scheduled,
}

/// Asks the processor to run a `Pending` attempt (again: the idempotency key makes a repeat
/// harmless) and records the answer. An attempt the processor did not answer stays `Pending`
/// and the call fails with [`BillingError::Unavailable`]; one the customer is to authenticate
/// stays `Pending` too, and fails with [`BillingError::AuthenticationRequired`].
pub async fn execute(
    state: &Platform,
    charge: &Charge,
    at: DateTime<Utc>,
) -> Result<Settled, BillingError> {
    let settled = execute_many(state, vec![charge.clone()], at)
        .await?
        .pop()
        .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("an attempt went unanswered")))?;
    match settled {
        Asked::Recorded(settled) => Ok(*settled),
        Asked::Unanswered => Err(BillingError::Unavailable(
            "the processor did not answer; the attempt stays Pending and is asked again".into(),
        )),
        Asked::Authenticate(authentication) => {
            Err(BillingError::AuthenticationRequired(authentication))
        }
        Asked::Scheduled => Ok(Settled::Scheduled(charge.clone())),
    }
}

/// [`execute`] for many attempts: one processor call and one transaction for all of them.
/// Returns how each ended, in order. A sandbox processor failure leaves every one `Pending`.
///
/// Attempts whose card a connected Stripe account holds are asked of Stripe
/// ([`stripe_charging`](super::stripe_charging)); the answered ones are recorded with the
/// others, the rest stay `Pending` ([`Asked::Unanswered`], [`Asked::Authenticate`]). Attempts
/// of SEPA mandates become debits ([`sepa_debits::schedule`]): `Pending` until collected.
pub async fn execute_many(
    state: &Platform,
    charges: Vec<Charge>,
    at: DateTime<Utc>,
) -> Result<Vec<Asked>, BillingError> {
    ask_and_record(state, charges, at, false).await
}

/// [`execute_many`]; `recovering` attempts whose answer was lost (Stripe is searched for a
/// payment it made for them before they are asked again).
async fn ask_and_record(
    state: &Platform,
    charges: Vec<Charge>,
    at: DateTime<Utc>,
    recovering: bool,
) -> Result<Vec<Asked>, BillingError> {
    if charges.is_empty() {
        return Ok(Vec::new());
    }
    let card_ids: Vec<(i64, i64)> = charges
        .iter()
        .map(|c| (c.merchant_id, c.payment_method_id))
        .collect();
    let cards = payment_methods::get_many(state.store.pool(), &card_ids).await?;
    let card_of = |charge: &Charge| {
        cards
            .get(&charge.payment_method_id)
            .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("charge without payment method")))
    };
    let mut through_stripe = Vec::new();
    let mut in_sandbox = Vec::new();
    let mut by_mandate = Vec::new();
    for charge in &charges {
        let card = card_of(charge)?;
        if card.method_type == MethodType::SepaDebit {
            by_mandate.push(charge);
        } else if card.processor_id.is_some() {
            through_stripe.push(charge);
        } else {
            in_sandbox.push(charge);
        }
    }
    let requests = in_sandbox
        .iter()
        .map(|charge| {
            Ok(ChargeRequest {
                merchant_id: charge.merchant_id,
                idempotency_key: &charge.idempotency_key,
                token: &card_of(charge)?.processor_token,
                amount: charge.amount,
                currency: &charge.currency,
                gateway: None,
                directive: charge.directive.as_ref(),
            })
        })
        .collect::<Result<Vec<_>, BillingError>>()?;
    let sandbox_outcomes = if requests.is_empty() {
        Vec::new()
    } else {
        state.processor.charge_many(requests).await?
    };
    if sandbox_outcomes.len() != in_sandbox.len() {
        return Err(BillingError::Internal(anyhow::anyhow!(
            "the processor answered {} of {} attempts",
            sandbox_outcomes.len(),
            in_sandbox.len()
        )));
    }
    let stripe_outcomes = if through_stripe.is_empty() {
        Vec::new()
    } else {
        super::stripe_charging::charge_many(state, &through_stripe, &cards, at, recovering).await?
    };
    let mut outcomes: HashMap<i64, ChargeOutcome> = in_sandbox
        .iter()
        .map(|c| c.id)
        .zip(sandbox_outcomes)
        .collect();
    let mut waiting: HashMap<i64, Asked> = HashMap::new();
    if !by_mandate.is_empty() {
        let scheduled = sepa_debits::schedule(state, &by_mandate, &cards, at).await?;
        for (charge, scheduling) in by_mandate.iter().zip(scheduled) {
            match scheduling {
                Scheduling::Scheduled => {
                    waiting.insert(charge.id, Asked::Scheduled);
                }
                Scheduling::Refused(outcome) => {
                    outcomes.insert(charge.id, outcome);
                }
            }
        }
    }
    for (charge, answer) in through_stripe.iter().zip(stripe_outcomes) {
        match answer {
            Answer::Settled(outcome) => {
                outcomes.insert(charge.id, outcome);
            }
            Answer::Unanswered => {
                waiting.insert(charge.id, Asked::Unanswered);
            }
            Answer::Authenticate {
                intent,
                authentication,
            } => {
                charges::await_authentication(state.store.pool(), charge, &intent).await?;
                waiting.insert(charge.id, Asked::Authenticate(authentication));
            }
        }
    }
    let order: Vec<i64> = charges.iter().map(|c| c.id).collect();
    let answered: Vec<(Charge, ChargeOutcome)> = charges
        .into_iter()
        .filter_map(|charge| outcomes.remove(&charge.id).map(|outcome| (charge, outcome)))
        .collect();
    let recorded = if answered.is_empty() {
        Vec::new()
    } else {
        finish(state, &answered, &cards, at).await?
    };
    let mut recorded: HashMap<i64, Asked> = answered
        .iter()
        .map(|(charge, _)| charge.id)
        .zip(
            recorded
                .into_iter()
                .map(|settled| Asked::Recorded(Box::new(settled))),
        )
        .collect();
    let settled = order
        .into_iter()
        .map(|id| {
            recorded
                .remove(&id)
                .or_else(|| waiting.remove(&id))
                .unwrap_or(Asked::Unanswered)
        })
        .collect();
    Ok(settled)
}

/// Records an answer the processor gave outside a call of recur's (Stripe's webhook about a
/// PaymentIntent whose answer was lost): as [`execute`] records it, once; an attempt already
/// recorded is left as it is.
pub async fn record(
    state: &Platform,
    charge: Charge,
    outcome: ChargeOutcome,
    at: DateTime<Utc>,
) -> Result<Settled, BillingError> {
    let cards = payment_methods::get_many(
        state.store.pool(),
        &[(charge.merchant_id, charge.payment_method_id)],
    )
    .await?;
    finish(state, &[(charge, outcome)], &cards, at)
        .await?
        .pop()
        .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("an answer went unrecorded")))
}

/// [`record`] for many answers: one transaction for all of them (SEPA debits collected on
/// their batch's date).
pub async fn record_many(
    state: &Platform,
    answered: Vec<(Charge, ChargeOutcome)>,
    at: DateTime<Utc>,
) -> Result<Vec<Settled>, BillingError> {
    let ids: Vec<(i64, i64)> = answered
        .iter()
        .map(|(c, _)| (c.merchant_id, c.payment_method_id))
        .collect();
    let cards = payment_methods::get_many(state.store.pool(), &ids).await?;
    finish(state, &answered, &cards, at).await
}

/// Records the processor's answers and their consequences in one transaction.
async fn finish(
    state: &Platform,
    answered: &[(Charge, ChargeOutcome)],
    cards: &HashMap<i64, PaymentMethod>,
    at: DateTime<Utc>,
) -> Result<Vec<Settled>, BillingError> {
    let completions: Vec<Completion<'_>> = answered
        .iter()
        .map(|(charge, outcome)| match outcome {
            ChargeOutcome::Approved { reference } => Completion {
                id: charge.id,
                status: ChargeStatus::Success,
                reference,
                decline: None,
            },
            ChargeOutcome::Declined {
                reference,
                code,
                reason,
            } => Completion {
                id: charge.id,
                status: ChargeStatus::Rejected,
                reference,
                decline: Some((code, reason)),
            },
        })
        .collect();
    let mut tx = state.store.begin().await?;
    let done: HashMap<i64, Charge> = charges::complete_many(&mut tx, &completions, at)
        .await?
        .into_iter()
        .map(|charge| (charge.id, charge))
        .collect();
    if done.is_empty() {
        tx.rollback().await?;
        return Ok(answered.iter().map(|_| Settled::AlreadyRecorded).collect());
    }
    // The recorded attempts in the order they were asked for.
    let done_in_order: Vec<&Charge> = answered
        .iter()
        .filter_map(|(charge, _)| done.get(&charge.id))
        .collect();
    let membership_ids = distinct(
        done_in_order
            .iter()
            .map(|c| (c.merchant_id, c.membership_id)),
    );
    let mut memberships: HashMap<i64, Membership> =
        memberships::lock_many(&mut tx, state.store.backend(), &membership_ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
    let invoice_ids = distinct(done_in_order.iter().map(|c| (c.merchant_id, c.invoice_id)));
    let open_invoices = invoices::get_many(&mut *tx, &invoice_ids).await?;

    let mut followups = Vec::with_capacity(done_in_order.len());
    let mut paid = Vec::new();
    let mut changed = HashSet::new();
    for charge in &done_in_order {
        let m = memberships
            .get_mut(&charge.membership_id)
            .ok_or(BillingError::NotFound)?;
        let invoice = open_invoices
            .get(&charge.invoice_id)
            .ok_or(BillingError::NotFound)?;
        let by_mandate = cards
            .get(&charge.payment_method_id)
            .is_some_and(|card| card.method_type == MethodType::SepaDebit);
        let approved = charge.status == ChargeStatus::Success;
        let (settlement, mut due) = if by_mandate && approved {
            // The membership stood as paid since the debit was scheduled: the collection pays
            // the invoice, with its receipt.
            let collected = Settlement::receipt_only(charge.amount);
            (collected, Followups::after(&collected))
        } else {
            settle(m, charge, invoice, approved, at)?
        };
        // A plan change applied by its charge: what it owes back is credited now.
        if settlement.terms_changed {
            if let Some(owed) = proration::owed_back(charge)? {
                due.credits = credit_notes::for_balance(&mut tx, owed, at).await?;
            }
        }
        match settlement.invoice {
            Some(InvoiceChange::Paid { amount, period }) => paid.push((invoice.id, amount, period)),
            Some(InvoiceChange::Void) => {
                if let Some(coupon) = proration::redeemed_coupon(charge)? {
                    coupons::release(&mut tx, charge.merchant_id, &coupon).await?;
                }
                let voided = invoices::void(&mut tx, invoice.id, at).await?;
                let reason = "the plan change it billed was declined";
                due.credits = credit_notes::for_voided(&mut tx, &voided, reason, at).await?;
            }
            None => {}
        }
        if settlement.membership_changed {
            changed.insert(m.id);
        }
        followups.push(due);
    }
    invoices::mark_paid_many(&mut tx, &paid, at).await?;
    let mut to_save: Vec<&mut Membership> = memberships
        .values_mut()
        .filter(|m| changed.contains(&m.id))
        .collect();
    followups::save_many(&mut tx, &mut to_save, at).await?;
    // A card entered on a checkout page becomes the payment method once it has paid.
    let approved_cards = distinct(
        done_in_order
            .iter()
            .filter(|c| c.status == ChargeStatus::Success)
            .map(|c| (c.merchant_id, c.payment_method_id)),
    );
    payment_methods::attach_many(&mut tx, &approved_cards, at).await?;

    let context = Context::load(&mut tx, &done_in_order, &memberships, &invoice_ids, cards).await?;
    let settled = done_in_order.iter().copied().zip(followups).collect();
    context
        .record_outbox(&mut tx, state, settled, &memberships, true, at)
        .await?;
    tx.commit().await?;
    Ok(answered
        .iter()
        .map(|(charge, _)| match done.get(&charge.id) {
            Some(done) if done.status == ChargeStatus::Success => Settled::Approved(done.clone()),
            Some(done) => Settled::Declined(done.clone()),
            None => Settled::AlreadyRecorded,
        })
        .collect())
}

/// Completes attempts left `Pending` at or before `before` (by a crash, or a processor that did
/// not answer): of one merchant, or of all. Returns how many were completed here.
pub async fn recover_pending(
    state: &Platform,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Result<usize, BillingError> {
    let awaiting_before = at - crate::processor::stripe::charges::AUTHENTICATION_WINDOW;
    let pending =
        charges::pending(state.store.pool(), merchant_id, before, awaiting_before).await?;
    Ok(ask_and_record(state, pending, at, true)
        .await?
        .iter()
        .filter(|asked| match asked {
            Asked::Recorded(settled) => {
                matches!(**settled, Settled::Approved(_) | Settled::Declined(_))
            }
            _ => false,
        })
        .count())
}
