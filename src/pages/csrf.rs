//! CSRF protection for the hosted pages' forms. Pages are reached through an unguessable session
//! token rather than a cookie, and every form also carries a token bound to that session (a keyed
//! digest), checked in constant time together with the browser's `Sec-Fetch-Site`/`Origin`, so a
//! form posted from another site is refused even if it learned the page's address.

use axum::http::HeaderMap;
use recur_domain::signature::constant_time_eq;

use crate::app::AppState;
use crate::keys::ServerKeys;

/// The form token of the page session `session_token`.
pub fn form_token(keys: &ServerKeys, session_token: &str) -> String {
    keys.lookup_digest(&format!("csrf:{session_token}"))
}

/// Whether a posted form is genuine: the right form token, and not sent cross-site.
pub fn verify(
    keys: &ServerKeys,
    session_token: &str,
    posted: &str,
    headers: &HeaderMap,
    public_url: &str,
) -> bool {
    let expected = form_token(keys, session_token);
    let token_ok = constant_time_eq(expected.as_bytes(), posted.as_bytes());
    let fetch_site_ok = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_none_or(|site| site == "same-origin" || site == "none");
    let origin_ok = headers
        .get("origin")
        .and_then(|v| v.to_str().ok())
        .is_none_or(|origin| origin == public_origin(public_url));
    token_ok && fetch_site_ok && origin_ok
}

/// [`verify`] with the server's keys and public URL: the check every page handler runs.
pub fn form_ok(state: &AppState, token: &str, posted: &str, headers: &HeaderMap) -> bool {
    verify(&state.keys, token, posted, headers, &state.public_url)
}

/// `scheme://host[:port]` of the public URL, as browsers write `Origin`.
fn public_origin(public_url: &str) -> String {
    url::Url::parse(public_url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn tokens_bind_to_the_session_and_refuse_cross_site_posts() {
        let keys = ServerKeys::from_master(&[5; 32]);
        let token = form_token(&keys, "hp-abc");
        let url = "https://pay.example.com";
        let mut headers = HeaderMap::new();
        assert!(verify(&keys, "hp-abc", &token, &headers, url));
        assert!(!verify(&keys, "hp-other", &token, &headers, url));
        assert!(!verify(&keys, "hp-abc", "forged", &headers, url));
        headers.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(!verify(&keys, "hp-abc", &token, &headers, url));
        headers.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        headers.insert("origin", HeaderValue::from_static("https://evil.example"));
        assert!(!verify(&keys, "hp-abc", &token, &headers, url));
        headers.insert("origin", HeaderValue::from_static("https://pay.example.co"));
        assert!(!verify(&keys, "hp-abc", &token, &headers, url));
        headers.insert(
            "origin",
            HeaderValue::from_static("https://pay.example.com"),
        );
        assert!(verify(&keys, "hp-abc", &token, &headers, url));
    }
}
