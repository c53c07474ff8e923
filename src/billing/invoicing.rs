//! Issuing invoices: a membership's [`InvoicePlan`] as a stored invoice. Every invoice the
//! engine writes (first, renewal, proration) is built here.

use chrono::{DateTime, Utc};
use recur_domain::calendar::Period;
use recur_domain::invoice::InvoicePlan;
use recur_domain::status::InvoiceStatus;

use super::{numbering, BillingError};
use crate::ids;
use crate::store::invoices::{self, Invoice, InvoiceKind, NewInvoice};
use crate::store::memberships::Membership;
use crate::store::Tx;

/// The invoice of `plan` for `m`, of `kind`, under `billing_key` (unique per membership:
/// `first:<n>`, `period:<start>`, `proration:<n>`), billing `period`. A first invoice is Open
/// until a checkout pays it (its period starts then); any other is Paid at once when credit
/// covers it, Open otherwise.
pub fn new_invoice<'a>(
    m: &'a Membership,
    kind: InvoiceKind,
    billing_key: String,
    period: Option<Period>,
    plan: &'a InvoicePlan,
) -> NewInvoice<'a> {
    let paid = kind != InvoiceKind::First && plan.amount_due == 0;
    NewInvoice {
        merchant_id: m.merchant_id,
        membership_id: m.id,
        invoice_key: ids::invoice_key(),
        billing_key,
        kind,
        status: if paid {
            InvoiceStatus::Paid
        } else {
            InvoiceStatus::Open
        },
        currency: &m.currency,
        period,
        plan,
    }
}

/// Stores `new` in the caller's transaction, finalized ([`numbering::finalize`]) when credit
/// paid it at once. A conflict, saying `taken`, when its membership already has an invoice
/// under its billing key.
pub async fn issue(
    tx: &mut Tx,
    new: NewInvoice<'_>,
    at: DateTime<Utc>,
    taken: &str,
) -> Result<Invoice, BillingError> {
    let mut invoice = invoices::insert(tx, new, at)
        .await?
        .ok_or_else(|| BillingError::Conflict(taken.into()))?;
    if invoice.status == InvoiceStatus::Paid {
        invoice.number = numbering::finalize(tx, &[&invoice], at)
            .await?
            .remove(&invoice.id);
    }
    Ok(invoice)
}
