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
