//! The built-in sandbox processor (DESIGN §7): test cards with fixed behaviours and the
//! `chargeEmitterQueue` directive. It plays an outside processor, keeping its own vault (token →
//! behaviour, never the card number) and its own ledger keyed by idempotency key, in tables of its
//! own (`sandbox_cards`, `sandbox_charges`) that recur's billing code never reads.

use std::sync::Arc;

use recur_domain::card::CardNumber;

use super::{
    ChargeOutcome, ChargeRequest, PayoutRequest, Processor, ProcessorFuture, RefundRequest,
    Verification,
};
use crate::clock::Clock;
use crate::ids;
use crate::store::{to_micros, Backend, Store, Tx};

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

    /// The first answer recorded for `key`, if any.
    async fn recorded<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
        executor: E,
        merchant_id: i64,
        key: &str,
    ) -> anyhow::Result<Option<ChargeOutcome>> {
        use sqlx::Row;
        let row = sqlx::query(
            "SELECT outcome, decline_code, decline_reason, reference FROM sandbox_charges \
             WHERE idempotency_key = $1 AND merchant_id = $2",
        )
        .bind(key)
        .bind(merchant_id)
        .fetch_optional(executor)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let reference: String = row.try_get("reference")?;
        Ok(Some(
            if row.try_get::<String, _>("outcome")? == "approved" {
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
            },
        ))
    }

    /// Records an answer for `entry.key` unless one exists, and returns the recorded one: the
    /// first answer for a key wins.
    async fn record_once(&self, tx: &mut Tx, entry: Entry<'_>) -> anyhow::Result<ChargeOutcome> {
        let (outcome, code, reason) = match entry.decline {
            None => ("approved", None, None),
            Some((code, reason)) => ("declined", Some(code), Some(reason)),
        };
        sqlx::query(
            "INSERT INTO sandbox_charges (idempotency_key, merchant_id, kind, refunded_reference, \
             token, amount, currency, outcome, decline_code, decline_reason, reference, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(entry.key)
        .bind(entry.merchant_id)
        .bind(entry.kind)
        .bind(entry.refunded_reference)
        .bind(entry.token)
        .bind(entry.amount)
        .bind(entry.currency)
        .bind(outcome)
        .bind(code)
        .bind(reason)
        .bind(ids::prefixed("sbx_", 28))
        .bind(to_micros(self.clock.now()))
        .execute(&mut **tx)
        .await?;
        Self::recorded(&mut **tx, entry.merchant_id, entry.key)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the sandbox ledger lost an entry"))
    }

    async fn behaviour(&self, merchant_id: i64, token: &str) -> anyhow::Result<Option<Behaviour>> {
        let behaviour: Option<String> = sqlx::query_scalar(
            "SELECT behaviour FROM sandbox_cards WHERE token = $1 AND merchant_id = $2",
        )
        .bind(token)
        .bind(merchant_id)
        .fetch_optional(self.store.pool())
        .await?;
        Ok(behaviour.as_deref().map(Behaviour::from_db))
    }

    async fn charge_once(&self, request: ChargeRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        let behaviour = self.behaviour(request.merchant_id, request.token).await?;
        let decline = match (request.directive, behaviour) {
            (Some(directive), _) if directive.succeed => None,
            (Some(directive), _) => Some(("emitter_rejected", directive.description.as_str())),
            (None, Some(behaviour)) => behaviour.decline(),
            (None, None) => Some(UNKNOWN_CARD),
        };
        let mut tx = self.store.begin().await?;
        let outcome = self
            .record_once(
                &mut tx,
                Entry {
                    key: request.idempotency_key,
                    merchant_id: request.merchant_id,
                    kind: "charge",
                    refunded_reference: None,
                    token: request.token,
                    amount: request.amount,
                    currency: request.currency,
                    decline,
                },
            )
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn refund_once(&self, request: RefundRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        use sqlx::Row;
        let mut tx = self.store.begin().await?;
        if let Some(answer) =
            Self::recorded(&mut *tx, request.merchant_id, request.idempotency_key).await?
        {
            return Ok(answer);
        }
        let lock = match self.store.backend() {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        };
        let original = sqlx::query(&format!(
            "SELECT token, amount, currency, outcome FROM sandbox_charges \
             WHERE reference = $1 AND merchant_id = $2 AND kind = 'charge'{lock}"
        ))
        .bind(request.charge_reference)
        .bind(request.merchant_id)
        .fetch_optional(&mut *tx)
        .await?;
        let refunded: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM sandbox_charges WHERE kind = 'refund' \
             AND refunded_reference = $1 AND merchant_id = $2 AND outcome = 'approved'",
        )
        .bind(request.charge_reference)
        .bind(request.merchant_id)
        .fetch_one(&mut *tx)
        .await?;
        let token = original
            .as_ref()
            .map(|row| row.try_get::<String, _>("token"))
            .transpose()?
            .unwrap_or_default();
        let decline = match &original {
            None => Some(("charge_not_found", "No such charge.")),
            Some(row) if row.try_get::<String, _>("outcome")? != "approved" => Some((
                "charge_not_refundable",
                "Only approved charges can be refunded.",
            )),
            Some(row) if row.try_get::<String, _>("currency")? != request.currency => Some((
                "currency_mismatch",
                "The refund's currency differs from the charge's.",
            )),
            Some(row) if refunded + request.amount > row.try_get::<i64, _>("amount")? => Some((
                "amount_too_large",
                "The refund exceeds what is left to refund of the charge.",
            )),
            Some(_) if request.amount <= 0 => {
                Some(("invalid_amount", "The amount must be positive."))
            }
            Some(_) => None,
        };
        let outcome = self
            .record_once(
                &mut tx,
                Entry {
                    key: request.idempotency_key,
                    merchant_id: request.merchant_id,
                    kind: "refund",
                    refunded_reference: Some(request.charge_reference),
                    token: &token,
                    amount: request.amount,
                    currency: request.currency,
                    decline,
                },
            )
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn payout_once(&self, request: PayoutRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        let decline = match self.behaviour(request.merchant_id, request.token).await? {
            None => Some(UNKNOWN_CARD),
            Some(Behaviour::Decline) => Behaviour::Decline.decline(),
            Some(_) => None,
        };
        let mut tx = self.store.begin().await?;
        let outcome = self
            .record_once(
                &mut tx,
                Entry {
                    key: request.idempotency_key,
                    merchant_id: request.merchant_id,
                    kind: "payout",
                    refunded_reference: None,
                    token: request.token,
                    amount: request.amount,
                    currency: request.currency,
                    decline,
                },
            )
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }
}

/// Decline of a token the vault does not know.
const UNKNOWN_CARD: (&str, &str) = ("invalid_payment_method", "Unknown payment method.");

/// One ledger entry to record.
struct Entry<'a> {
    key: &'a str,
    merchant_id: i64,
    kind: &'static str,
    refunded_reference: Option<&'a str>,
    token: &'a str,
    amount: i64,
    currency: &'a str,
    decline: Option<(&'a str, &'a str)>,
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

    fn requires_authentication<'a>(
        &'a self,
        merchant_id: i64,
        token: &'a str,
    ) -> ProcessorFuture<'a, bool> {
        Box::pin(async move {
            Ok(self.behaviour(merchant_id, token).await? == Some(Behaviour::Challenge))
        })
    }

    fn verify<'a>(&'a self, merchant_id: i64, token: &'a str) -> ProcessorFuture<'a, Verification> {
        Box::pin(async move {
            // A zero-amount authorization: only a card the issuer refuses outright fails it;
            // missing funds do not show until money is asked for.
            Ok(match self.behaviour(merchant_id, token).await? {
                Some(Behaviour::Decline) => Verification::Refused {
                    code: "card_declined".into(),
                    reason: "Your card was declined.".into(),
                },
                Some(_) => Verification::Valid,
                None => Verification::Refused {
                    code: UNKNOWN_CARD.0.into(),
                    reason: UNKNOWN_CARD.1.into(),
                },
            })
        })
    }

    fn charge<'a>(&'a self, request: ChargeRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.charge_once(request))
    }

    fn refund<'a>(&'a self, request: RefundRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.refund_once(request))
    }

    fn payout<'a>(&'a self, request: PayoutRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.payout_once(request))
    }
}
