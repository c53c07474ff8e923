//! What a hosted page needs to collect a card with Stripe's card Element and to let the
//! customer authenticate a payment (DESIGN §17): the Stripe.js script, the context its form
//! reads (`data-` attributes for `/assets/stripe-card.js`; no inline script), the form posted
//! back, and the Content-Security-Policy widened for Stripe.js alone.

use axum::http::{header, HeaderValue};
use axum::response::Response;
use minijinja::{context, Value};
use serde::Deserialize;

use crate::processor::stripe::charges::Authentication;
use crate::services::stripe_cards::CardSetup;
use crate::state::AppState;

/// The form a card Element's page posts once Stripe.js has saved the card.
#[derive(Debug, Deserialize)]
pub struct SetupForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    pub csrf_token: String,
    /// The SetupIntent Stripe.js confirmed (`seti_…`); read from Stripe, not trusted.
    #[serde(rename = "setupIntent", default)]
    pub setup_intent: String,
}

/// The template context of a card Element posting to `action`.
pub fn card_element(state: &AppState, setup: &CardSetup, action: String) -> Value {
    context! {
        js_url => state.config.stripe.js_url,
        publishable_key => setup.publishable_key,
        client_secret => setup.client_secret.expose(),
        action => action,
    }
}

/// The template context of the step where the customer authenticates the `pending` payment,
/// posting to `action` afterwards.
pub fn authentication(state: &AppState, pending: &Authentication, action: String) -> Value {
    context! {
        js_url => state.config.stripe.js_url,
        publishable_key => pending.publishable_key,
        client_secret => pending.client_secret.expose(),
        action => action,
    }
}

/// `response` (a page with a card Element or an authentication step) with its policy widened
/// for Stripe.js: its origin may serve scripts and frames and be called; so may the API origin
/// Stripe.js calls, and for Stripe's own Stripe.js the frame origin of its 3-D Secure step.
pub fn allow_stripe(mut response: Response, state: &AppState) -> Response {
    let js = origin(&state.config.stripe.js_url);
    let api = origin(&state.config.stripe.api_base);
    let (Some(js), Some(api)) = (js, api) else {
        return response;
    };
    let mut connect = vec![js.clone()];
    if api != js {
        connect.push(api);
    }
    let mut frames = vec![js.clone()];
    if js == "https://js.stripe.com" {
        frames.push("https://hooks.stripe.com".into());
    }
    let headers = response.headers_mut();
    let current = headers
        .get(header::CONTENT_SECURITY_POLICY)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .replace("script-src 'self'", &format!("script-src 'self' {js}"));
    let widened = format!(
        "{current}; frame-src {}; connect-src {}",
        frames.join(" "),
        connect.join(" ")
    );
    if let Ok(value) = HeaderValue::from_str(&widened) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// The origin of `url` (`scheme://host[:port]`), `None` when it has none.
fn origin(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o.starts_with("https://") || o.starts_with("http://"))
}

#[cfg(test)]
mod tests {
    use super::origin;

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert_eq!(
            origin("https://js.stripe.com/v3/").as_deref(),
            Some("https://js.stripe.com")
        );
        assert_eq!(
            origin("http://127.0.0.1:8421/js.stripe.com/v3/").as_deref(),
            Some("http://127.0.0.1:8421")
        );
        assert_eq!(origin("not a url"), None);
    }
}
