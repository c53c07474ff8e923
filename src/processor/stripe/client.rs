//! Stripe's HTTP API as recur calls it: form-encoded requests with the processor's secret key,
//! one pinned `Stripe-Version`, an `Idempotency-Key` on every request that creates something,
//! and Stripe's answers read into an outcome recur can act on ([`StripeError`]).
//!
//! The base URL is the operator's (`RECUR_STRIPE_API_BASE`, Stripe's own by default), so tests
//! and air-gapped setups can point it at an emulator; nothing a merchant sends chooses it.

use std::time::Duration;

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::config::StripeConfig;

/// The API version every call is made with, so an account's default version (set in Stripe's
/// dashboard) cannot change the shapes recur reads.
pub const STRIPE_VERSION: &str = "2024-06-20";

/// A form body: Stripe's nested parameters are spelled out (`metadata[invoiceKey]`).
pub type Form = Vec<(String, String)>;

/// The client of Stripe's API: one per process, shared by every Stripe processor (each call
/// carries its processor's key).
#[derive(Debug, Clone)]
pub struct StripeApi {
    http: reqwest::Client,
    base: String,
}

/// Why a Stripe call gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum StripeError {
    /// Stripe answered and refused: a card error (a decline), a bad request, a revoked key.
    /// The request had no effect, and asking again would be refused again.
    #[error("Stripe refused the request ({}, {}): {}", .0.status, .0.kind, .0.message)]
    Refused(Box<Refusal>),
    /// No answer recur can trust (time-out, connection lost, 5xx, 429): the request may or may
    /// not have taken effect, so it is asked again with the same idempotency key.
    #[error("Stripe gave no answer: {0}")]
    Unanswered(String),
}

/// Stripe's refusal of a request, as its error body tells it.
#[derive(Debug)]
pub struct Refusal {
    /// HTTP status (402 for card errors, 400, 401, 404, …).
    pub status: u16,
    /// Stripe's error `type` (`card_error`, `invalid_request_error`, …).
    pub kind: String,
    /// Stripe's error `code` (`card_declined`, `resource_missing`, …), when it gave one.
    pub code: Option<String>,
    /// For a card error, the issuer's `decline_code` (`insufficient_funds`, …), when given.
    pub decline_code: Option<String>,
    /// Stripe's message, meant for the customer on card errors.
    pub message: String,
    /// The PaymentIntent the error belongs to, when Stripe returned one (a declined
    /// confirmation returns its intent).
    pub payment_intent: Option<serde_json::Value>,
}

/// Stripe's error body: `{"error": {"type", "code", "decline_code", "message", "payment_intent"}}`.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
struct ErrorDetail {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    decline_code: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    payment_intent: Option<serde_json::Value>,
}

impl StripeApi {
    /// A client for `config`'s base URL, with its time-out for each call.
    pub fn new(config: &StripeConfig) -> anyhow::Result<Self> {
        let timeout = Duration::from_secs(config.timeout_seconds);
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("recur/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("building the Stripe HTTP client")?;
        Ok(Self {
            http,
            base: config.api_base.trim_end_matches('/').to_owned(),
        })
    }

    /// `GET {path}` with `query`.
    pub async fn get<T: DeserializeOwned>(
        &self,
        secret_key: &str,
        path: &str,
        query: &Form,
    ) -> Result<T, StripeError> {
        self.call(Method::GET, secret_key, path, query, None).await
    }

    /// `POST {path}` with `form`, under `idempotency_key` when it creates or changes something
    /// that must happen once.
    pub async fn post<T: DeserializeOwned>(
        &self,
        secret_key: &str,
        path: &str,
        form: &Form,
        idempotency_key: Option<&str>,
    ) -> Result<T, StripeError> {
        self.call(Method::POST, secret_key, path, form, idempotency_key)
            .await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        secret_key: &str,
        path: &str,
        params: &Form,
        idempotency_key: Option<&str>,
    ) -> Result<T, StripeError> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .http
            .request(method.clone(), &url)
            .bearer_auth(secret_key)
            .header("Stripe-Version", STRIPE_VERSION);
        request = if method == Method::GET {
            request.query(params)
        } else {
            request.form(params)
        };
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| StripeError::Unanswered(without_url(e).to_string()))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| StripeError::Unanswered(without_url(e).to_string()))?;
        read_answer(status, &body)
    }
}

/// What an answer of Stripe means: the object on 2xx; a refusal on 4xx but 429; no answer on
/// 429, 5xx, or a body that is not what Stripe documents.
fn read_answer<T: DeserializeOwned>(status: StatusCode, body: &[u8]) -> Result<T, StripeError> {
    if status.is_success() {
        return serde_json::from_slice(body).map_err(|e| {
            StripeError::Unanswered(format!("Stripe's answer could not be read: {e}"))
        });
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(StripeError::Unanswered(format!(
            "Stripe answered {}",
            status.as_u16()
        )));
    }
    let detail = serde_json::from_slice::<ErrorBody>(body)
        .map(|b| b.error)
        .map_err(|_| {
            StripeError::Unanswered(format!(
                "Stripe answered {} without an error body",
                status.as_u16()
            ))
        })?;
    Err(StripeError::Refused(Box::new(Refusal {
        status: status.as_u16(),
        kind: detail.kind.unwrap_or_else(|| "api_error".into()),
        code: detail.code,
        decline_code: detail.decline_code,
        message: detail
            .message
            .unwrap_or_else(|| "Stripe refused the request.".into()),
        payment_intent: detail.payment_intent,
    })))
}

/// A transport error without its URL (which holds nothing secret, but says nothing useful).
fn without_url(error: reqwest::Error) -> reqwest::Error {
    error.without_url()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Balance {
        object: String,
    }

    #[test]
    fn a_documented_card_error_keeps_its_decline_code() {
        let body = br#"{"error":{"type":"card_error","code":"card_declined",
            "decline_code":"insufficient_funds","message":"Your card has insufficient funds.",
            "payment_intent":{"id":"pi_1","status":"requires_payment_method"}}}"#;
        let error = read_answer::<Balance>(StatusCode::PAYMENT_REQUIRED, body).unwrap_err();
        let StripeError::Refused(refusal) = error else {
            panic!("a card error is a refusal");
        };
        assert_eq!(refusal.status, 402);
        assert_eq!(refusal.kind, "card_error");
        assert_eq!(refusal.code.as_deref(), Some("card_declined"));
        assert_eq!(refusal.decline_code.as_deref(), Some("insufficient_funds"));
        assert_eq!(refusal.message, "Your card has insufficient funds.");
        assert_eq!(refusal.payment_intent.unwrap()["id"], "pi_1");
    }

    #[test]
    fn an_emulators_error_without_codes_is_still_a_refusal() {
        let body = br#"{"error":{"message":"Unauthorized","type":"invalid_request_error"}}"#;
        let error = read_answer::<Balance>(StatusCode::UNAUTHORIZED, body).unwrap_err();
        assert!(
            matches!(&error, StripeError::Refused(r) if r.status == 401 && r.code.is_none()),
            "{error}"
        );
    }

    #[test]
    fn throttling_server_errors_and_garbage_are_no_answer() {
        for (status, body) in [
            (
                StatusCode::TOO_MANY_REQUESTS,
                &br#"{"error":{"type":"rate_limit_error"}}"#[..],
            ),
            (StatusCode::BAD_GATEWAY, &b"<html>bad gateway</html>"[..]),
            (StatusCode::BAD_REQUEST, &b"not json"[..]),
            (StatusCode::OK, &b"{\"truncated"[..]),
        ] {
            let answer = read_answer::<Balance>(status, body);
            assert!(
                matches!(answer, Err(StripeError::Unanswered(_))),
                "{status}: {answer:?}"
            );
        }
    }

    #[test]
    fn a_success_is_the_object() {
        let balance: Balance =
            read_answer(StatusCode::OK, br#"{"object":"balance","available":[]}"#).unwrap();
        assert_eq!(balance.object, "balance");
    }
}
