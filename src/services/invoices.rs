//! Invoices and their refunds (DESIGN §9): an invoice with its membership, customer, refunds
//! and credit notes (`GET /invoice/{invoiceKey}`, `GET /invoices`), and refunding all or part of
//! a Paid invoice's card payment (`POST /invoice/{invoiceKey}/refund`, the dashboard's refund)
//! through [`refunds::refund_invoice`], which holds the amount's rules.

use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use super::ServiceError;
use crate::billing::refunds::{self, Recorded, RefundAsk};
use crate::http::input::Field;
use crate::state::AppState;
use crate::store::credit_notes::{self, CreditNote};
use crate::store::invoices::{self, Invoice, Listed};
use crate::store::memberships;
use crate::store::refunds::{self as ledger, Refund};

/// Longest refund `reason`.
pub const MAX_REASON_CHARS: usize = 500;

/// An invoice with what its document shows.
#[derive(Debug)]
pub struct InvoiceDetail {
    /// The invoice.
    pub invoice: Invoice,
    /// The membership it bills.
    pub membership_key: String,
    /// The customer billed.
    pub customer_key: String,
    /// Its refunds, oldest first.
    pub refunds: Vec<Refund>,
    /// Its credit notes, oldest first.
    pub credit_notes: Vec<CreditNote>,
}

/// A refund as asked for.
#[derive(Debug, Default)]
pub struct InvoiceRefund {
    /// Amount in the invoice's currency; what is left to refund when absent or null.
    pub amount: Field<Decimal>,
    /// Why the money is given back: at most [`MAX_REASON_CHARS`] characters; blank is none.
    pub reason: Field<String>,
}

/// The merchant's invoice `invoice_key` with its membership, customer, refunds and credit
/// notes; not found when the merchant has no such invoice.
pub async fn invoice(
    state: &AppState,
    merchant_id: i64,
    invoice_key: &str,
) -> Result<InvoiceDetail, ServiceError> {
    let pool = state.store.pool();
    let invoice = invoices::by_key(pool, merchant_id, invoice_key)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let m = memberships::by_id(pool, merchant_id, invoice.membership_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let refunds = ledger::of_invoice(pool, invoice.id).await?;
    let credit_notes = credit_notes::of_invoice(pool, merchant_id, invoice.id).await?;
    Ok(InvoiceDetail {
        invoice,
        membership_key: m.membership_key,
        customer_key: m.customer_key,
        refunds,
        credit_notes,
    })
}

/// The merchant's invoices `rows` (a page of a list) each with its refunds and credit notes,
/// read in one statement each.
pub async fn details(
    state: &AppState,
    merchant_id: i64,
    rows: Vec<Listed>,
) -> Result<Vec<InvoiceDetail>, ServiceError> {
    let pool = state.store.pool();
    let ids: Vec<i64> = rows.iter().map(|listed| listed.invoice.id).collect();
    let mut refunds = ledger::of_invoices(pool, &ids).await?;
    let mut notes = credit_notes::of_invoices(pool, merchant_id, &ids).await?;
    Ok(rows
        .into_iter()
        .map(|listed| InvoiceDetail {
            refunds: refunds.remove(&listed.invoice.id).unwrap_or_default(),
            credit_notes: notes.remove(&listed.invoice.id).unwrap_or_default(),
            invoice: listed.invoice,
            membership_key: listed.membership_key,
            customer_key: listed.customer_key,
        })
        .collect())
}

/// Refunds all or part of the card payment of the merchant's Paid invoice `invoice_key` through
/// the processor that took it; the membership's status does not change. The refund as recorded:
/// `Succeeded` (with its credit note) or `Failed` (the processor refused). A conflict when the
/// invoice is not Paid, is fully refunded or was paid by credit alone; a malformed amount is
/// reported after the invoice's state (DESIGN §9: 409 first).
pub async fn refund(
    state: &AppState,
    merchant_id: i64,
    invoice_key: &str,
    ask: InvoiceRefund,
) -> Result<Recorded, ServiceError> {
    let mut errors = FieldErrors::new();
    // A malformed amount is reported after the invoice's state (DESIGN §9: 409 first).
    let amount = match ask.amount {
        Field::Absent | Field::Null => Ok(None),
        Field::Present(amount) => Ok(Some(amount)),
        Field::Invalid(message) => Err(message),
    };
    let reason = ask
        .reason
        .optional("reason", &mut errors)
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        errors.add(
            "reason",
            format!("must be at most {MAX_REASON_CHARS} characters"),
        );
    }
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let ask = RefundAsk { amount, reason };
    Ok(refunds::refund_invoice(state, merchant_id, invoice_key, ask).await?)
}
