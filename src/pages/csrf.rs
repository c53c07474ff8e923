//! CSRF protection for the hosted pages' forms. Pages are reached through an unguessable session
//! token rather than a cookie, and every form also carries a token bound to that session (a keyed
//! digest), checked in constant time together with the browser's `Sec-Fetch-Site`/`Origin`, so a
//! form posted from another site is refused even if it learned the page's address.

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use axum::response::Response;
use recur_domain::signature::constant_time_eq;

use super::{expired, notice};
use crate::keys::ServerKeys;
use crate::pages::failure::PageError;
use crate::state::AppState;

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

/// What a hosted form was posted for, once the checks every form shares passed: `loaded` is the
/// page's session (`None`: the link is no longer valid, answered with the 410 page) and `posted`
/// must be the form token of `session_token`, sent from this site (the 403 page otherwise).
pub fn accept_post<T>(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    session_token: &str,
    posted: &str,
    loaded: Option<T>,
) -> Result<Result<T, Response>, PageError> {
    let Some(loaded) = loaded else {
        return expired::page_for(state, t).map(Err);
    };
    if !verify(
        &state.keys,
        session_token,
        posted,
        headers,
        &state.public_url,
    ) {
        return notice::forbidden(state, t).map(Err);
    }
    Ok(Ok(loaded))
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
