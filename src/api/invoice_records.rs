//! The records of an invoice, its lines, taxes and coupon, and of a credit note, as a
//! membership record and an invoice document (`GET /invoice/{invoiceKey}`) both show them.

use chrono::{DateTime, Utc};
use recur_domain::coupon::{AppliedCoupon, CouponOff};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::problem::ApiError;
use crate::links::{self, Document};
use crate::platform::Platform;
use crate::store::credit_notes::CreditNote;
use crate::store::invoices::Invoice;

/// An invoice line.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLineRecord {
    /// What it is for.
    pub description: String,
    /// Signed decimal string; credit lines are negative.
    pub amount: String,
    /// A usage line's meter code (DESIGN §19); absent on other lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter_code: Option<String>,
    /// A usage line's quantity, a decimal string; absent on other lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<String>,
}

/// An invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceRecord {
    /// `in_` + 24 base62 characters; empty on an upcoming invoice, which is not stored.
    pub invoice_key: String,
    /// `{prefix}-{YYYY}-{NNNNNN}` once finalized (its first payment attempt); `null` before.
    pub number: Option<String>,
    /// `first`, `renewal` or `proration`.
    pub kind: String,
    /// Draft, Open, Paid, Void or Uncollectible.
    pub status: String,
    /// ISO 4217 code.
    pub currency: String,
    /// Start of the billed period.
    pub period_start: Option<String>,
    /// End of the billed period.
    pub period_end: Option<String>,
    /// Sum of the lines before credit.
    pub subtotal: String,
    /// Taken off the subtotal before taxes by a coupon.
    pub discount: String,
    /// The coupon the discount came from; `null` without a discount.
    pub coupon: Option<CouponRecord>,
    /// Each rate's tax, as the rate was when invoiced.
    pub taxes: Vec<InvoiceTaxRecord>,
    /// `subtotal − discount + exclusive taxes`: what credit and the payment method settle.
    pub total: String,
    /// EU rates were skipped: the customer accounts for the VAT.
    pub reverse_charge: bool,
    /// The cardholder disputed the payment with their bank (a chargeback reported by Stripe).
    pub disputed: bool,
    /// Credit consumed.
    pub credit_applied: String,
    /// Due from the payment method.
    pub amount_due: String,
    /// Paid by the payment method.
    pub amount_paid: String,
    /// Given back by succeeded refunds.
    pub amount_refunded: String,
    /// Lines, credit last.
    pub lines: Vec<InvoiceLineRecord>,
    /// Creation time.
    pub created_at: String,
    /// Payment time.
    pub paid_at: Option<String>,
    /// Void time.
    pub voided_at: Option<String>,
}

/// One tax of an invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceTaxRecord {
    /// The rate's id (`txr_…`).
    pub tax_rate_id: String,
    /// The rate's name when invoiced.
    pub name: String,
    /// Decimal string, 0–100.
    pub percentage: String,
    /// Contained in the total (`true`) or added to it.
    pub inclusive: bool,
    /// Signed decimal string in the invoice's currency.
    pub amount: String,
}

impl From<&Invoice> for InvoiceRecord {
    fn from(invoice: &Invoice) -> Self {
        let currency = Currency::parse(&invoice.currency).ok();
        let money =
            |minor: i64| currency.map_or_else(|| minor.to_string(), |c| format_amount(minor, c));
        InvoiceRecord {
            invoice_key: invoice.invoice_key.clone(),
            number: invoice.number.clone(),
            kind: invoice.kind.as_str().to_string(),
            status: invoice.status.as_str().to_string(),
            currency: invoice.currency.clone(),
            period_start: invoice.period.map(|p| format_utc(p.start)),
            period_end: invoice.period.map(|p| format_utc(p.end)),
            subtotal: money(invoice.subtotal),
            discount: money(invoice.discount),
            coupon: invoice
                .coupon
                .as_ref()
                .zip(currency)
                .map(|(coupon, currency)| CouponRecord::new(coupon, currency)),
            taxes: invoice
                .taxes
                .iter()
                .map(|t| InvoiceTaxRecord {
                    tax_rate_id: t.tax_rate_id.clone(),
                    name: t.name.clone(),
                    percentage: t.percentage.to_string(),
                    inclusive: t.inclusive,
                    amount: money(t.amount),
                })
                .collect(),
            total: money(invoice.total),
            reverse_charge: invoice.reverse_charge,
            disputed: invoice.disputed,
            credit_applied: money(invoice.credit_applied),
            amount_due: money(invoice.amount_due),
            amount_paid: money(invoice.amount_paid),
            amount_refunded: money(invoice.amount_refunded),
            lines: invoice
                .lines
                .iter()
                .map(|l| InvoiceLineRecord {
                    description: l.description.clone(),
                    amount: money(l.amount),
                    meter_code: l.usage.as_ref().map(|u| u.meter_code.clone()),
                    quantity: l.usage.as_ref().map(|u| u.quantity.normalize().to_string()),
                })
                .collect(),
            created_at: format_utc(invoice.created_at),
            paid_at: invoice.paid_at.map(format_utc),
            voided_at: invoice.voided_at.map(format_utc),
        }
    }
}

/// A coupon as a membership or an invoice names it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CouponRecord {
    /// The coupon's id (`cpn_…`).
    pub coupon_id: String,
    /// Its code, uppercase.
    pub code: String,
    /// Decimal string, when it takes a percentage off.
    pub percent_off: Option<String>,
    /// Decimal string in the membership's currency, when it takes an amount off.
    pub amount_off: Option<String>,
}

impl CouponRecord {
    /// The record of `coupon` on a membership or an invoice in `currency`.
    pub fn new(coupon: &AppliedCoupon, currency: Currency) -> Self {
        let (percent_off, amount_off) = match coupon.off {
            CouponOff::PercentOff(p) => (Some(p.to_string()), None),
            CouponOff::AmountOff(a) => (None, Some(format_amount(a, currency))),
        };
        CouponRecord {
            coupon_id: coupon.coupon_id.clone(),
            code: coupon.code.clone(),
            percent_off,
            amount_off,
        }
    }
}

/// A credit note of an invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditNoteRecord {
    /// `cn_` + 24 base62 characters.
    pub credit_note_key: String,
    /// `CN-{YYYY}-{NNNNNN}`.
    pub number: String,
    /// Decimal string in the invoice's currency.
    pub amount: String,
    /// The refund's reason, why the invoice was voided, or what the credit is for.
    pub reason: Option<String>,
    /// `refund`, `void`, or `credit` (money a change owes back, added to the membership's
    /// credit balance: a downgrade, unused time at a pause or an interval change).
    pub kind: String,
    /// When it was written (UTC; the merchant's clock).
    pub created_at: String,
    /// A signed link to its PDF that works without a token for 30 days.
    pub pdf_url: String,
}

impl CreditNoteRecord {
    /// The record of `note`, with its PDF link as of `now` (the server's time).
    pub fn of(state: &Platform, note: &CreditNote, now: DateTime<Utc>) -> Result<Self, ApiError> {
        let currency = Currency::parse(&note.currency).map_err(anyhow::Error::from)?;
        Ok(Self {
            credit_note_key: note.credit_note_key.clone(),
            number: note.number.clone(),
            amount: format_amount(note.amount, currency),
            reason: note.reason.clone(),
            kind: note.kind.as_str().to_string(),
            created_at: format_utc(note.created_at),
            pdf_url: links::document_url(
                state,
                note.merchant_id,
                Document::CreditNote,
                &note.credit_note_key,
                now,
            ),
        })
    }
}
