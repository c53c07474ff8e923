//! The payment processor boundary (DESIGN §7).
//!
//! recur never moves money itself: it asks a [`Processor`] to store a card (getting a token
//! back) and to charge a stored card. Every charge carries an idempotency key, and a processor
//! must answer a repeated key with the first answer instead of charging again; that is what
//! makes a crash between the processor's answer and recur's commit harmless.

pub mod sandbox;
pub mod stripe;

use std::future::Future;
use std::pin::Pin;

use recur_domain::card::CardNumber;
use recur_domain::membership::ChargeDirective;

/// A processor call in flight.
pub type ProcessorFuture<'a, T> = Pin<Box<dyn Future<Output = anyhow::Result<T>> + Send + 'a>>;

/// A charge of a stored card.
#[derive(Debug, Clone)]
pub struct ChargeRequest<'a> {
    /// The merchant on whose behalf the charge runs.
    pub merchant_id: i64,
    /// Unique per attempt; repeating it returns the first answer.
    pub idempotency_key: &'a str,
    /// The token the processor gave for the card.
    pub token: &'a str,
    /// Amount in minor units of `currency`.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// The merchant's card gateway (`PaymentProcessorId`) to route through; `None` lets the
    /// processor pick its default route (renewals).
    pub gateway: Option<i64>,
    /// Sandbox only: the outcome of a recurring charge (renewal, dunning retry), which every
    /// recurring charge carries: its `chargeEmitterQueue` item, or success past the queue's end
    /// and without one, whatever the card. `None` for charges the card decides (first payment,
    /// pay-now, proration). Live processors ignore it.
    pub directive: Option<&'a ChargeDirective>,
}

/// A refund of (part of) an approved charge.
#[derive(Debug, Clone)]
pub struct RefundRequest<'a> {
    /// The merchant on whose behalf the refund runs.
    pub merchant_id: i64,
    /// Unique per refund; repeating it returns the first answer.
    pub idempotency_key: &'a str,
    /// The processor's reference of the charge to refund.
    pub charge_reference: &'a str,
    /// Amount in minor units; at most what is left of the charge.
    pub amount: i64,
    /// ISO 4217 code of the charge.
    pub currency: &'a str,
}

/// A payout: money sent to a stored card.
#[derive(Debug, Clone)]
pub struct PayoutRequest<'a> {
    /// The merchant on whose behalf the payout runs.
    pub merchant_id: i64,
    /// Unique per payout; repeating it returns the first answer.
    pub idempotency_key: &'a str,
    /// The token the processor gave for the card.
    pub token: &'a str,
    /// Amount in minor units.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// The card gateway to route through; `None` for the default route.
    pub gateway: Option<i64>,
}

/// A payment through an alternative (non-card) method such as an e-wallet or a bank transfer.
#[derive(Debug, Clone)]
pub struct AlternativeRequest<'a> {
    /// The merchant on whose behalf the payment runs.
    pub merchant_id: i64,
    /// Unique per payment; repeating it returns the first answer.
    pub idempotency_key: &'a str,
    /// The method's `PaymentProcessorId`.
    pub method: i64,
    /// The payer's account at the method (their e-mail address).
    pub account: &'a str,
    /// Amount in minor units.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
}

/// What the card's BIN tells about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinInfo {
    /// `credit`, `debit` or `prepaid`.
    pub bin_type: Option<String>,
    /// The issuing bank.
    pub issuer: Option<String>,
    /// ISO 3166-1 alpha-2 country of the issuer.
    pub country: Option<String>,
}

/// The processor's answer to a charge, refund or payout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    /// The money moved.
    Approved {
        /// The processor's transaction reference.
        reference: String,
    },
    /// The processor refused.
    Declined {
        /// The processor's transaction reference.
        reference: String,
        /// Machine-readable reason (`card_declined`, `insufficient_funds`, …).
        code: String,
        /// Human-readable reason.
        reason: String,
    },
}

impl ChargeOutcome {
    /// The processor's transaction reference.
    pub fn reference(&self) -> &str {
        match self {
            ChargeOutcome::Approved { reference } | ChargeOutcome::Declined { reference, .. } => {
                reference
            }
        }
    }
}

/// The issuer's answer to a card check (a zero-amount authorization).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// The card can be charged later.
    Valid,
    /// The issuer refused the card.
    Refused {
        /// Machine-readable reason (`card_declined`, …).
        code: String,
        /// Human-readable reason.
        reason: String,
    },
}

/// A payment processor.
pub trait Processor: Send + Sync + 'static {
    /// Stores a card in the processor's vault and returns its token.
    fn tokenize<'a>(
        &'a self,
        merchant_id: i64,
        card: &'a CardNumber,
    ) -> ProcessorFuture<'a, String>;

    /// Whether a charge of the card with its holder present needs them to confirm their identity
    /// first (3-D Secure); the hosted pages show a challenge step when it does. Charges without
    /// the holder present (renewals) never ask.
    fn requires_authentication<'a>(
        &'a self,
        merchant_id: i64,
        token: &'a str,
    ) -> ProcessorFuture<'a, bool>;

    /// Checks a stored card before it replaces the payment method for later charges.
    fn verify<'a>(&'a self, merchant_id: i64, token: &'a str) -> ProcessorFuture<'a, Verification>;

    /// Charges a stored card. Idempotent on `request.idempotency_key`.
    fn charge<'a>(&'a self, request: ChargeRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome>;

    /// Charges many stored cards at once (the renewal engine's batches): one answer per
    /// request, in order. Each request is idempotent on its key, as in [`Processor::charge`]; an
    /// error leaves every answer unknown, and the attempts are asked again later.
    fn charge_many<'a>(
        &'a self,
        requests: Vec<ChargeRequest<'a>>,
    ) -> ProcessorFuture<'a, Vec<ChargeOutcome>>;

    /// Refunds (part of) an approved charge. Idempotent on `request.idempotency_key`.
    fn refund<'a>(&'a self, request: RefundRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome>;

    /// Sends money to a stored card. Idempotent on `request.idempotency_key`.
    fn payout<'a>(&'a self, request: PayoutRequest<'a>) -> ProcessorFuture<'a, ChargeOutcome>;

    /// Takes a payment through an alternative method. Idempotent on `request.idempotency_key`;
    /// refunded like a charge, by its reference.
    fn collect<'a>(&'a self, request: AlternativeRequest<'a>)
        -> ProcessorFuture<'a, ChargeOutcome>;

    /// Looks up the card type, issuer and country of a BIN (the first six digits).
    fn bin_info<'a>(&'a self, bin: &'a str) -> ProcessorFuture<'a, BinInfo>;
}
