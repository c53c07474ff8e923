//! One delivery attempt: the payload signed (the spec's `Signature` when the event has an
//! `OrderId`, Standard Webhooks always), POSTed to its URL, and the attempt's outcome with the
//! next attempt of the schedule (DESIGN §5, §12).

use std::time::Instant;

use recur_domain::schedule::webhook_next_attempt;
use recur_domain::signature::{standard_webhook_signature, webhook_signature};

use chrono::{DateTime, Utc};

use super::target::Target;
use super::{Delivery, Dispatcher};
use crate::delivery::guard::literal_refusal;
use crate::platform::Platform;
use crate::store::events::{EventStatus, Outcome};
use crate::store::merchants::Merchant;

/// A finished attempt and its outcome, to record.
pub(super) type Attempt = (Target, Outcome);

impl Dispatcher {
    /// One attempt to deliver a leased event, and its outcome (not yet recorded).
    pub(super) async fn attempt(&self, state: &Platform, delivery: Delivery) -> Attempt {
        let Delivery {
            target,
            test_clock,
            merchant,
            ..
        } = delivery;
        let now = test_clock.unwrap_or_else(|| state.clock.now());
        let started = Instant::now();
        let answer = self.post(state, &target, &merchant, now).await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let (status_code, error) = match answer {
            Ok(code) => (Some(code), None),
            Err(error) => (None, Some(error)),
        };
        let delivered = status_code.is_some_and(|code| (200..300).contains(&code));
        let round_attempt = u32::try_from(target.round_attempts() + 1).unwrap_or(u32::MAX);
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
        (target, outcome)
    }

    /// POSTs the signed payload at merchant time `now`; the endpoint's status code, or why
    /// there was none.
    async fn post(
        &self,
        state: &Platform,
        target: &Target,
        merchant: &Merchant,
        now: DateTime<Utc>,
    ) -> Result<u16, String> {
        let url = url::Url::parse(target.url()).map_err(|e| format!("invalid URL: {e}"))?;
        if url.scheme() != "https" {
            return Err("webhook URLs must use HTTPS".into());
        }
        if !self.allow_private {
            if let Some(why) = literal_refusal(&url) {
                return Err(why);
            }
        }
        let signed =
            sign(state, target, merchant, now).map_err(|e| format!("signing failed: {e:#}"))?;
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", target.action_id())
            .header("webhook-timestamp", signed.timestamp.to_string())
            .header("webhook-signature", &signed.standard_signature);
        if let Some(signature) = &signed.signature {
            request = request.header("x-signature", signature);
        }
        let response = request
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
    /// The spec's signature, when the event has an `OrderId` (a test event has none).
    signature: Option<String>,
    timestamp: i64,
    /// One or two space-separated `v1,` signatures.
    standard_signature: String,
}

/// Adds the spec's `Signature` (from the merchant secret) to the payload when the event has an
/// `OrderId`, and computes the Standard Webhooks signature with each key that signs the target
/// at merchant time `now`: the merchant's signing secret for an event's own URL; an endpoint's
/// secret, and its previous one while a rotation's overlap lasts.
fn sign(
    state: &Platform,
    target: &Target,
    merchant: &Merchant,
    now: DateTime<Utc>,
) -> anyhow::Result<Signed> {
    let mut payload: serde_json::Value = serde_json::from_str(target.payload())?;
    let signature = match target.order_id() {
        Some(order_id) => {
            let secret = state.keys.open(&merchant.secret_sealed)?;
            let signature = webhook_signature(&secret, order_id);
            payload["Signature"] = signature.clone().into();
            Some(signature)
        }
        None => None,
    };
    let body = payload.to_string();
    let timestamp = state.clock.now().timestamp();
    let sealed_keys: Vec<&str> = match target {
        Target::Own(_) => vec![&merchant.webhook_secret_sealed],
        Target::Endpoint(delivery) => {
            let mut keys = vec![delivery.secret_sealed.as_str()];
            if let Some((previous, until)) = &delivery.previous_secret {
                if now < *until {
                    keys.push(previous);
                }
            }
            keys
        }
    };
    let mut signatures = Vec::with_capacity(sealed_keys.len());
    for sealed in sealed_keys {
        let whsec = state.keys.open(sealed)?;
        signatures.push(standard_webhook_signature(
            &whsec,
            target.action_id(),
            timestamp,
            body.as_bytes(),
        )?);
    }
    Ok(Signed {
        body,
        signature,
        timestamp,
        standard_signature: signatures.join(" "),
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
