//! How a hosted page fails: always as an HTML page in the visitor's language, never as a problem
//! document. A handler answers [`PageError`] (a service's refusal, a record that is not the
//! visitor's, a database failure); its response carries only the status and which notice to show
//! ([`Notice`]), and the pages' middleware ([`notice::render`](super::notice::render)) turns it
//! into the notice page with the request's strings. Refusals a page can explain beside a field
//! it renders itself (the form again, 400).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::services::ServiceError;

/// Why a page could not be shown or a form not be accepted.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The request asks for something the page cannot take (400).
    #[error("bad request")]
    BadRequest,
    /// A form posted without its token or from another site (403).
    #[error("form rejected")]
    Forbidden,
    /// A record that is not the visitor's, or none (404).
    #[error("not found")]
    NotFound,
    /// The record's state does not allow what the form asked (409).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The payment the action needed was declined; nothing changed (402).
    #[error("payment declined")]
    Declined,
    /// The payment processor did not answer; nothing changed (503).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything unexpected (500): logged with the request's trace id, never shown.
    #[error("internal error: {0}")]
    Internal(#[from] anyhow::Error),
}

impl From<sqlx::Error> for PageError {
    fn from(error: sqlx::Error) -> Self {
        PageError::Internal(error.into())
    }
}

impl From<ServiceError> for PageError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::Validation(_) => PageError::BadRequest,
            ServiceError::NotFound => PageError::NotFound,
            ServiceError::Forbidden(_) => PageError::Forbidden,
            ServiceError::Conflict(why) => PageError::Conflict(why),
            ServiceError::PaymentInProgress => PageError::Conflict(error.to_string()),
            ServiceError::FieldConflict(errors) => {
                PageError::Conflict(format!("{:?}", errors.into_map()))
            }
            ServiceError::PaymentDeclined { .. } | ServiceError::AuthenticationRequired(_) => {
                PageError::Declined
            }
            ServiceError::Unavailable(why) => PageError::Unavailable(why),
            ServiceError::Internal(e) => PageError::Internal(e),
        }
    }
}

/// Which notice a failed page shows, carried from the handler's response to the pages'
/// middleware ([`notice::render`](super::notice::render)).
#[derive(Debug, Clone, Copy)]
pub struct Notice {
    /// The string key of the notice's title.
    pub title: &'static str,
    /// The string key of the notice's text.
    pub text: &'static str,
}

impl PageError {
    fn status_and_notice(&self) -> (StatusCode, Notice) {
        let (status, title, text) = match self {
            PageError::BadRequest => (
                StatusCode::BAD_REQUEST,
                "bad_request_title",
                "bad_request_text",
            ),
            PageError::Forbidden => (
                StatusCode::FORBIDDEN,
                "form_rejected_title",
                "form_rejected_text",
            ),
            PageError::NotFound => (StatusCode::NOT_FOUND, "not_found_title", "not_found_text"),
            PageError::Conflict(_) => (StatusCode::CONFLICT, "conflict_title", "conflict_text"),
            PageError::Declined => (
                StatusCode::PAYMENT_REQUIRED,
                "declined_title",
                "declined_text",
            ),
            PageError::Unavailable(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable_title",
                "unavailable_text",
            ),
            PageError::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "error_title",
                "error_text",
            ),
        };
        (status, Notice { title, text })
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match &self {
            PageError::Internal(error) => {
                tracing::error!(error = format!("{error:#}"), "page failed");
            }
            PageError::Conflict(why) => tracing::info!(why, "page refused: conflict"),
            PageError::Unavailable(why) => {
                tracing::warn!(why, "page failed: processor unavailable")
            }
            _ => {}
        }
        let (status, notice) = self.status_and_notice();
        let mut response = (status, fallback_html(status)).into_response();
        response.extensions_mut().insert(notice);
        response
    }
}

/// The plain page a failure shows when even the notice cannot be rendered.
fn fallback_html(status: StatusCode) -> ([(header::HeaderName, HeaderValue); 1], String) {
    let reason = status.canonical_reason().unwrap_or("Error");
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{reason}</title></head>\
             <body><h1>{reason}</h1></body></html>"
        ),
    )
}
