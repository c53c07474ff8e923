//! One delivery attempt: the payload signed with both signatures, POSTed to its endpoint, and
//! the attempt's outcome with the next attempt of the schedule (DESIGN §5).

use std::time::Instant;

use recur_domain::schedule::webhook_next_attempt;
use recur_domain::signature::{standard_webhook_signature, webhook_signature};

use super::{Delivery, Dispatcher};
use crate::delivery::guard::literal_refusal;
use crate::services::Services;
use crate::store::events::{Event, EventStatus, Outcome};
use crate::store::merchants::Merchant;

/// A finished attempt and its outcome, to record.
pub(super) type Attempt = (Event, Outcome);

impl Dispatcher {
    /// One attempt to deliver a leased event, and its outcome (not yet recorded).
    pub(super) async fn attempt(&self, state: &Services, delivery: Delivery) -> Attempt {
        let Delivery {
            event,
            test_clock,
            merchant,
            ..
        } = delivery;
        let now = test_clock.unwrap_or_else(|| state.clock.now());
        let started = Instant::now();
        let answer = self.post(state, &event, &merchant).await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let (status_code, error) = match answer {
            Ok(code) => (Some(code), None),
            Err(error) => (None, Some(error)),
        };
        let delivered = status_code.is_some_and(|code| (200..300).contains(&code));
        let round_attempt = u32::try_from(event.round_attempts + 1).unwrap_or(u32::MAX);
        let next_attempt_at = (!delivered)
            .then(|| webhook_next_attempt(round_attempt, now))
            .flatten();
        let status = match (delivered, next_attempt_at) {
            (true, _) => EventStatus::Delivered,
            (false, Some(_)) => EventStatus::Pending,
            (false, None) => EventStatus::Undeliverable,
        };
        let outcome = Outcome {
            started_at: now,
            status_code,
            latency_ms,
            error,
            status,
            next_attempt_at,
        };
        (event, outcome)
    }

    /// POSTs the signed payload; the endpoint's status code, or why there was none.
    async fn post(
        &self,
        state: &Services,
        event: &Event,
        merchant: &Merchant,
    ) -> Result<u16, String> {
        let url = url::Url::parse(&event.webhook_url).map_err(|e| format!("invalid URL: {e}"))?;
        if url.scheme() != "https" {
            return Err("webhook URLs must use HTTPS".into());
        }
        if !self.allow_private {
            if let Some(why) = literal_refusal(&url) {
                return Err(why);
            }
        }
        let signed = sign(state, event, merchant).map_err(|e| format!("signing failed: {e:#}"))?;
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("x-signature", &signed.signature)
            .header("webhook-id", &event.action_id)
            .header("webhook-timestamp", signed.timestamp.to_string())
            .header("webhook-signature", &signed.standard_signature)
            .body(signed.body)
            .send()
            .await
            .map_err(|e| describe(&e))?;
        Ok(response.status().as_u16())
    }
}

/// A payload ready to send.
struct Signed {
    body: String,
    signature: String,
    timestamp: i64,
    standard_signature: String,
}

/// Adds the spec's `Signature` to the payload and computes both signatures with `merchant`'s
/// secrets.
fn sign(state: &Services, event: &Event, merchant: &Merchant) -> anyhow::Result<Signed> {
    let secret = state.keys.open(&merchant.secret_sealed)?;
    let whsec = state.keys.open(&merchant.webhook_secret_sealed)?;
    let signature = webhook_signature(&secret, &event.order_id);
    let mut payload: serde_json::Value = serde_json::from_str(&event.payload)?;
    payload["Signature"] = signature.clone().into();
    let body = payload.to_string();
    let timestamp = state.clock.now().timestamp();
    let standard_signature =
        standard_webhook_signature(&whsec, &event.action_id, timestamp, body.as_bytes())?;
    Ok(Signed {
        body,
        signature,
        timestamp,
        standard_signature,
    })
}

/// A delivery error with its causes (the resolver's SSRF refusal, TLS, time-out).
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".into();
    }
    let mut text = String::new();
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(cause) = source {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
