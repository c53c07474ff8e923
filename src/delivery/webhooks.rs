//! The webhook dispatcher: POSTs due events to their endpoints with both signatures, on the
//! schedule of DESIGN §5, concurrency-bounded and fair between endpoints.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, TimeDelta, Utc};
use recur_domain::schedule::webhook_next_attempt;
use recur_domain::signature::{standard_webhook_signature, webhook_signature};
use reqwest::redirect::Policy;
use tokio::task::JoinSet;

use super::guard::{literal_refusal, GuardedResolver};
use crate::app::AppState;
use crate::billing::merchant_now;
use crate::config::WebhookConfig;
use crate::store::events::{self, Event, EventStatus, Outcome, Scope};
use crate::store::merchants;

/// Deliveries to one endpoint (scheme, host and port) in flight at once, so one slow merchant
/// cannot take every slot.
const PER_ENDPOINT: usize = 4;

/// How often the background dispatcher looks for due events when idle.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// Delivers webhook events.
pub struct Dispatcher {
    client: reqwest::Client,
    allow_private: bool,
    concurrency: usize,
    lease: TimeDelta,
}

impl Dispatcher {
    /// A dispatcher with the HTTP client `config` describes: HTTPS only, no redirects, the
    /// per-attempt time-out, the SSRF guard unless private addresses are allowed, extra trusted
    /// roots, and the outbound source address.
    pub fn new(config: &WebhookConfig) -> anyhow::Result<Self> {
        let timeout = Duration::from_secs(config.timeout_seconds);
        let mut builder = reqwest::Client::builder()
            .https_only(true)
            .redirect(Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("recur-webhooks/", env!("CARGO_PKG_VERSION")));
        if !config.allow_private {
            builder = builder.dns_resolver(Arc::new(GuardedResolver));
        }
        if let Some(path) = &config.extra_roots {
            let pem = std::fs::read(path)
                .with_context(|| format!("reading RECUR_WEBHOOK_EXTRA_ROOTS {}", path.display()))?;
            for certificate in reqwest::Certificate::from_pem_bundle(&pem)
                .context("RECUR_WEBHOOK_EXTRA_ROOTS must hold PEM certificates")?
            {
                builder = builder.add_root_certificate(certificate);
            }
        }
        if let Some(address) = config.source_address {
            builder = builder.local_address(address);
        }
        let lease_seconds = i64::try_from(config.timeout_seconds).unwrap_or(i64::MAX / 4) * 2 + 5;
        Ok(Self {
            client: builder
                .build()
                .context("building the webhook HTTP client")?,
            allow_private: config.allow_private,
            concurrency: config.concurrency,
            lease: TimeDelta::seconds(lease_seconds),
        })
    }

    /// Leases up to `free` due events, skipping endpoints that already have
    /// [`PER_ENDPOINT`] deliveries in flight (`busy`).
    async fn claim(
        &self,
        state: &AppState,
        scope: Scope,
        free: usize,
        busy: &mut HashMap<String, usize>,
    ) -> anyhow::Result<Vec<(Event, DateTime<Utc>)>> {
        let real_now = state.clock.now();
        let now = match scope {
            Scope::RealTime => real_now,
            Scope::Merchant(id) => merchant_now(state, id).await?,
        };
        let limit = i64::try_from(free * PER_ENDPOINT).unwrap_or(i64::MAX);
        let mut claimed = Vec::new();
        for event in events::due(&state.store, scope, now, real_now, limit).await? {
            if claimed.len() == free {
                break;
            }
            let endpoint = endpoint_of(&event.webhook_url);
            if busy.get(&endpoint).copied().unwrap_or(0) >= PER_ENDPOINT {
                continue;
            }
            if events::lease(&state.store, event.id, real_now, real_now + self.lease).await? {
                *busy.entry(endpoint).or_default() += 1;
                claimed.push((event, now));
            }
        }
        Ok(claimed)
    }

    /// Delivers every event of a test-clock merchant that is due at its clock, before returning
    /// (the test clock's catch-up).
    pub async fn deliver_due_now(state: &AppState, merchant_id: i64) -> anyhow::Result<usize> {
        let dispatcher = &state.webhooks;
        let mut delivered = 0;
        loop {
            let mut busy = HashMap::new();
            let claimed = dispatcher
                .claim(
                    state,
                    Scope::Merchant(merchant_id),
                    dispatcher.concurrency,
                    &mut busy,
                )
                .await?;
            if claimed.is_empty() {
                return Ok(delivered);
            }
            let mut tasks = JoinSet::new();
            for (event, now) in claimed {
                let state = state.clone();
                tasks.spawn(async move { state.webhooks.attempt(&state, event, now).await });
            }
            while let Some(result) = tasks.join_next().await {
                result??;
                delivered += 1;
            }
        }
    }

    /// Runs the background dispatcher for merchants on real time, until the task is dropped.
    pub async fn run(state: AppState) {
        let mut tasks: JoinSet<(String, anyhow::Result<()>)> = JoinSet::new();
        let mut busy: HashMap<String, usize> = HashMap::new();
        loop {
            let free = state.webhooks.concurrency.saturating_sub(tasks.len());
            if free > 0 {
                match state
                    .webhooks
                    .claim(&state, Scope::RealTime, free, &mut busy)
                    .await
                {
                    Ok(claimed) => {
                        for (event, now) in claimed {
                            let state = state.clone();
                            let endpoint = endpoint_of(&event.webhook_url);
                            tasks.spawn(async move {
                                let result = state.webhooks.attempt(&state, event, now).await;
                                (endpoint, result)
                            });
                        }
                    }
                    Err(error) => {
                        tracing::warn!(error = %format!("{error:#}"), "claiming webhook events failed")
                    }
                }
            }
            tokio::select! {
                Some(finished) = tasks.join_next(), if !tasks.is_empty() => {
                    match finished {
                        Ok((endpoint, result)) => {
                            if let Some(count) = busy.get_mut(&endpoint) {
                                *count = count.saturating_sub(1);
                            }
                            if let Err(error) = result {
                                tracing::warn!(error = %format!("{error:#}"), "recording a webhook attempt failed");
                            }
                        }
                        Err(error) => tracing::warn!(%error, "a webhook delivery task failed"),
                    }
                }
                () = tokio::time::sleep(IDLE_POLL) => {}
            }
        }
    }

    /// One attempt to deliver a leased event, recorded with its outcome.
    async fn attempt(
        &self,
        state: &AppState,
        event: Event,
        now: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        let started = Instant::now();
        let answer = self.post(state, &event).await;
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
            error: error.clone(),
            status,
            next_attempt_at,
        };
        let mut tx = state.store.begin().await?;
        events::record_attempt(&mut tx, &event, &outcome).await?;
        tx.commit().await?;
        match status {
            EventStatus::Delivered => {
                tracing::debug!(action_id = %event.action_id, latency_ms, "webhook delivered")
            }
            EventStatus::Pending => tracing::info!(
                action_id = %event.action_id, status_code, error, "webhook attempt failed; will retry"
            ),
            EventStatus::Undeliverable => tracing::warn!(
                action_id = %event.action_id, status_code, error, "webhook undeliverable after its last attempt"
            ),
        }
        Ok(())
    }

    /// POSTs the signed payload; the endpoint's status code, or why there was none.
    async fn post(&self, state: &AppState, event: &Event) -> Result<u16, String> {
        let url = url::Url::parse(&event.webhook_url).map_err(|e| format!("invalid URL: {e}"))?;
        if url.scheme() != "https" {
            return Err("webhook URLs must use HTTPS".into());
        }
        if !self.allow_private {
            if let Some(why) = literal_refusal(&url) {
                return Err(why);
            }
        }
        let signed = sign(state, event)
            .await
            .map_err(|e| format!("signing failed: {e:#}"))?;
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

/// Adds the spec's `Signature` to the payload and computes both signatures.
async fn sign(state: &AppState, event: &Event) -> anyhow::Result<Signed> {
    let merchant = merchants::by_id(&state.store, event.merchant_id)
        .await?
        .context("event without merchant")?;
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

/// `scheme://host:port` of a URL: deliveries are bounded per endpoint.
fn endpoint_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| {
            format!(
                "{}://{}:{}",
                u.scheme(),
                u.host_str().unwrap_or_default(),
                u.port_or_known_default().unwrap_or(0)
            )
        })
        .unwrap_or_else(|_| url.to_string())
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
