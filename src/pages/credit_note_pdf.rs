//! A credit note as a one-page A4 PDF, laid out like the invoice ([`invoice_pdf`]'s text
//! primitives and fonts): seller, number, date, the invoice it credits, reason, customer and
//! the amount credited.

use std::collections::BTreeMap;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, TextStr};

use super::credit_note_view::CreditNoteView;
use super::invoice_pdf::{self, rule, text, text_right, BOLD, LEFT, REGULAR, RIGHT};
use crate::api::problem::ApiError;

/// The download of the PDF of `view`: `application/pdf`, an attachment named after its
/// number, never cached.
pub fn download(view: &CreditNoteView, t: &BTreeMap<String, String>) -> Result<Response, ApiError> {
    let disposition = format!("attachment; filename=\"credit-note-{}.pdf\"", view.number);
    let mut response = (StatusCode::OK, render(view, t)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/pdf"),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition).map_err(anyhow::Error::from)?,
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The PDF of `view`, labelled with the strings `t`.
pub fn render(view: &CreditNoteView, t: &BTreeMap<String, String>) -> Vec<u8> {
    let label = |key: &str| t.get(key).cloned().unwrap_or_default();
    let (catalog, pages, page, regular, bold, contents, info) = (
        Ref::new(1),
        Ref::new(2),
        Ref::new(3),
        Ref::new(4),
        Ref::new(5),
        Ref::new(6),
        Ref::new(7),
    );
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(pages);
    pdf.pages(pages).kids([page]).count(1);
    let mut p = pdf.page(page);
    let (width, height) = (invoice_pdf::PAGE_WIDTH, invoice_pdf::PAGE_HEIGHT);
    p.media_box(Rect::new(0.0, 0.0, width, height));
    p.parent(pages);
    p.contents(contents);
    p.resources()
        .fonts()
        .pair(REGULAR, regular)
        .pair(BOLD, bold);
    p.finish();
    for (id, name) in [(regular, "Helvetica"), (bold, "Helvetica-Bold")] {
        pdf.type1_font(id)
            .base_font(Name(name.as_bytes()))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
    }
    pdf.document_info(info)
        .title(TextStr(&format!(
            "{} {}",
            label("credit_note"),
            view.number
        )))
        .producer(TextStr("recur"));

    let mut c = Content::new();
    let mut y = height - 72.0;
    text(&mut c, BOLD, 20.0, LEFT, y, &view.merchant_name);
    y -= 26.0;
    text(&mut c, REGULAR, 13.0, LEFT, y, &label("credit_note"));
    y -= 30.0;
    let mut facts = vec![
        (label("credit_note_number"), view.number.clone()),
        (label("issued"), view.issued.clone()),
        (label("credits_invoice"), view.invoice_number.clone()),
    ];
    facts.extend(view.reason.clone().map(|r| (label("reason"), r)));
    for (name, value) in &facts {
        text(&mut c, REGULAR, 9.5, LEFT, y, name);
        text(&mut c, BOLD, 9.5, LEFT + 110.0, y, value);
        y -= 15.0;
    }
    y -= 16.0;
    text(&mut c, BOLD, 9.5, LEFT, y, &label("bill_to"));
    y -= 15.0;
    for line in &view.bill_to {
        text(&mut c, REGULAR, 9.5, LEFT, y, line);
        y -= 14.0;
    }
    y -= 24.0;
    rule(&mut c, y + 8.0, 0.8);
    y -= 10.0;
    text(&mut c, BOLD, 11.0, RIGHT - 220.0, y, &label("credited"));
    text_right(&mut c, BOLD, 11.0, RIGHT, y, &view.amount);
    c.set_fill_gray(0.4);
    text(&mut c, REGULAR, 8.0, LEFT, 40.0, &label("powered_by"));
    pdf.stream(contents, &c.finish());
    pdf.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_pdf_with_the_credit_note_text() {
        let strings = crate::i18n::Strings::load().unwrap();
        let view = CreditNoteView {
            merchant_name: "Acme".into(),
            number: "CN-2027-000001".into(),
            issued: "3 Dec 2027".into(),
            invoice_number: "INV-2027-000007".into(),
            reason: Some("never used".into()),
            amount: "EUR 10.00".into(),
            bill_to: vec!["Ada Lovelace".into()],
            pdf_url: String::new(),
        };
        let bytes = render(&view, strings.for_accept_language(None));
        let text = String::from_utf8_lossy(&bytes);
        for shown in [
            "(CN-2027-000001)",
            "(INV-2027-000007)",
            "(never used)",
            "(Acme)",
        ] {
            assert!(text.contains(shown), "{shown} in {text}");
        }
        assert!(text.contains("(Credit note)"));
    }
}
