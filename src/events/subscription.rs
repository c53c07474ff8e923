//! The `TRANSACTION_DATA_UPDATE` of a subscription's completed charge attempt or refund: the
//! fields of the hosted-payment-page notification table filled for a subscription transaction,
//! with the `Membership` object.

use chrono::{DateTime, Utc};
use recur_domain::fx::UsdRates;
use serde_json::{json, Map, Value};

use super::membership::membership_json;
use super::transaction::{amount_number, AccountDetails, TransactionPayload, CRM_CARD};
use crate::processor::BinInfo;
use crate::store::cashier_transactions::{Attempt, CardFacts, TransactionKind, TransactionStatus};
use crate::store::charges::{Charge, ChargeKind, ChargeStatus};
use crate::store::credit_notes::CreditNote;
use crate::store::customers::Customer;
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::payment_methods::PaymentMethod;
use crate::store::processors::PaymentProcessor;
use crate::store::refunds::{Refund, RefundStatus};

/// Everything billing knows of a subscription transaction to notify.
pub struct TransactionFacts<'a> {
    /// The membership billed.
    pub membership: &'a Membership,
    /// Its customer.
    pub customer: &'a Customer,
    /// The money that moved (or did not).
    pub movement: Movement<'a>,
    /// The invoice it paid or refunded (or tried to).
    pub invoice: &'a Invoice,
    /// The card charged or refunded.
    pub payment_method: &'a PaymentMethod,
    /// The membership's latest invoices, newest first (after the charge was recorded).
    pub recent: &'a [Invoice],
    /// The merchant's card processor, when it has one.
    pub processor: Option<&'a PaymentProcessor>,
}

/// A subscription transaction to notify: billing's facts and what the server adds to them.
pub struct SubscriptionTransaction<'a> {
    /// What billing knows of it.
    pub facts: TransactionFacts<'a>,
    /// The card's BIN details, from the processor.
    pub bin: BinInfo,
    /// `AccountId` of the customer ([`super::transaction::account_id`]).
    pub account_id: String,
    /// The rates `UsdAmount` is computed with.
    pub usd_rates: &'a UsdRates,
}

/// What a subscription transaction notification reports.
#[derive(Debug, Clone, Copy)]
pub enum Movement<'a> {
    /// A completed charge attempt (`TransactionType: "PayIn"`).
    Charge(&'a Charge),
    /// A completed refund of an invoice's charge (`TransactionType: "Refund"`), with the credit
    /// note a succeeded one wrote.
    Refund(&'a Refund, Option<&'a CreditNote>),
    /// The cardholder disputed the approved charge with their bank (`TransactionType:
    /// "Chargeback"`): the charge's `TransactionId`, the dispute's reference and amount.
    Chargeback(&'a Chargeback),
}

/// A dispute of an approved charge, as the processor reported it.
#[derive(Debug, Clone)]
pub struct Chargeback {
    /// The disputed charge.
    pub charge: Charge,
    /// The processor's id of the dispute (`dp_…`).
    pub reference: String,
    /// Disputed amount, minor units.
    pub amount: i64,
    /// The processor's reason (`fraudulent`, `product_not_received`, …).
    pub reason: String,
    /// When it was reported.
    pub at: DateTime<Utc>,
}

/// The fields a notification takes from its [`Movement`].
struct MovementFacts {
    kind: &'static str,
    status: TransactionStatus,
    id: i64,
    amount: i64,
    reference: String,
    decline: Option<(String, String)>,
    completed_at: Option<DateTime<Utc>>,
    page: Option<(String, String)>,
    retried: bool,
}

impl Movement<'_> {
    fn facts(self) -> MovementFacts {
        match self {
            Movement::Charge(charge) => MovementFacts {
                kind: TransactionKind::PayIn.as_str(),
                status: match charge.status {
                    ChargeStatus::Success => TransactionStatus::Success,
                    ChargeStatus::Rejected => TransactionStatus::Rejected,
                    ChargeStatus::Pending => TransactionStatus::Failed,
                },
                id: charge.id,
                amount: charge.amount,
                reference: charge.processor_reference.clone().unwrap_or_default(),
                decline: charge
                    .decline_code
                    .clone()
                    .map(|code| (code, charge.decline_reason.clone().unwrap_or_default())),
                completed_at: charge.completed_at,
                page: charge
                    .page
                    .as_ref()
                    .map(|p| (p.session_id.clone(), p.client_ip.clone())),
                retried: charge.kind == ChargeKind::Retry,
            },
            Movement::Refund(refund, _) => MovementFacts {
                kind: TransactionKind::Refund.as_str(),
                status: match refund.status {
                    RefundStatus::Succeeded => TransactionStatus::Success,
                    RefundStatus::Failed => TransactionStatus::Rejected,
                    RefundStatus::Pending => TransactionStatus::Failed,
                },
                id: refund.id,
                amount: refund.amount,
                reference: refund.processor_reference.clone().unwrap_or_default(),
                decline: refund.decline.clone(),
                completed_at: refund.completed_at,
                page: None,
                retried: false,
            },
            Movement::Chargeback(dispute) => MovementFacts {
                kind: "Chargeback",
                status: TransactionStatus::Success,
                id: dispute.charge.id,
                amount: dispute.amount,
                reference: dispute.reference.clone(),
                decline: Some((
                    dispute.reason.clone(),
                    "The cardholder disputed the payment with their bank.".into(),
                )),
                completed_at: Some(dispute.at),
                page: None,
                retried: false,
            },
        }
    }
}

/// The payload of the transaction's `TRANSACTION_DATA_UPDATE`, issued at `at`.
pub(super) fn payload(t: SubscriptionTransaction<'_>, at: DateTime<Utc>) -> Map<String, Value> {
    let SubscriptionTransaction {
        facts,
        bin,
        account_id,
        usd_rates,
    } = t;
    let TransactionFacts {
        membership: m,
        customer,
        movement,
        invoice,
        payment_method: card,
        recent,
        processor,
    } = facts;
    let currency = m.currency();
    let (processor_id, processor_name, processor_key) = processor
        .map(|p| (p.processor_id, p.name.clone(), p.processor_key.clone()))
        .unwrap_or((0, "Sandbox".into(), String::new()));
    let moved = movement.facts();
    let status = moved.status;
    let reference = moved.reference.clone();
    let (decline_code, decline_reason) = moved.decline.clone().unzip();
    let f = &customer.fields;
    let payload = TransactionPayload {
        organization_id: m.merchant_id,
        merchant_order_id: m.order_id.clone(),
        account_id,
        account: AccountDetails {
            merchant_id: m.merchant_id,
            created: Some(customer.created_at),
            first_name: Some(f.first_name.clone()),
            last_name: Some(f.last_name.clone()),
            email: Some(f.email.clone()),
            currency: m.currency.clone(),
            country: Some(f.country_code.clone()),
            dob: None,
            city: f.city.clone(),
            zip_code: f.zip_code.clone(),
            region: f.state.clone(),
            street: f.address1.clone(),
            phone: Some(f.phone.clone()),
        },
        usd_amount: usd_rates.to_usd(moved.amount, currency),
        kind: moved.kind,
        status: status.as_str(),
        amount: amount_number(moved.amount, currency),
        initial_amount: amount_number(invoice.subtotal.max(0), currency),
        currency: m.currency.clone(),
        transaction_id: moved.id,
        reference: reference.clone(),
        processor_id,
        processor_name: processor_name.clone(),
        decline_code: decline_code.clone(),
        decline_reason: decline_reason.clone(),
        card: Some(CardFacts {
            token: String::new(),
            brand: card.brand.clone(),
            bin: card.bin.clone(),
            last4: card.last4.clone(),
            fingerprint: card.fingerprint.clone(),
            bin_type: bin.bin_type,
            issuer: bin.issuer,
            country: bin.country,
        }),
        cascade_id: moved.page.as_ref().map(|p| p.0.clone()),
        attempts: vec![Attempt {
            processor_id,
            processor_key,
            processor_name,
            reference,
            decline_code,
            decline_reason,
            status: status.as_str().into(),
            at: moved.completed_at.unwrap_or(at),
        }],
        issued_at: at,
        client_ip: moved.page.map(|p| p.1),
        crm_payment_type: CRM_CARD,
        plan_key: Some(m.membership_key.clone()),
        is_subscription: true,
        subscription_invoice_id: Some(invoice.invoice_key.clone()),
        retried: moved.retried,
    };
    let mut payload = payload.into_json();
    payload.insert("Membership".into(), membership_json(m, recent));
    if let Movement::Refund(_, Some(note)) = movement {
        // Beyond the spec: the credit note the refund wrote (DESIGN §9).
        payload.insert(
            "CreditNote".into(),
            json!({
                "CreditNoteKey": note.credit_note_key,
                "Number": note.number,
                "Amount": amount_number(note.amount, currency),
            }),
        );
    }
    payload
}
