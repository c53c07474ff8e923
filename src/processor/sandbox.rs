//! The built-in sandbox processor (DESIGN §7): test cards with fixed behaviours and the
//! `chargeEmitterQueue` directive. A charge with a directive (every recurring charge has one)
//! ends as the directive says, whatever the card; the card's behaviour decides the others. It
//! plays an outside processor, keeping its own vault (token → behaviour, never the card number)
//! and its own ledger keyed by idempotency key, in tables of its own ([`crate::store::sandbox`])
//! that recur's billing code never reads.

use std::collections::HashMap;
use std::sync::Arc;

use recur_domain::card::CardNumber;

use super::{
    AlternativeRequest, BinInfo, ChargeOutcome, ChargeRequest, PayoutRequest, Processor,
    ProcessorFuture, RefundRequest, Verification,
};
use crate::clock::Clock;
use crate::ids;
use crate::store::sandbox::{self as ledger, Answer, Entry};
use crate::store::{Store, Tx};

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
    /// `4000 0000 0000 0119`: [`TROUBLED_GATEWAY`] fails it with the soft decline
    /// `processing_error`; every other route approves it (the cascading test card).
    GatewayError,
}

/// The sandbox gateway that cannot process [`Behaviour::GatewayError`] cards: "Sandbox Card
/// Gateway A", first in every merchant's cascade.
pub const TROUBLED_GATEWAY: i64 = 101;

impl Behaviour {
    /// The behaviour of a test card number.
    pub fn of(card: &CardNumber) -> Behaviour {
        match card.digits() {
            "4000000000000002" => Behaviour::Decline,
            "4000000000009995" => Behaviour::InsufficientFunds,
            "4000000000003220" => Behaviour::Challenge,
            "4000000000000119" => Behaviour::GatewayError,
            _ => Behaviour::Approve,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Behaviour::Approve => "approve",
            Behaviour::Decline => "decline",
            Behaviour::InsufficientFunds => "insufficient_funds",
            Behaviour::Challenge => "challenge",
            Behaviour::GatewayError => "gateway_error",
        }
    }

    fn from_db(text: &str) -> Behaviour {
        match text {
            "decline" => Behaviour::Decline,
            "insufficient_funds" => Behaviour::InsufficientFunds,
            "challenge" => Behaviour::Challenge,
            "gateway_error" => Behaviour::GatewayError,
            _ => Behaviour::Approve,
        }
    }

    /// `(code, reason)` of a decline through `gateway`, `None` when the card is approved.
    fn decline(self, gateway: Option<i64>) -> Option<(&'static str, &'static str)> {
        match self {
            Behaviour::Decline => Some(("card_declined", "Your card was declined.")),
            Behaviour::InsufficientFunds => Some(("insufficient_funds", "Insufficient funds.")),
            Behaviour::GatewayError if gateway == Some(TROUBLED_GATEWAY) => Some((
                "processing_error",
                "The gateway could not process the card.",
            )),
            Behaviour::Approve | Behaviour::Challenge | Behaviour::GatewayError => None,
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
    async fn recorded(
        tx: &mut Tx,
        merchant_id: i64,
        key: &str,
    ) -> anyhow::Result<Option<ChargeOutcome>> {
        let mut answers = ledger::answers(&mut **tx, &[(merchant_id, key)]).await?;
        Ok(answers.remove(key).map(outcome))
    }

    /// Records an answer for `entry.key` unless one exists, and returns the recorded one: the
    /// first answer for a key wins.
    async fn record_once(&self, tx: &mut Tx, entry: Entry<'_>) -> anyhow::Result<ChargeOutcome> {
        self.record_many(tx, &[entry])
            .await?
            .pop()
            .ok_or_else(|| anyhow::anyhow!("the sandbox ledger lost an entry"))
    }

    /// [`Self::record_once`] for many entries in one statement; the answers in order.
    async fn record_many(
        &self,
        tx: &mut Tx,
        entries: &[Entry<'_>],
    ) -> anyhow::Result<Vec<ChargeOutcome>> {
        let recorded = ledger::record(tx, entries, self.clock.now()).await?;
        entries
            .iter()
            .map(|entry| {
                recorded
                    .get(entry.key)
                    .cloned()
                    .map(outcome)
                    .ok_or_else(|| anyhow::anyhow!("the sandbox ledger lost an entry"))
            })
            .collect()
    }

    /// [`Self::record_once`] in a transaction of its own.
    async fn record_alone(&self, entry: Entry<'_>) -> anyhow::Result<ChargeOutcome> {
        let mut tx = self.store.begin().await?;
        let outcome = self.record_once(&mut tx, entry).await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn behaviour(&self, merchant_id: i64, token: &str) -> anyhow::Result<Option<Behaviour>> {
        Ok(self
            .behaviours(&[(merchant_id, token)])
            .await?
            .remove(&(merchant_id, token.to_string())))
    }

    /// The behaviours of the cards with these `(merchant id, token)` pairs.
    async fn behaviours(
        &self,
        cards: &[(i64, &str)],
    ) -> anyhow::Result<HashMap<(i64, String), Behaviour>> {
        Ok(ledger::behaviours(&self.store, cards)
            .await?
            .into_iter()
            .map(|(card, behaviour)| (card, Behaviour::from_db(&behaviour)))
            .collect())
    }

    /// Charges a batch: the cards' behaviours in one query, the ledger entries in one
    /// transaction.
    async fn charge_batch(
        &self,
        requests: Vec<ChargeRequest<'_>>,
    ) -> anyhow::Result<Vec<ChargeOutcome>> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let cards: Vec<(i64, &str)> = requests.iter().map(|r| (r.merchant_id, r.token)).collect();
        let behaviours = self.behaviours(&cards).await?;
        let entries: Vec<Entry<'_>> = requests
            .iter()
            .map(|request| {
                let behaviour = behaviours
                    .get(&(request.merchant_id, request.token.to_string()))
                    .copied();
                let decline = match (request.directive, behaviour) {
                    (Some(directive), _) if directive.succeed => None,
                    (Some(directive), _) => {
                        Some(("emitter_rejected", directive.description.as_str()))
                    }
                    (None, Some(behaviour)) => behaviour.decline(request.gateway),
                    (None, None) => Some(UNKNOWN_CARD),
                };
                Entry {
                    key: request.idempotency_key,
                    merchant_id: request.merchant_id,
                    kind: "charge",
                    refunded_reference: None,
                    token: request.token,
                    amount: request.amount,
                    currency: request.currency,
                    decline,
                    reference: reference(),
                }
            })
            .collect();
        let mut tx = self.store.begin().await?;
        let outcomes = self.record_many(&mut tx, &entries).await?;
        tx.commit().await?;
        Ok(outcomes)
    }

    async fn refund_once(&self, request: RefundRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        let mut tx = self.store.begin().await?;
        if let Some(answer) =
            Self::recorded(&mut tx, request.merchant_id, request.idempotency_key).await?
        {
            return Ok(answer);
        }
        let (original, refunded) = ledger::refundable(
            &mut tx,
            self.store.backend(),
            request.merchant_id,
            request.charge_reference,
        )
        .await?;
        let token = original
            .as_ref()
            .map(|charge| charge.token.clone())
            .unwrap_or_default();
        let decline = match &original {
            None => Some(("charge_not_found", "No such charge.")),
            Some(charge) if !charge.approved => Some((
                "charge_not_refundable",
                "Only approved charges can be refunded.",
            )),
            Some(charge) if charge.currency != request.currency => Some((
                "currency_mismatch",
                "The refund's currency differs from the charge's.",
            )),
            Some(charge) if refunded + request.amount > charge.amount => Some((
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
                    reference: reference(),
                },
            )
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }

    async fn payout_once(&self, request: PayoutRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        // Sending money needs no funds on the card: only a refused card or a gateway failure
        // stops a payout.
        let decline = match self.behaviour(request.merchant_id, request.token).await? {
            None => Some(UNKNOWN_CARD),
            Some(Behaviour::InsufficientFunds) => None,
            Some(behaviour) => behaviour.decline(request.gateway),
        };
        self.record_alone(Entry {
            key: request.idempotency_key,
            merchant_id: request.merchant_id,
            kind: "payout",
            refunded_reference: None,
            token: request.token,
            amount: request.amount,
            currency: request.currency,
            decline,
            reference: reference(),
        })
        .await
    }

    async fn collect_once(&self, request: AlternativeRequest<'_>) -> anyhow::Result<ChargeOutcome> {
        let refused = request
            .account
            .split('@')
            .next()
            .is_some_and(|local| local.ends_with("+decline"));
        self.record_alone(Entry {
            key: request.idempotency_key,
            merchant_id: request.merchant_id,
            kind: "charge",
            refunded_reference: None,
            token: "",
            amount: request.amount,
            currency: request.currency,
            decline: refused.then_some(("payment_refused", "The payer refused the payment.")),
            reference: reference(),
        })
        .await
    }
}

/// The sandbox's BIN table: (BIN prefix, type, issuer, country). Unknown BINs have no details.
const SANDBOX_BINS: [(&str, &str, &str, &str); 8] = [
    ("424242", "credit", "Sandbox Bank", "US"),
    ("400000", "credit", "Sandbox Bank", "US"),
    ("400005", "debit", "Sandbox Bank", "US"),
    ("400002", "debit", "Sandbox Bank Deutschland", "DE"),
    ("400008", "credit", "Sandbox Bank UK", "GB"),
    ("555555", "credit", "Sandbox Mastercard Bank", "US"),
    ("520082", "debit", "Sandbox Mastercard Bank", "US"),
    ("378282", "credit", "Sandbox Amex", "US"),
];

/// Decline of a token the vault does not know.
const UNKNOWN_CARD: (&str, &str) = ("invalid_payment_method", "Unknown payment method.");

/// The answer a ledger entry gave, as the processor answers it.
fn outcome(answer: Answer) -> ChargeOutcome {
    let reference = answer.reference;
    match answer.decline {
        None => ChargeOutcome::Approved { reference },
        Some((code, reason)) => ChargeOutcome::Declined {
            reference,
            code,
            reason,
        },
    }
}

/// A new ledger reference: the one an entry's answer gets if it is the first for its key.
fn reference() -> String {
    ids::prefixed("sbx_", 28)
}

impl Processor for SandboxProcessor {
    fn tokenize<'a>(
        &'a self,
        merchant_id: i64,
        card: &'a CardNumber,
    ) -> ProcessorFuture<'a, String> {
        Box::pin(async move {
            let token = ids::prefixed("sbx_tok_", 24);
            let behaviour = Behaviour::of(card).as_str();
            ledger::insert_card(
                &self.store,
                &token,
                merchant_id,
                behaviour,
                self.clock.now(),
            )
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
        Box::pin(async move {
            self.charge_batch(vec![request])
                .await?
                .pop()
                .ok_or_else(|| anyhow::anyhow!("the sandbox ledger lost an entry"))
        })
    }

    fn charge_many<'a>(
        &'a self,
        requests: Vec<ChargeRequest<'a>>,
    ) -> ProcessorFuture<'a, Vec<ChargeOutcome>> {
        Box::pin(self.charge_batch(requests))
    }

    fn refund<'a>(&'a self, request: RefundRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.refund_once(request))
    }

    fn payout<'a>(&'a self, request: PayoutRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.payout_once(request))
    }

    fn collect<'a>(
        &'a self,
        request: AlternativeRequest<'a>,
    ) -> ProcessorFuture<'a, ChargeOutcome> {
        Box::pin(self.collect_once(request))
    }

    fn bin_info<'a>(&'a self, bin: &'a str) -> ProcessorFuture<'a, BinInfo> {
        Box::pin(async move {
            Ok(SANDBOX_BINS
                .iter()
                .find(|(prefix, ..)| bin.starts_with(prefix))
                .map(|(_, bin_type, issuer, country)| BinInfo {
                    bin_type: Some((*bin_type).into()),
                    issuer: Some((*issuer).into()),
                    country: Some((*country).into()),
                })
                .unwrap_or_default())
        })
    }
}
