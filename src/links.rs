//! Links handed to customers by e-mail: the pay-now link of a failed payment opens a checkout
//! session whose token is derived from the server key, so neither the outbox nor the database
//! holds it (only its keyed digest is stored with the session); the `pdfUrl` of invoices and
//! credit notes is signed the same way, with an expiry.

use crate::platform::Platform;

/// The URL of the e-mailed pay-now link of checkout session `session_key`.
pub fn pay_now_url(platform: &Platform, session_key: &str) -> String {
    format!(
        "{}/checkout/{}",
        platform.public_url,
        pay_now_token(platform, session_key)
    )
}

/// The token of a pay-now link: a keyed digest of its session key, which only the server key
/// can produce.
pub fn pay_now_token(platform: &Platform, session_key: &str) -> String {
    platform
        .keys
        .lookup_digest(&format!("pay-now-link:{session_key}"))
}

/// The URL of the pay-now link the "payment failed" e-mail of a membership carries, among its
/// open checkout `sessions` (`(session_key, token_digest)`, newest first): the newest whose
/// stored digest is that of the link's token. `None` when none of them is a pay-now link.
pub fn open_pay_now_url(platform: &Platform, sessions: &[(String, String)]) -> Option<String> {
    sessions
        .iter()
        .find(|(key, digest)| platform.keys.lookup_digest(&pay_now_token(platform, key)) == *digest)
        .map(|(key, _)| pay_now_url(platform, key))
}

/// How long the `pdfUrl` of an invoice or credit note works.
pub const DOCUMENT_LINK_LIFETIME: chrono::Duration = chrono::Duration::days(30);

/// A document a signed link opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// An invoice's PDF.
    Invoice,
    /// A credit note's PDF.
    CreditNote,
}

impl Document {
    /// The path segment of its link.
    pub fn segment(self) -> &'static str {
        match self {
            Document::Invoice => "invoices",
            Document::CreditNote => "credit-notes",
        }
    }
}

/// The signed link to the PDF of the merchant's document `key`, working without a token until
/// [`DOCUMENT_LINK_LIFETIME`] after `now` (the server's time): its signature is a keyed digest,
/// under the server key, of the merchant, the document and the expiry.
pub fn document_url(
    platform: &Platform,
    merchant_id: i64,
    document: Document,
    key: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let expires = (now + DOCUMENT_LINK_LIFETIME).timestamp();
    format!(
        "{}/documents/{}/{key}/pdf?merchant={merchant_id}&expires={expires}&signature={}",
        platform.public_url,
        document.segment(),
        document_signature(platform, merchant_id, document, key, expires)
    )
}

/// Whether `signature` signs this link and it has not expired at `now`.
pub fn document_link_valid(
    platform: &Platform,
    merchant_id: i64,
    document: Document,
    key: &str,
    expires: i64,
    signature: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    let expected = document_signature(platform, merchant_id, document, key, expires);
    now.timestamp() < expires
        && recur_domain::signature::constant_time_eq(expected.as_bytes(), signature.as_bytes())
}

fn document_signature(
    platform: &Platform,
    merchant_id: i64,
    document: Document,
    key: &str,
    expires: i64,
) -> String {
    platform.keys.lookup_digest(&format!(
        "document-link:{merchant_id}:{}:{key}:{expires}",
        document.segment()
    ))
}
