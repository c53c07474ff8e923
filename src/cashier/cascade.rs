//! Running one payment, payout, refund or alternative-method collection over a route of processors:
//! each soft decline moves on to the next card processor; an approval, a hard decline or a
//! processor that could not be asked ends it (rules in `recur_domain::cascade`).

use recur_domain::cascade::is_soft_decline;

use crate::platform::Platform;
use crate::processor::{
    AlternativeRequest, ChargeOutcome, ChargeRequest, PayoutRequest, RefundRequest,
};
use crate::store::cashier_transactions::{Attempt, TransactionStatus};
use crate::store::processors::PaymentProcessor;

/// What money moves, and from or to what.
#[derive(Debug, Clone, Copy)]
pub enum Operation<'a> {
    /// Charge the card behind `token`.
    Charge {
        /// Processor token of the card.
        token: &'a str,
    },
    /// Send money to the card behind `token`.
    Payout {
        /// Processor token of the card.
        token: &'a str,
    },
    /// Collect through an alternative method from the payer's `account`.
    Collect {
        /// The payer's e-mail.
        account: &'a str,
    },
    /// Give back (part of) the payment with this processor reference (refunds do not cascade:
    /// their route is the processor that took the payment).
    Refund {
        /// The processor's reference of the payment.
        reference: &'a str,
    },
}

/// How a cascade ended.
#[derive(Debug, Clone)]
pub struct Cascade {
    /// Every attempt, in order; never empty.
    pub attempts: Vec<Attempt>,
    /// The final status.
    pub status: TransactionStatus,
    /// The processor of the final attempt.
    pub processor: PaymentProcessor,
    /// The idempotency key of the final attempt.
    pub key: String,
}

/// Runs `operation` for `amount` over `route` (at least one processor). Keys are
/// `{key_prefix}:{processor id}`, so repeating a cascade with the same prefix repeats no
/// movement of money.
pub async fn run(
    state: &Platform,
    merchant_id: i64,
    route: &[PaymentProcessor],
    operation: Operation<'_>,
    amount: i64,
    currency: &str,
    key_prefix: &str,
) -> anyhow::Result<Cascade> {
    let mut attempts = Vec::with_capacity(route.len());
    for (index, processor) in route.iter().enumerate() {
        let key = format!("{key_prefix}:{}", processor.processor_id);
        let gateway = Some(processor.processor_id);
        let answer = match operation {
            Operation::Charge { token } => {
                state
                    .processor
                    .charge(ChargeRequest {
                        merchant_id,
                        idempotency_key: &key,
                        token,
                        amount,
                        currency,
                        gateway,
                        directive: None,
                    })
                    .await
            }
            Operation::Payout { token } => {
                state
                    .processor
                    .payout(PayoutRequest {
                        merchant_id,
                        idempotency_key: &key,
                        token,
                        amount,
                        currency,
                        gateway,
                    })
                    .await
            }
            Operation::Refund { reference } => {
                state
                    .processor
                    .refund(RefundRequest {
                        merchant_id,
                        idempotency_key: &key,
                        charge_reference: reference,
                        amount,
                        currency,
                    })
                    .await
            }
            Operation::Collect { account } => {
                state
                    .processor
                    .collect(AlternativeRequest {
                        merchant_id,
                        idempotency_key: &key,
                        method: processor.processor_id,
                        account,
                        amount,
                        currency,
                    })
                    .await
            }
        };
        if let Err(error) = &answer {
            tracing::warn!(processor = processor.processor_id, %error, "processor call failed");
        }
        let (attempt, status) = answered(processor, answer.ok(), state.clock.now());
        // The money may have moved before an answer was lost: never ask a second processor
        // after an unanswered call; only a soft decline moves on.
        let soft = status == TransactionStatus::Rejected
            && attempt.decline_code.as_deref().is_some_and(is_soft_decline);
        attempts.push(attempt);
        if !soft || index + 1 == route.len() {
            return Ok(Cascade {
                attempts,
                status,
                processor: processor.clone(),
                key,
            });
        }
    }
    anyhow::bail!("a cascade needs at least one processor")
}

impl Cascade {
    /// A cascade of one attempt at `processor` under `key`: what `answer` stands for, or a
    /// failure when there was none.
    pub(super) fn single(
        processor: PaymentProcessor,
        answer: Option<ChargeOutcome>,
        key: String,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let (attempt, status) = answered(&processor, answer, at);
        Cascade {
            attempts: vec![attempt],
            status,
            processor,
            key,
        }
    }
}

/// The attempt at `processor` that `answer` stands for, with its status: approved, declined
/// with the processor's code, or (no answer) failed as `processor_unavailable`.
fn answered(
    processor: &PaymentProcessor,
    answer: Option<ChargeOutcome>,
    at: chrono::DateTime<chrono::Utc>,
) -> (Attempt, TransactionStatus) {
    let (reference, code, reason, status) = match answer {
        Some(ChargeOutcome::Approved { reference }) => {
            (reference, None, None, TransactionStatus::Success)
        }
        Some(ChargeOutcome::Declined {
            reference,
            code,
            reason,
        }) => (
            reference,
            Some(code),
            Some(reason),
            TransactionStatus::Rejected,
        ),
        None => (
            String::new(),
            Some("processor_unavailable".into()),
            Some("The processor could not be reached.".into()),
            TransactionStatus::Failed,
        ),
    };
    let attempt = Attempt {
        processor_id: processor.processor_id,
        processor_key: processor.processor_key.clone(),
        processor_name: processor.name.clone(),
        reference,
        decline_code: code,
        decline_reason: reason,
        status: status.as_str().into(),
        at,
    };
    (attempt, status)
}
