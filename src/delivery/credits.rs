//! Credit notes in customer e-mails (DESIGN §9): every credit note a change writes is listed in
//! the e-mail that change sends (a cancellation's), or gets an e-mail of its own
//! ([`EmailKind::CreditNote`](recur_domain::membership::EmailKind::CreditNote)). The outbox holds
//! a marker naming the credit note where its PDF link goes; the mailer signs the link as the
//! message goes out ([`with_links`]), so the outbox never holds a working link.

use chrono::{DateTime, Utc};
use recur_domain::money::{display_amount, Currency};
use serde_json::{json, Value};

use crate::links::{self, Document};
use crate::platform::Platform;
use crate::store::credit_notes::{CreditKind, CreditNote};

/// A credit note written by a change, with the number of the invoice it credits.
#[derive(Debug, Clone)]
pub struct Credited {
    /// The credit note.
    pub note: CreditNote,
    /// The number of the invoice it credits.
    pub invoice_number: String,
}

/// Opens the marker of a credit note's PDF link in a stored body; the key and `]]` follow.
const MARKER_OPEN: &str = "[[recur-credit-note:";
/// Closes the marker.
const MARKER_CLOSE: &str = "]]";

/// The marker standing for the PDF link of the credit note `key` in a stored body.
fn marker(key: &str) -> String {
    format!("{MARKER_OPEN}{key}{MARKER_CLOSE}")
}

/// The template entries of `credits`: number, amount credited, invoice number, reason and the
/// marker of the PDF link.
pub(super) fn listed(credits: &[Credited]) -> anyhow::Result<Vec<Value>> {
    credits
        .iter()
        .map(|c| {
            let currency = Currency::parse(&c.note.currency)?;
            Ok(json!({
                "number": c.note.number,
                "amount": display_amount(c.note.amount, currency, "en"),
                "invoice_number": c.invoice_number,
                "reason": c.note.reason,
                "pdf_url": marker(&c.note.credit_note_key),
            }))
        })
        .collect()
}

/// The subject, heading and message of the e-mail about `credited` alone.
pub(super) fn wording(credited: &Credited) -> anyhow::Result<(String, String, String)> {
    let currency = Currency::parse(&credited.note.currency)?;
    let amount = display_amount(credited.note.amount, currency, "en");
    Ok((
        format!(
            "Credit note {} for invoice {}",
            credited.note.number, credited.invoice_number
        ),
        format!("Credit note {}", credited.note.number),
        match credited.note.kind {
            CreditKind::Credit => format!(
                "We credited {amount} to invoice {} and added it to your credit balance, \
                 which pays your next charges first.",
                credited.invoice_number
            ),
            CreditKind::Refund | CreditKind::Void => format!(
                "We credited {amount} to invoice {}.",
                credited.invoice_number
            ),
        },
    ))
}

/// `body` (of an e-mail of `merchant_id`; `html` when it is the HTML part) with every credit-note
/// marker replaced by the credit note's signed PDF link, valid from `now` (the server's time).
pub fn with_links(
    state: &Platform,
    merchant_id: i64,
    body: &str,
    html: bool,
    now: DateTime<Utc>,
) -> String {
    replace_markers(body, |key| {
        let url = links::document_url(state, merchant_id, Document::CreditNote, key, now);
        if html {
            url.replace('&', "&amp;")
        } else {
            url
        }
    })
}

/// `body` with each well-formed marker replaced by `link(key)`; anything else is kept as is.
fn replace_markers(body: &str, link: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find(MARKER_OPEN) {
        let after = &rest[start + MARKER_OPEN.len()..];
        let Some(end) = after.find(MARKER_CLOSE) else {
            break;
        };
        let key = &after[..end];
        out.push_str(&rest[..start]);
        if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&link(key));
        } else {
            out.push_str(&rest[start..start + MARKER_OPEN.len() + end + MARKER_CLOSE.len()]);
        }
        rest = &after[end + MARKER_CLOSE.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_links_and_nothing_else_changes() {
        let link = |key: &str| format!("https://x/{key}?a=1&b=2");
        let body = format!("PDF: {}\nand {} end", marker("cn_abc1"), marker("cn_Z9"));
        assert_eq!(
            replace_markers(&body, link),
            "PDF: https://x/cn_abc1?a=1&b=2\nand https://x/cn_Z9?a=1&b=2 end"
        );
        for kept in [
            "no marker",
            "[[recur-credit-note:bad key]]",
            "[[recur-credit-note:]]",
            "open [[recur-credit-note:cn_1",
        ] {
            assert_eq!(replace_markers(kept, link), kept);
        }
    }
}
