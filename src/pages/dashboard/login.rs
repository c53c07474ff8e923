//! Logging in to the dashboard and out of it. The login checks the merchant's user name and
//! password as `POST /auth` does, under the same failed-login limiter
//! ([`crate::auth::login::check`]); too many failures give the 429 page. The login form's token
//! is keyed by a random value in a cookie of its own, so a form posted from elsewhere, or a
//! session planted by another site, is refused.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::context;
use serde::Deserialize;

use super::staff::{self, COOKIE, LOGIN_COOKIE};
use crate::auth::login::{self, Outcome};
use crate::http::client_address::ClientAddress;
use crate::ids;
use crate::pages::failure::PageError;
use crate::pages::form::{PageForm, TokenForm};
use crate::pages::render::{page, Framing};
use crate::pages::{csrf, notice, session};
use crate::state::AppState;
use crate::store::dashboard_sessions;

/// How long a login form may wait before it is posted (the login cookie's lifetime).
const LOGIN_FORM_SECONDS: u32 = 3600;

/// The login form as posted.
#[derive(Deserialize)]
pub struct LoginForm {
    /// The form's token.
    #[serde(rename = "csrfToken", default)]
    csrf_token: String,
    /// The merchant's user name.
    #[serde(rename = "userName", default)]
    user_name: String,
    /// The merchant's password (never shown again, stored or logged).
    #[serde(default)]
    password: String,
}

/// The form token of the login form shown with the login cookie `nonce`.
fn login_form_token(state: &AppState, nonce: &str) -> String {
    csrf::form_token(&state.keys, &login_session(nonce))
}

/// What the login form's token is bound to: the login cookie's value.
fn login_session(nonce: &str) -> String {
    format!("dashboard-login:{nonce}")
}

/// The login page with `status`, the user name given so far and the message of a failure.
fn login_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    nonce: &str,
    user_name: &str,
    error: Option<&String>,
) -> Result<Response, PageError> {
    page(
        state,
        status,
        "dashboard/login.html",
        context! {
            t => t,
            csrf_token => login_form_token(state, nonce),
            user_name => user_name,
            error => error,
        },
        None,
        Framing::Deny,
    )
}

/// `GET /dashboard/login`: the login form (the overview, when already logged in).
pub async fn form(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    if staff::open(&state, &headers).await?.is_some() {
        return Ok(Redirect::to("/dashboard/overview").into_response());
    }
    let t = session::strings(&state, &headers);
    let nonce = ids::prefixed("", 32);
    let mut response = login_page(&state, t, StatusCode::OK, &nonce, "", None)?;
    response.headers_mut().append(
        header::SET_COOKIE,
        staff::set_cookie(&state, LOGIN_COOKIE, &nonce, Some(LOGIN_FORM_SECONDS))?,
    );
    Ok(response)
}

/// `POST /dashboard/login`: opens a session and goes to the customers; a wrong user name or
/// password shows the form again (401), too many failures the 429 page.
pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    ClientAddress(client): ClientAddress,
    PageForm(form): PageForm<LoginForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let nonce = staff::cookie(&headers, LOGIN_COOKIE).unwrap_or_default();
    if nonce.is_empty()
        || !csrf::verify(
            &state.keys,
            &login_session(nonce),
            &form.csrf_token,
            &headers,
            &state.public_url,
        )
    {
        return notice::forbidden(&state, t);
    }
    if form.user_name.is_empty() || form.password.is_empty() {
        let error = t.get("dash_login_missing");
        return login_page(
            &state,
            t,
            StatusCode::BAD_REQUEST,
            nonce,
            &form.user_name,
            error,
        );
    }
    let now = state.clock.now();
    let outcome = login::check(
        &state.login_limiter,
        &state.store,
        &form.user_name,
        form.password,
        client,
        now,
    )
    .await?;
    let merchant = match outcome {
        Outcome::Verified(merchant) => merchant,
        Outcome::Refused => {
            let error = t.get("dash_login_wrong");
            return login_page(
                &state,
                t,
                StatusCode::UNAUTHORIZED,
                nonce,
                &form.user_name,
                error,
            );
        }
        Outcome::Limited { retry_after } => {
            let mut response = notice::too_many_attempts(&state, t)?;
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            return Ok(response);
        }
    };
    let token = ids::prefixed("ds_", 40);
    dashboard_sessions::open(
        &state.store,
        merchant.id,
        &state.keys.lookup_digest(&token),
        now,
    )
    .await?;
    let mut response = Redirect::to("/dashboard/overview").into_response();
    let cookies = response.headers_mut();
    cookies.append(
        header::SET_COOKIE,
        staff::set_cookie(&state, COOKIE, &token, None)?,
    );
    cookies.append(
        header::SET_COOKIE,
        staff::set_cookie(&state, LOGIN_COOKIE, "", Some(0))?,
    );
    Ok(response)
}

/// `POST /dashboard/logout`: ends the session (its form token required) and removes the cookie.
pub async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(token) = staff::cookie(&headers, COOKIE) else {
        return Ok(Redirect::to("/dashboard/login").into_response());
    };
    if !staff::form_is_genuine(&state, token, &form.csrf_token, &headers) {
        return notice::forbidden(&state, t);
    }
    dashboard_sessions::close(&state.store, &state.keys.lookup_digest(token)).await?;
    let mut response = Redirect::to("/dashboard/login").into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        staff::set_cookie(&state, COOKIE, "", Some(0))?,
    );
    Ok(response)
}
