//! A credit note as people read it, in their language: the facts of its PDF, and its line on
//! the invoice page it credits.

use std::collections::BTreeMap;

use recur_domain::money::{display_amount, Currency};
use serde::Serialize;

use super::format::display_date;
use super::invoice_view::InvoiceView;
use crate::i18n;
use crate::store::credit_notes::CreditNote;

/// Everything shown on a credit note, formatted.
#[derive(Debug, Clone, Serialize)]
pub struct CreditNoteView {
    /// The merchant's display name, the document's heading.
    pub merchant_name: String,
    /// The seller's legal name, address and tax id, as on the invoice.
    pub seller: Vec<String>,
    /// `CN-2027-000001`.
    pub number: String,
    /// When it was written.
    pub issued: String,
    /// The number of the invoice it credits.
    pub invoice_number: String,
    /// The refund's reason, or why the invoice was voided.
    pub reason: Option<String>,
    /// Formatted amount credited.
    pub amount: String,
    /// The customer, as on the invoice.
    pub bill_to: Vec<String>,
    /// Where its PDF downloads.
    pub pdf_url: String,
}

/// The view of `note`, crediting the invoice of `invoice` (its seller and customer), with its
/// PDF at `pdf_url`.
pub fn credit_note_view(
    t: &BTreeMap<String, String>,
    invoice: &InvoiceView,
    note: &CreditNote,
    pdf_url: String,
) -> CreditNoteView {
    let lang = i18n::lang(t);
    let amount = Currency::parse(&note.currency).map_or_else(
        |_| format!("{} {}", note.amount, note.currency),
        |currency| display_amount(note.amount, currency, lang),
    );
    CreditNoteView {
        merchant_name: invoice.merchant_name.clone(),
        seller: invoice.seller.clone(),
        number: note.number.clone(),
        issued: display_date(note.created_at, lang),
        invoice_number: invoice.number.clone(),
        reason: note.reason.clone(),
        amount,
        bill_to: invoice.bill_to.clone(),
        pdf_url,
    }
}
