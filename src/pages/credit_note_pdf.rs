//! A credit note as a one-page A4 PDF, laid out like the invoice ([`invoice_pdf`]'s text
//! primitives and fonts): seller, number, date, the invoice it credits, reason, customer and
//! the amount credited.

use std::collections::BTreeMap;

use axum::response::Response;

use super::credit_note_view::CreditNoteView;
use super::invoice_pdf::{party, BOLD, COLUMN, LEFT, REGULAR, RIGHT};
use super::pdf::{self, Document, A4_HEIGHT};
use crate::pages::failure::PageError;

/// The download of the PDF of `view`, labelled with the strings `t`, named after its number.
pub fn download(
    view: &CreditNoteView,
    t: &BTreeMap<String, String>,
) -> Result<Response, PageError> {
    pdf::download(
        render(view, t)?,
        &format!("credit-note-{}.pdf", view.number),
    )
}

/// The PDF of `view`, labelled with the strings `t`.
pub fn render(view: &CreditNoteView, t: &BTreeMap<String, String>) -> anyhow::Result<Vec<u8>> {
    let label = |key: &str| t.get(key).cloned().unwrap_or_default();
    let mut d = Document::a4(LEFT)?;
    let mut y = A4_HEIGHT - 72.0;
    let name = d.clip(BOLD, 20.0, &view.merchant_name, RIGHT - LEFT);
    d.text(BOLD, 20.0, LEFT, y, &name);
    y -= 26.0;
    d.text(REGULAR, 13.0, LEFT, y, &label("credit_note"));
    y -= 30.0;
    let mut facts = vec![
        (label("credit_note_number"), view.number.clone()),
        (label("issued"), view.issued.clone()),
        (label("credits_invoice"), view.invoice_number.clone()),
    ];
    facts.extend(view.reason.clone().map(|r| (label("reason"), r)));
    for (name, value) in &facts {
        d.text(REGULAR, 9.5, LEFT, y, name);
        let value = d.clip(BOLD, 9.5, value, RIGHT - LEFT - 110.0);
        d.text(BOLD, 9.5, LEFT + 110.0, y, &value);
        y -= 15.0;
    }
    y -= 16.0;
    let below_seller = party(&mut d, LEFT, y, &label("seller"), &view.seller);
    let below_customer = party(&mut d, LEFT + COLUMN, y, &label("bill_to"), &view.bill_to);
    y = below_seller.min(below_customer) - 24.0;
    d.rule(y + 8.0, 0.8);
    y -= 10.0;
    d.text(BOLD, 11.0, RIGHT - 220.0, y, &label("credited"));
    d.text_right(BOLD, 11.0, RIGHT, y, &view.amount);
    d.gray(0.4);
    d.text(REGULAR, 8.0, LEFT, 40.0, &label("powered_by"));
    d.finish(&format!("{} {}", label("credit_note"), view.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_pdf_with_the_credit_note_text() {
        let strings = crate::i18n::Strings::load().unwrap();
        let view = CreditNoteView {
            merchant_name: "Acme".into(),
            seller: vec!["Acme GmbH".into(), "Berlin".into()],
            number: "CN-2027-000001".into(),
            issued: "3 Dec 2027".into(),
            invoice_number: "INV-2027-000007".into(),
            reason: Some("never used".into()),
            amount: "EUR 10.00".into(),
            bill_to: vec!["Ada Lovelace".into()],
            pdf_url: String::new(),
        };
        let bytes = render(&view, strings.for_accept_language(None)).unwrap();
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        // The title is plain text in the document information; the page's text is glyph ids
        // (the HTTP tests read it back with `pdftotext`).
        assert!(text.contains("(Credit note CN-2027-000001)"), "{text}");
        assert!(text.contains("FontFile2"), "an embedded font subset");
    }
}
