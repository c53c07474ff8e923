//! An invoice as a one-page A4 PDF: where each of the invoice's facts goes. The text is set in
//! DejaVu Sans through [`super::pdf::Document`], which embeds the glyphs used, so any customer's
//! name prints (Latin, Greek, Cyrillic); long descriptions wrap and long names are clipped to the
//! page by their real widths.

use std::collections::BTreeMap;

use axum::response::Response;

use super::invoice_view::InvoiceView;
use super::pdf::{self, Document, Style, A4_HEIGHT, A4_WIDTH};
use crate::pages::failure::PageError;

pub(super) const LEFT: f32 = 56.0;
pub(super) const RIGHT: f32 = A4_WIDTH - 56.0;
/// The width of the seller's and the customer's columns (and where the second starts).
pub(super) const COLUMN: f32 = (RIGHT - LEFT) / 2.0;
/// The least space between a line's description and its amount.
const GUTTER: f32 = 24.0;
pub(super) const REGULAR: Style = Style::Regular;
pub(super) const BOLD: Style = Style::Bold;

/// The download of the PDF of `view` (the invoice `invoice_key`), labelled with the strings `t`,
/// named after the invoice.
pub fn download(
    view: &InvoiceView,
    t: &BTreeMap<String, String>,
    invoice_key: &str,
) -> Result<Response, PageError> {
    pdf::download(render(view, t)?, &format!("invoice-{invoice_key}.pdf"))
}

/// The PDF of `view`, labelled with the strings `t`.
pub fn render(view: &InvoiceView, t: &BTreeMap<String, String>) -> anyhow::Result<Vec<u8>> {
    let label = |key: &str| t.get(key).cloned().unwrap_or_default();
    let mut d = Document::a4(LEFT)?;
    let mut y = A4_HEIGHT - 72.0;
    let name = d.clip(BOLD, 20.0, &view.merchant_name, RIGHT - LEFT);
    d.text(BOLD, 20.0, LEFT, y, &name);
    y -= 26.0;
    d.text(REGULAR, 13.0, LEFT, y, &label("invoice"));
    y -= 30.0;
    let mut facts = vec![
        (label("invoice_number"), view.number.clone()),
        (label("invoice_status"), view.status.clone()),
        (label("issued"), view.issued.clone()),
    ];
    if let Some(paid) = &view.paid {
        facts.push((label("paid_on"), paid.clone()));
    }
    if let Some(period) = &view.period {
        facts.push((label("period"), period.clone()));
    }
    for (name, value) in &facts {
        d.text(REGULAR, 9.5, LEFT, y, name);
        d.text(BOLD, 9.5, LEFT + 110.0, y, value);
        y -= 15.0;
    }
    y -= 16.0;
    let seller_end = party(&mut d, LEFT, y, &label("seller"), &view.seller);
    let buyer_end = party(&mut d, LEFT + COLUMN, y, &label("bill_to"), &view.bill_to);
    y = seller_end.min(buyer_end);

    y -= 24.0;
    d.text(BOLD, 9.5, LEFT, y, &label("description"));
    d.text_right(BOLD, 9.5, RIGHT, y, &label("amount"));
    y -= 8.0;
    d.rule(y, 0.8);
    y -= 16.0;
    for line in &view.lines {
        let amount_width = d.measure(REGULAR, 10.0, &line.amount);
        let room = RIGHT - LEFT - amount_width - GUTTER;
        for (i, text) in d
            .wrap(REGULAR, 10.0, &line.description, room)
            .iter()
            .enumerate()
        {
            if i > 0 {
                y -= 13.0;
            }
            d.text(REGULAR, 10.0, LEFT, y, text);
        }
        d.text_right(REGULAR, 10.0, RIGHT, y, &line.amount);
        y -= 18.0;
    }
    d.rule(y + 8.0, 0.5);
    y -= 8.0;
    let mut totals = vec![(REGULAR, label("subtotal"), view.subtotal.clone())];
    if let Some(discount) = &view.discount {
        let name = d.clip(REGULAR, 10.0, &discount.description, 200.0);
        totals.push((REGULAR, name, discount.amount.clone()));
    }
    for tax in &view.taxes {
        let name = d.clip(REGULAR, 10.0, &tax.description, 200.0);
        totals.push((REGULAR, name, tax.amount.clone()));
    }
    if let Some(taxed) = &view.taxed_total {
        totals.push((BOLD, label("total_with_taxes"), taxed.clone()));
    }
    if let Some(credit) = &view.credit {
        totals.push((REGULAR, label("credit"), credit.clone()));
    }
    totals.push((BOLD, label("total"), view.total.clone()));
    totals.push((REGULAR, label("amount_paid"), view.amount_paid.clone()));
    totals.push((
        BOLD,
        label("amount_remaining"),
        view.amount_remaining.clone(),
    ));
    for (style, name, value) in &totals {
        d.text(*style, 10.0, RIGHT - 220.0, y, name);
        d.text_right(*style, 10.0, RIGHT, y, value);
        y -= 17.0;
    }
    if let Some(notice) = &view.reverse_charge {
        d.text(BOLD, 9.5, LEFT, y - 8.0, notice);
    }

    d.gray(0.4);
    d.text(REGULAR, 8.0, LEFT, 40.0, &label("powered_by"));
    d.finish(&format!("{} {}", label("invoice"), view.number))
}

/// A party's block at (`x`, `y`): `heading`, then `lines` (the first, its name, in bold), each
/// clipped to the column; the height below it.
pub(super) fn party(d: &mut Document, x: f32, mut y: f32, heading: &str, lines: &[String]) -> f32 {
    d.text(BOLD, 9.5, x, y, heading);
    y -= 15.0;
    for (i, line) in lines.iter().enumerate() {
        let style = if i == 0 { BOLD } else { REGULAR };
        let line = d.clip(style, 9.5, line, COLUMN - GUTTER);
        d.text(style, 9.5, x, y, &line);
        y -= 14.0;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::invoice_view::LineView;

    fn view() -> InvoiceView {
        InvoiceView {
            merchant_name: "Zürich Café".into(),
            seller: vec![
                "Zürich Café GmbH".into(),
                "Bahnhofstrasse 1".into(),
                "CH".into(),
                "Tax ID: CHE-123.456.789".into(),
            ],
            number: "in_abc".into(),
            status: "Paid".into(),
            status_code: "Paid".into(),
            issued: "3 Dec 2026".into(),
            paid: Some("3 Dec 2026".into()),
            period: Some("3 Dec 2026 – 2 Jan 2027".into()),
            subscription_name: "Pro".into(),
            bill_to: vec!["Ada Lovelace".into(), "ada@example.com".into(), "DE".into()],
            lines: vec![LineView {
                description: "Pro".into(),
                amount: "€49.90".into(),
            }],
            subtotal: "€49.90".into(),
            discount: None,
            taxes: Vec::new(),
            taxed_total: None,
            reverse_charge: None,
            credit: None,
            total: "€49.90".into(),
            amount_paid: "€49.90".into(),
            amount_remaining: "€0.00".into(),
            currency: "EUR".into(),
        }
    }

    #[test]
    fn writes_a_pdf_with_the_invoice_text_in_the_embedded_font() {
        let strings = crate::i18n::Strings::load().unwrap();
        let bytes = render(&view(), strings.for_accept_language(None)).unwrap();
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("/Title (Invoice in_abc)"), "{text}");
        assert!(text.contains("/FontFile2"));
        assert!(!text.contains("WinAnsiEncoding"));
    }

    #[test]
    fn a_long_description_wraps_instead_of_running_under_the_amount() {
        let strings = crate::i18n::Strings::load().unwrap();
        let mut v = view();
        v.lines[0].description = "Pro ".repeat(60);
        let long = render(&v, strings.for_accept_language(None)).unwrap();
        let short = render(&view(), strings.for_accept_language(None)).unwrap();
        let count = |pdf: &[u8]| {
            super::super::pdf::inflated_streams(pdf)
                .matches(" Tj")
                .count()
        };
        assert!(count(&long) >= count(&short) + 2);
    }
}
