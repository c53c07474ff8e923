//! The built-in sandbox processor (DESIGN §7): test cards with fixed behaviours and the
//! `chargeEmitterQueue` directive. It plays an outside processor, keeping its own vault (token →
//! behaviour, never the card number) and its own ledger keyed by idempotency key, in tables of its
//! own (`sandbox_cards`, `sandbox_charges`) that recur's billing code never reads.

use std::sync::Arc;

use recur_domain::card::CardNumber;

use super::{ChargeOutcome, ChargeRequest, Processor, ProcessorFuture};
use crate::clock::Clock;
use crate::ids;
use crate::store::{to_micros, Store};

/// How a sandbox test card behaves when charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// `4242 4242 4242 4242` and any other Luhn-valid number: approved.
    Approve,
    /// `4000 0000 0000 0002`: declined, `card_declined`.
    Decline,
    /// `4000 0000 0000 9995`: declined, `insufficient_funds`.
    InsufficientFunds,
    /// `4000 0000 0000 3220`: the hosted page asks the customer to confirm their identity; once
    /// confirmed (and for charges without the customer present) it is approved.
    Challenge,
}

impl Behaviour {
    /// The behaviour of a test card number.
    pub fn of(card: &CardNumber) -> Behaviour {
        match card.digits() {
            "4000000000000002" => Behaviour::Decline,
            "4000000000009995" => Behaviour::InsufficientFunds,
            "4000000000003220" => Behaviour::Challenge,
            _ => Behaviour::Approve,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Behaviour::Approve => "approve",
            Behaviour::Decline => "decline",
            Behaviour::InsufficientFunds => "insufficient_funds",
            Behaviour::Challenge => "challenge",
        }
    }

    fn from_db(text: &str) -> Behaviour {
        match text {
            "decline" => Behaviour::Decline,
            "insufficient_funds" => Behaviour::InsufficientFunds,
            "challenge" => Behaviour::Challenge,
            _ => Behaviour::Approve,
        }
    }

    /// `(code, reason)` of a decline, `None` when the card is approved.
    fn decline(self) -> Option<(&'static str, &'static str)> {
        match self {
            Behaviour::Decline => Some(("card_declined", "Your card was declined.")),
            Behaviour::InsufficientFunds => Some(("insufficient_funds", "Insufficient funds.")),
            Behaviour::Approve | Behaviour::Challenge => None,
        }
    }
}

/// The sandbox processor, on recur's own database.
pub struct SandboxProcessor {
    store: Store,
    clock: Arc<dyn Clock>,
}

impl SandboxProcessor {
    /// A sandbox processor keeping its records in `store`.
    pub fn new(store: Store, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    async fn charge_once(&self, request: ChargeRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        use sqlx::Row;
        let behaviour: Option<String> = sqlx::query_scalar(
            "SELECT behaviour FROM sandbox_cards WHERE token = $1 AND merchant_id = $2",
        )
        .bind(request.token)
        .bind(request.merchant_id)
        .fetch_optional(self.store.pool())
        .await?;
        let decline = match (request.directive, behaviour.as_deref()) {
            (Some(directive), _) if directive.succeed => None,
            (Some(directive), _) => Some(("emitter_rejected", directive.description.as_str())),
            (None, Some(behaviour)) => Behaviour::from_db(behaviour).decline(),
            (None, None) => Some(("invalid_payment_method", "Unknown payment method.")),
        };
        let (outcome, code, reason) = match decline {
            None => ("approved", None, None),
            Some((code, reason)) => ("declined", Some(code), Some(reason)),
        };
        // The first answer for a key wins; a repeated key reads it back.
        sqlx::query(
            "INSERT INTO sandbox_charges (idempotency_key, merchant_id, token, amount, currency, \
             outcome, decline_code, decline_reason, reference, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(request.idempotency_key)
        .bind(request.merchant_id)
        .bind(request.token)
        .bind(request.amount)
        .bind(request.currency)
        .bind(outcome)
        .bind(code)
        .bind(reason)
        .bind(ids::prefixed("sbx_ch_", 24))
        .bind(to_micros(self.clock.now()))
        .execute(self.store.pool())
        .await?;
        let row = sqlx::query(
            "SELECT outcome, decline_code, decline_reason, reference FROM sandbox_charges \
             WHERE idempotency_key = $1 AND merchant_id = $2",
        )
        .bind(request.idempotency_key)
        .bind(request.merchant_id)
        .fetch_one(self.store.pool())
        .await?;
        let reference: String = row.try_get("reference")?;
        Ok(if row.try_get::<String, _>("outcome")? == "approved" {
            ChargeOutcome::Approved { reference }
        } else {
            ChargeOutcome::Declined {
                reference,
                code: row
                    .try_get::<Option<String>, _>("decline_code")?
                    .unwrap_or_default(),
                reason: row
                    .try_get::<Option<String>, _>("decline_reason")?
                    .unwrap_or_default(),
            }
        })
    }
}

impl Processor for SandboxProcessor {
    fn tokenize<'a>(
        &'a self,
        merchant_id: i64,
        card: &'a CardNumber,
    ) -> ProcessorFuture<'a, String> {
        Box::pin(async move {
            let token = ids::prefixed("sbx_tok_", 24);
            sqlx::query(
                "INSERT INTO sandbox_cards (token, merchant_id, behaviour, created_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(&token)
            .bind(merchant_id)
            .bind(Behaviour::of(card).as_str())
            .bind(to_micros(self.clock.now()))
            .execute(self.store.pool())
            .await?;
            Ok(token)
        })
    }

    fn charge<'a>(&'a self, request: ChargeRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.charge_once(request))
    }
}
