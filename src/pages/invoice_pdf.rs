//! An invoice as a one-page A4 PDF, written with `pdf-writer` in the PDF base fonts (Helvetica),
//! which every reader has, so nothing is embedded and the file stays a few kilobytes.
//!
//! The base fonts speak WinAnsi (Windows-1252): Latin text, `€`, `£`, `¥` and typographic
//! dashes print as they are; characters outside it print as `?`. Amounts are right-aligned:
//! Helvetica's digits, separators and currency signs have fixed widths, so their widths are
//! exact.

use std::collections::BTreeMap;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use super::invoice_view::InvoiceView;
use crate::api::problem::ApiError;

pub(super) const PAGE_WIDTH: f32 = 595.0;
pub(super) const PAGE_HEIGHT: f32 = 842.0;
pub(super) const LEFT: f32 = 56.0;
pub(super) const RIGHT: f32 = PAGE_WIDTH - 56.0;
pub(super) const REGULAR: Name<'static> = Name(b"F1");
pub(super) const BOLD: Name<'static> = Name(b"F2");

/// The download of the PDF of `view` (the invoice `invoice_key`), labelled with the strings `t`:
/// `application/pdf`, an attachment named after the invoice, never cached.
pub fn download(
    view: &InvoiceView,
    t: &BTreeMap<String, String>,
    invoice_key: &str,
) -> Result<Response, ApiError> {
    let disposition = format!("attachment; filename=\"invoice-{invoice_key}.pdf\"");
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
pub fn render(view: &InvoiceView, t: &BTreeMap<String, String>) -> Vec<u8> {
    let label = |key: &str| t.get(key).cloned().unwrap_or_default();
    let catalog = Ref::new(1);
    let pages = Ref::new(2);
    let page = Ref::new(3);
    let regular = Ref::new(4);
    let bold = Ref::new(5);
    let contents = Ref::new(6);
    let info = Ref::new(7);

    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(pages);
    pdf.pages(pages).kids([page]).count(1);
    let mut p = pdf.page(page);
    p.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT));
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
        .title(TextStr(&format!("{} {}", label("invoice"), view.number)))
        .producer(TextStr("recur"));

    let mut c = Content::new();
    let mut y = PAGE_HEIGHT - 72.0;
    text(&mut c, BOLD, 20.0, LEFT, y, &view.merchant_name);
    y -= 26.0;
    text(&mut c, REGULAR, 13.0, LEFT, y, &label("invoice"));
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
    text(&mut c, BOLD, 9.5, LEFT, y, &label("description"));
    text_right(&mut c, BOLD, 9.5, RIGHT, y, &label("amount"));
    y -= 8.0;
    rule(&mut c, y, 0.8);
    y -= 16.0;
    for line in &view.lines {
        text(&mut c, REGULAR, 10.0, LEFT, y, &clip(&line.description, 70));
        text_right(&mut c, REGULAR, 10.0, RIGHT, y, &line.amount);
        y -= 18.0;
    }
    rule(&mut c, y + 8.0, 0.5);
    y -= 8.0;
    let mut totals = vec![(REGULAR, label("subtotal"), view.subtotal.clone())];
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
    for (font, name, value) in &totals {
        text(&mut c, *font, 10.0, RIGHT - 220.0, y, name);
        text_right(&mut c, *font, 10.0, RIGHT, y, value);
        y -= 17.0;
    }

    c.set_fill_gray(0.4);
    text(&mut c, REGULAR, 8.0, LEFT, 40.0, &label("powered_by"));
    pdf.stream(contents, &c.finish());
    pdf.finish()
}

pub(super) fn text(c: &mut Content, font: Name, size: f32, x: f32, y: f32, s: &str) {
    c.begin_text();
    c.set_font(font, size);
    c.next_line(x, y);
    c.show(Str(&win_ansi(s)));
    c.end_text();
}

pub(super) fn text_right(c: &mut Content, font: Name, size: f32, right: f32, y: f32, s: &str) {
    let width = helvetica_width(s) * size / 1000.0;
    text(c, font, size, right - width, y, s);
}

pub(super) fn rule(c: &mut Content, y: f32, width: f32) {
    c.set_line_width(width);
    c.set_stroke_gray(0.75);
    c.move_to(LEFT, y);
    c.line_to(RIGHT, y);
    c.stroke();
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Width in thousandths of an em. Exact for digits, separators, spaces, signs and the currency
/// signs amounts use (Helvetica's figures are all 556 units wide); other characters, which
/// amounts only contain in a few currency codes, count as 667 (Helvetica's capitals average).
fn helvetica_width(s: &str) -> f32 {
    s.chars()
        .map(|ch| match ch {
            '0'..='9' | '€' | '$' | '£' | '¥' => 556.0,
            '.' | ',' | ' ' | '\u{a0}' => 278.0,
            '-' => 333.0,
            '−' | '–' => 556.0,
            _ => 667.0,
        })
        .sum()
}

/// `s` in Windows-1252, the base fonts' encoding; characters it lacks become `?`.
fn win_ansi(s: &str) -> Vec<u8> {
    s.chars()
        .map(|ch| match ch {
            ' '..='~' => ch as u8,
            '\u{a0}'..='\u{ff}' => ch as u32 as u8,
            '€' => 0x80,
            '‚' => 0x82,
            '„' => 0x84,
            '…' => 0x85,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '•' => 0x95,
            '–' => 0x96,
            '—' => 0x97,
            _ => b'?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::invoice_view::LineView;

    fn view() -> InvoiceView {
        InvoiceView {
            merchant_name: "Zürich Café".into(),
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
            credit: None,
            total: "€49.90".into(),
            amount_paid: "€49.90".into(),
            amount_remaining: "€0.00".into(),
            currency: "EUR".into(),
        }
    }

    #[test]
    fn writes_a_pdf_with_the_invoice_text() {
        let strings = crate::i18n::Strings::load().unwrap();
        let bytes = render(&view(), strings.for_accept_language(None));
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("WinAnsiEncoding"));
        assert!(text.contains("(in_abc)"));
        // "Zürich Café" in Windows-1252 (ü = FC, é = E9) and "€49.90" with the euro sign as 80,
        // as the hex strings pdf-writer writes for text that is not plain ASCII.
        assert!(text.contains("<5AFC7269636820436166E9> Tj"), "{text}");
        assert!(text.contains("<8034392E3930> Tj"));
    }

    #[test]
    fn text_outside_windows_1252_degrades_to_question_marks() {
        assert_eq!(win_ansi("Łódź €5"), b"?\xf3d? \x805".to_vec());
        assert_eq!(helvetica_width("€1,234.50"), 556.0 * 7.0 + 278.0 * 2.0);
    }
}
