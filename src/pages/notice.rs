//! Short pages that explain a situation: a form that cannot be accepted, a page not found, a
//! page asked for with bad parameters, a login refused for too many failures; and the pages'
//! middleware that shows a failed page's notice ([`render`]).

use std::collections::BTreeMap;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use minijinja::context;

use super::failure::{Notice, PageError};
use super::render::{page, Framing};
use super::session;
use crate::state::AppState;

/// 403: a form posted without its token or from another site.
pub fn forbidden(state: &AppState, t: &BTreeMap<String, String>) -> Result<Response, PageError> {
    show(
        state,
        t,
        StatusCode::FORBIDDEN,
        "form_rejected_title",
        "form_rejected_text",
    )
}

/// 404 inside a valid session: an invoice or membership that is not the customer's.
pub fn not_found(state: &AppState, t: &BTreeMap<String, String>) -> Result<Response, PageError> {
    show(
        state,
        t,
        StatusCode::NOT_FOUND,
        "not_found_title",
        "not_found_text",
    )
}

/// 400: a page asked for with parameters it cannot take (a cursor recur did not give).
pub fn bad_request(state: &AppState, t: &BTreeMap<String, String>) -> Result<Response, PageError> {
    show(
        state,
        t,
        StatusCode::BAD_REQUEST,
        "bad_request_title",
        "bad_request_text",
    )
}

/// 429: too many failed logins; the caller adds `Retry-After`.
pub fn too_many_attempts(
    state: &AppState,
    t: &BTreeMap<String, String>,
) -> Result<Response, PageError> {
    show(
        state,
        t,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_attempts_title",
        "too_many_attempts_text",
    )
}

pub(super) fn show(
    state: &AppState,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    title: &str,
    text: &str,
) -> Result<Response, PageError> {
    page(
        state,
        status,
        "notice.html",
        context! { t => t, title => t.get(title), text => t.get(text) },
        None,
        Framing::Deny,
    )
}

/// Middleware of the pages: a [`PageError`]'s response becomes the notice page in the visitor's
/// language (`Accept-Language`), with the same status.
pub async fn render(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers().clone();
    let response = next.run(request).await;
    let Some(notice) = response.extensions().get::<Notice>().copied() else {
        return response;
    };
    let t = session::strings(&state, &headers);
    show(&state, t, response.status(), notice.title, notice.text).unwrap_or(response)
}
