//! Links handed to customers by e-mail: the pay-now link of a failed payment opens a checkout
//! session whose token is derived from the server key, so neither the outbox nor the database
//! holds it (only its keyed digest is stored with the session).

use crate::services::Services;

/// The URL of the e-mailed pay-now link of checkout session `session_key`.
pub fn pay_now_url(services: &Services, session_key: &str) -> String {
    format!(
        "{}/checkout/{}",
        services.public_url,
        pay_now_token(services, session_key)
    )
}

/// The token of a pay-now link: a keyed digest of its session key, which only the server key
/// can produce.
pub fn pay_now_token(services: &Services, session_key: &str) -> String {
    services
        .keys
        .lookup_digest(&format!("pay-now-link:{session_key}"))
}

/// The URL of the pay-now link the "payment failed" e-mail of a membership carries, among its
/// open checkout `sessions` (`(session_key, token_digest)`, newest first): the newest whose
/// stored digest is that of the link's token. `None` when none of them is a pay-now link.
pub fn open_pay_now_url(services: &Services, sessions: &[(String, String)]) -> Option<String> {
    sessions
        .iter()
        .find(|(key, digest)| services.keys.lookup_digest(&pay_now_token(services, key)) == *digest)
        .map(|(key, _)| pay_now_url(services, key))
}
