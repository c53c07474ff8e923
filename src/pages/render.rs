//! Rendering a page with the headers every hosted page carries: a strict Content-Security-Policy
//! (same-origin styles and scripts only, no inline code, images from recur and the merchant's
//! logo host, forms post only to recur), no caching, referrers only to recur itself (with
//! `no-referrer` browsers send `Origin: null` on the pages' own forms, which the CSRF check
//! refuses), no MIME sniffing, and framing denied unless the page is meant to be embedded.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use minijinja::{context, Value};

use super::brand::Brand;
use crate::pages::failure::PageError;
use crate::state::AppState;

/// Whether other sites may show the page in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Never framed (checkout, portal).
    Deny,
    /// Embeddable in a merchant's page (the cashier, with `cashier.js`).
    Embeddable,
}

/// The policy's start, up to the images' sources.
const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:";

/// The policy's end, without `frame-ancestors`.
const CSP_END: &str = "form-action 'self'; base-uri 'none'";

/// Renders `template` with `context` as a complete response. A merchant's page passes its
/// `brand`: the template gets it as `brand`, and the policy lets images load from the logo's
/// origin (that origin only).
pub fn page(
    state: &AppState,
    status: StatusCode,
    template: &str,
    context: Value,
    brand: Option<&Brand>,
    framing: Framing,
) -> Result<Response, PageError> {
    let context = match brand {
        Some(brand) => context! { brand => Value::from_serialize(brand), ..context },
        None => context,
    };
    let html = state
        .templates
        .get_template(template)
        .and_then(|t| t.render(context))
        .map_err(anyhow::Error::from)?;
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    let ancestors = match framing {
        Framing::Deny => "'none'",
        Framing::Embeddable => "*",
    };
    let logo = brand
        .and_then(Brand::image_origin)
        .map(|origin| format!(" {origin}"))
        .unwrap_or_default();
    let csp = format!("{CSP}{logo}; {CSP_END}; frame-ancestors {ancestors}");
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(&csp).map_err(anyhow::Error::from)?,
    );
    if framing == Framing::Deny {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Lets the page's forms end in a redirect to `target`'s origin (browsers apply `form-action`
/// to the redirects that follow a submission): the merchant's return link after a payment.
pub fn allow_form_redirect(mut response: Response, target: Option<&str>) -> Response {
    let origin = target
        .and_then(|t| url::Url::parse(t).ok())
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o.starts_with("https://") || o.starts_with("http://"));
    let Some(origin) = origin else {
        return response;
    };
    let headers = response.headers_mut();
    let current = headers
        .get(header::CONTENT_SECURITY_POLICY)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .replace(
            "form-action 'self'",
            &format!("form-action 'self' {origin}"),
        );
    if let Ok(value) = HeaderValue::from_str(&current) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// 303 to a merchant's URL (a return or redirect link), or `None` when the stored value cannot be
/// a `Location` header. Links are stored as the URL the validator checked, which always can; a
/// value stored otherwise (by an older version) must not turn a payment that was taken into an
/// error, so the caller falls back to its own confirmation page.
pub fn see_other(target: &str) -> Option<Response> {
    let location = HeaderValue::from_str(target).ok()?;
    Some((StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response())
}

/// `response` with another status (a form shown again with 400 or 402).
pub fn with_status(mut response: Response, status: StatusCode) -> Response {
    *response.status_mut() = status;
    response
}
