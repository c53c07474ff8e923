//! The API's failures ([`ApiError`]), each answered as the problem document of
//! [`crate::http::problem`].

use std::collections::BTreeMap;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use recur_domain::validation::FieldErrors;

pub use crate::http::problem::{problem_response, Problem};
use crate::services::ServiceError;

/// A failure a handler returns; rendered as a [`Problem`].
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// One or more fields failed validation (400).
    #[error("validation failed")]
    Validation(FieldErrors),
    /// The body is not JSON, or not the JSON shape expected (400).
    #[error("malformed request body: {0}")]
    MalformedBody(String),
    /// Missing or invalid credentials (401).
    #[error("authentication required")]
    Unauthorized,
    /// Wrong user name or password (401).
    #[error("invalid credentials")]
    InvalidCredentials,
    /// The operation is not available to this merchant (403).
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// Unknown resource, or one of another merchant (404).
    #[error("not found")]
    NotFound,
    /// The payment method was declined (402); `reason` is the processor's text.
    #[error("payment declined: {reason}")]
    PaymentDeclined {
        /// Machine-readable decline code.
        code: String,
        /// Human-readable reason.
        reason: String,
    },
    /// The resource's state does not allow the operation (409).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The request conflicts with a stored resource, named by the fields at fault (409).
    #[error("conflict with the stored resource")]
    FieldConflict(FieldErrors),
    /// Body over the size limit (413).
    #[error("payload too large")]
    PayloadTooLarge,
    /// Body not `application/json` (415).
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// An `Idempotency-Key` reused with a different request (422).
    #[error("idempotency key reused")]
    IdempotencyKeyReused,
    /// Too many attempts; retry after this many seconds (429).
    #[error("rate limited")]
    RateLimited {
        /// Seconds until a retry may succeed.
        retry_after: u64,
    },
    /// An outside system the request needs (Stripe) did not answer; nothing changed (503).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything unexpected (500). The cause is logged, never sent.
    #[error("internal error: {0}")]
    Internal(#[from] anyhow::Error),
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::Validation(errors) => ApiError::Validation(errors),
            ServiceError::NotFound => ApiError::NotFound,
            ServiceError::Forbidden(why) => ApiError::Forbidden(why),
            ServiceError::Conflict(why) => ApiError::Conflict(why),
            ServiceError::PaymentInProgress => ApiError::Conflict(error.to_string()),
            ServiceError::FieldConflict(errors) => ApiError::FieldConflict(errors),
            ServiceError::PaymentDeclined { code, reason } => {
                ApiError::PaymentDeclined { code, reason }
            }
            ServiceError::Unavailable(why) => ApiError::Unavailable(why),
            // Only a hosted page's payment waits for the customer; an API caller has none.
            ServiceError::AuthenticationRequired(_) => ApiError::PaymentDeclined {
                code: "authentication_required".into(),
                reason: "The card needs the customer to confirm the payment.".into(),
            },
            ServiceError::Internal(e) => ApiError::Internal(e),
        }
    }
}

impl From<FieldErrors> for ApiError {
    fn from(errors: FieldErrors) -> Self {
        ApiError::Validation(errors)
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        ApiError::Internal(error.into())
    }
}

impl ApiError {
    /// A 400 naming one failing field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let mut errors = FieldErrors::new();
        errors.add(field, message);
        ApiError::Validation(errors)
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) | ApiError::MalformedBody(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized | ApiError::InvalidCredentials => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::PaymentDeclined { .. } => StatusCode::PAYMENT_REQUIRED,
            ApiError::Conflict(_) | ApiError::FieldConflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let (kind, title, errors) = match self {
            ApiError::Validation(errors) => (
                "validation",
                "One or more validation errors occurred.".to_string(),
                errors.into_map(),
            ),
            ApiError::MalformedBody(detail) => {
                let mut errors = BTreeMap::new();
                errors.insert("$".to_string(), vec![detail]);
                (
                    "malformed-body",
                    "The request body is not valid JSON for this operation.".into(),
                    errors,
                )
            }
            ApiError::Unauthorized => (
                "unauthorized",
                "A valid bearer token is required.".into(),
                BTreeMap::new(),
            ),
            ApiError::InvalidCredentials => (
                "invalid-credentials",
                "The user name or password is wrong.".into(),
                BTreeMap::new(),
            ),
            ApiError::Forbidden(why) => ("forbidden", why.to_string(), BTreeMap::new()),
            ApiError::NotFound => (
                "not-found",
                "The resource does not exist.".into(),
                BTreeMap::new(),
            ),
            ApiError::PaymentDeclined { code, reason } => {
                let mut errors = BTreeMap::new();
                errors.insert("payment".to_string(), vec![format!("{reason} ({code})")]);
                (
                    "payment-declined",
                    "The payment was declined.".into(),
                    errors,
                )
            }
            ApiError::Conflict(why) => ("conflict", why, BTreeMap::new()),
            ApiError::FieldConflict(errors) => (
                "conflict",
                "The request conflicts with the current state of the resource.".into(),
                errors.into_map(),
            ),
            ApiError::PayloadTooLarge => (
                "payload-too-large",
                "The request body is too large.".into(),
                BTreeMap::new(),
            ),
            ApiError::UnsupportedMediaType => (
                "unsupported-media-type",
                "The request body must be application/json.".into(),
                BTreeMap::new(),
            ),
            ApiError::IdempotencyKeyReused => (
                "idempotency-key-reused",
                "This Idempotency-Key was used with a different request.".into(),
                BTreeMap::new(),
            ),
            ApiError::RateLimited { retry_after } => {
                let mut response = problem_response(
                    status,
                    "rate-limited",
                    "Too many attempts; retry later.".into(),
                    BTreeMap::new(),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                return response;
            }
            ApiError::Unavailable(why) => ("unavailable", why, BTreeMap::new()),
            ApiError::Internal(error) => {
                tracing::error!(error = format!("{error:#}"), "request failed");
                (
                    "internal",
                    "An unexpected error occurred.".into(),
                    BTreeMap::new(),
                )
            }
        };
        let mut response = problem_response(status, kind, title, errors);
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        response
    }
}
