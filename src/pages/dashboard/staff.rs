//! A dashboard session: a random token in an `HttpOnly`, `SameSite=Lax` cookie (`Secure` when
//! the public URL is HTTPS), of which the database keeps only a keyed digest
//! ([`crate::store::dashboard_sessions`]). Each request checks and renews it; after 30 minutes
//! without one it has ended. The token also keys the session's form token ([`csrf::form_token`]).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};

use crate::pages::brand::Brand;
use crate::pages::failure::PageError;
use crate::pages::{csrf, notice, session};
use crate::state::AppState;
use crate::store::dashboard_sessions;
use crate::store::merchants::{self, Merchant};

/// The session cookie.
pub const COOKIE: &str = "recur_dashboard";

/// The login form's cookie: a random value that keys the form's token, so a login form can
/// only be posted by the browser it was shown to.
pub const LOGIN_COOKIE: &str = "recur_dashboard_login";

/// Where the cookies are sent.
const COOKIE_PATH: &str = "/dashboard";

/// A logged-in staff member's request.
pub struct Staff {
    /// The session's token (from the cookie).
    pub token: String,
    /// Whose dashboard it is.
    pub merchant: Merchant,
    /// The merchant's name and look.
    pub brand: Brand,
    /// The merchant's current time (its test clock for a sandbox merchant that has one).
    pub now: DateTime<Utc>,
}

/// The request's session, renewed, or `None` when it has none that is still open.
pub async fn open(state: &AppState, headers: &HeaderMap) -> Result<Option<Staff>, PageError> {
    let Some(token) = cookie(headers, COOKIE) else {
        return Ok(None);
    };
    let digest = state.keys.lookup_digest(token);
    let Some(merchant_id) =
        dashboard_sessions::touch(&state.store, &digest, state.clock.now()).await?
    else {
        return Ok(None);
    };
    let merchant = merchants::by_id(&state.store, merchant_id)
        .await?
        .ok_or(PageError::NotFound)?;
    let brand = Brand::load(state, &merchant).await?;
    let now = state.merchant_now(merchant_id).await?;
    Ok(Some(Staff {
        token: token.to_string(),
        merchant,
        brand,
        now,
    }))
}

/// The request's session, or the redirect to the login page.
pub async fn require(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Result<Staff, Response>, PageError> {
    Ok(open(state, headers)
        .await?
        .ok_or_else(|| Redirect::to("/dashboard/login").into_response()))
}

/// A dashboard page's staff member: the request's open session, or (as the rejection) the
/// redirect to the login page, or the error reading it.
impl FromRequestParts<AppState> for Staff {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match require(state, &parts.headers).await {
            Ok(found) => found,
            Err(error) => Err(error.into_response()),
        }
    }
}

/// The value of the cookie `name` the request carries.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

/// A `Set-Cookie` value for the dashboard: `value` for the browser's session (`max_age`
/// `None`), or for `max_age` seconds (0 removes it).
pub fn set_cookie(
    state: &AppState,
    name: &str,
    value: &str,
    max_age: Option<u32>,
) -> Result<HeaderValue, PageError> {
    let secure = if state.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let max_age = max_age
        .map(|seconds| format!("; Max-Age={seconds}"))
        .unwrap_or_default();
    HeaderValue::from_str(&format!(
        "{name}={value}; Path={COOKIE_PATH}; HttpOnly; SameSite=Lax{secure}{max_age}"
    ))
    .map_err(|e| PageError::Internal(e.into()))
}

/// The session of a posted form that carries the session's form token and comes from this
/// site: the staff member, or the answer to give instead (the login redirect, the 403 page).
pub async fn posting(
    state: &AppState,
    headers: &HeaderMap,
    csrf_token: &str,
) -> Result<Result<Staff, Response>, PageError> {
    let staff = match require(state, headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(Err(redirect)),
    };
    if !form_is_genuine(state, &staff.token, csrf_token, headers) {
        return notice::forbidden(state, session::strings(state, headers)).map(Err);
    }
    Ok(Ok(staff))
}

/// Whether a form of the session `token` was posted with its form token, from this site.
pub fn form_is_genuine(state: &AppState, token: &str, posted: &str, headers: &HeaderMap) -> bool {
    csrf::verify(&state.keys, token, posted, headers, &state.public_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_found_by_name_among_several_headers() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; recur_dashboard=ds_x"),
        );
        headers.append(header::COOKIE, HeaderValue::from_static("b=2"));
        assert_eq!(cookie(&headers, COOKIE), Some("ds_x"));
        assert_eq!(cookie(&headers, "b"), Some("2"));
        assert_eq!(cookie(&headers, "recur"), None);
        headers.insert(header::COOKIE, HeaderValue::from_static("recur_dashboard="));
        assert_eq!(cookie(&headers, COOKIE), None);
    }
}
