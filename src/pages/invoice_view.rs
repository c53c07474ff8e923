//! An invoice as the customer reads it, in their language: the same facts for the HTML page and
//! the PDF.

use std::collections::BTreeMap;

use recur_domain::coupon::AppliedCoupon;
use recur_domain::invoice::CREDIT_LINE;
use recur_domain::money::{display_amount, Currency};
use recur_domain::tax::InvoiceTax;
use serde::Serialize;

use super::brand::Brand;
use super::format::display_date;
use crate::i18n;
use crate::store::customers::{Customer, TaxId};
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;

/// One line of the invoice table.
#[derive(Debug, Clone, Serialize)]
pub struct LineView {
    /// What it is for.
    pub description: String,
    /// Formatted amount.
    pub amount: String,
}

/// Everything shown on an invoice, formatted.
#[derive(Debug, Clone, Serialize)]
pub struct InvoiceView {
    /// The name the merchant's customers see (its display name), as the document's heading.
    pub merchant_name: String,
    /// The seller: legal name (or display name), address lines, country and tax id.
    pub seller: Vec<String>,
    /// `INV-2027-000042` once finalized; `in_…` before.
    pub number: String,
    /// Status, in the page's language.
    pub status: String,
    /// Status name (`Paid`), for styling.
    pub status_code: String,
    /// Issue date.
    pub issued: String,
    /// Paid date, once paid.
    pub paid: Option<String>,
    /// Service period (`3 Jan 2027 – 2 Feb 2027`), when known.
    pub period: Option<String>,
    /// The plan.
    pub subscription_name: String,
    /// Customer name, e-mail, address lines, country and tax ids (VAT id and the like).
    pub bill_to: Vec<String>,
    /// The charged lines (credit is shown apart).
    pub lines: Vec<LineView>,
    /// Before credit.
    pub subtotal: String,
    /// A coupon's discount: `Discount (SPRING20)` and its (negative) amount, when there is one.
    pub discount: Option<LineView>,
    /// Each tax: its name and percentage (inclusive ones marked), and its amount.
    pub taxes: Vec<LineView>,
    /// Subtotal less discount plus exclusive taxes, when the invoice is discounted, taxed or
    /// reverse-charged and credit then settled part of it (otherwise it is the total).
    pub taxed_total: Option<String>,
    /// The reverse-charge notice, when EU rates were skipped.
    pub reverse_charge: Option<String>,
    /// Credit used, when any.
    pub credit: Option<String>,
    /// Total to pay.
    pub total: String,
    /// Paid so far.
    pub amount_paid: String,
    /// Still owed.
    pub amount_remaining: String,
    /// ISO 4217 code.
    pub currency: String,
}

fn text(t: &BTreeMap<String, String>, key: &str) -> String {
    t.get(key).cloned().unwrap_or_else(|| key.to_string())
}

/// `VAT 19 %`, or `incl. VAT 19 %` for a tax contained in the price.
pub(super) fn tax_label(t: &BTreeMap<String, String>, tax: &InvoiceTax) -> String {
    let label = format!("{} {} %", tax.name, tax.percentage);
    if tax.inclusive {
        format!("{} {label}", text(t, "tax_included"))
    } else {
        label
    }
}

/// `Discount (SPRING20)`: a coupon's discount line, named by its code when known.
pub(super) fn discount_label(
    t: &BTreeMap<String, String>,
    coupon: Option<&AppliedCoupon>,
) -> String {
    match coupon {
        Some(coupon) => format!("{} ({})", text(t, "discount"), coupon.code),
        None => text(t, "discount"),
    }
}

/// How people see which invoice it is: its number once finalized; before that its key is all
/// there is to quote.
pub fn shown_number(invoice: &Invoice) -> &str {
    invoice.number.as_deref().unwrap_or(&invoice.invoice_key)
}

/// Builds the view of `invoice`, sold by the merchant of `brand`, for a page in the language of
/// `t`.
pub fn invoice_view(
    t: &BTreeMap<String, String>,
    brand: &Brand,
    customer: &Customer,
    membership: &Membership,
    invoice: &Invoice,
) -> InvoiceView {
    let lang = i18n::lang(t);
    let currency = Currency::parse(&invoice.currency).unwrap_or_else(|_| membership.currency());
    let money = |minor: i64| display_amount(minor, currency, lang);
    let c = &customer.fields;
    let mut bill_to = vec![format!("{} {}", c.first_name, c.last_name), c.email.clone()];
    bill_to.extend(
        [&c.address1, &c.address2]
            .into_iter()
            .flatten()
            .filter(|l| !l.trim().is_empty())
            .cloned(),
    );
    let place = [&c.zip_code, &c.city, &c.state]
        .into_iter()
        .flatten()
        .filter(|p| !p.trim().is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if !place.is_empty() {
        bill_to.push(place);
    }
    bill_to.push(c.country_code.clone());
    bill_to.extend(c.tax_ids.iter().map(|id| tax_id_line(t, id)));
    let seller = &brand.seller;
    let mut seller_lines = vec![seller.legal_name.clone()];
    seller_lines.extend(seller.address.iter().cloned());
    seller_lines.extend(
        seller
            .tax_id
            .as_ref()
            .map(|id| format!("{}: {id}", label(t, "tax_id"))),
    );
    let status_code = invoice.status.as_str().to_string();
    let remaining = if invoice.status == recur_domain::status::InvoiceStatus::Open {
        invoice.amount_due - invoice.amount_paid
    } else {
        0
    };
    InvoiceView {
        merchant_name: brand.name.clone(),
        seller: seller_lines,
        number: shown_number(invoice).to_string(),
        status: t
            .get(&format!("invoice_status_{status_code}"))
            .cloned()
            .unwrap_or_else(|| status_code.clone()),
        status_code,
        issued: display_date(invoice.created_at, lang),
        paid: invoice.paid_at.map(|at| display_date(at, lang)),
        // From the period's first instant to the next billing date, as Stripe prints periods.
        period: invoice.period.map(|p| {
            format!(
                "{} – {}",
                display_date(p.start, lang),
                display_date(p.end, lang)
            )
        }),
        subscription_name: membership.subscription_name.clone(),
        bill_to,
        lines: invoice
            .lines
            .iter()
            .filter(|l| l.description != CREDIT_LINE)
            .map(|l| LineView {
                description: l.description.clone(),
                amount: money(l.amount),
            })
            .collect(),
        subtotal: money(invoice.subtotal),
        discount: (invoice.discount != 0).then(|| LineView {
            description: discount_label(t, invoice.coupon.as_ref()),
            amount: money(-invoice.discount),
        }),
        taxes: invoice
            .taxes
            .iter()
            .map(|tax| LineView {
                description: tax_label(t, tax),
                amount: money(tax.amount),
            })
            .collect(),
        taxed_total: ((!invoice.taxes.is_empty()
            || invoice.reverse_charge
            || invoice.discount != 0)
            && invoice.credit_applied > 0)
            .then(|| money(invoice.total)),
        reverse_charge: invoice.reverse_charge.then(|| text(t, "reverse_charge")),
        credit: (invoice.credit_applied > 0).then(|| money(-invoice.credit_applied)),
        total: money(invoice.amount_due),
        amount_paid: money(invoice.amount_paid),
        amount_remaining: money(remaining),
        currency: currency.code().to_string(),
    }
}

fn label(t: &BTreeMap<String, String>, key: &str) -> String {
    t.get(key).cloned().unwrap_or_else(|| key.to_string())
}

/// A customer's tax id as the invoice prints it: `VAT ID: DE123456789` for an EU VAT number,
/// `Tax ID (us_ein): 12-3456789` for other kinds.
fn tax_id_line(t: &BTreeMap<String, String>, id: &TaxId) -> String {
    if id.kind == "eu_vat" {
        format!("{}: {}", label(t, "vat_id"), id.value)
    } else {
        format!("{} ({}): {}", label(t, "tax_id"), id.kind, id.value)
    }
}
