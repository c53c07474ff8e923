//! The webhook dispatcher: POSTs due events to their own URLs and to the merchants' registered
//! endpoints ([`target`]), signed, on the schedule of DESIGN §5, concurrency-bounded and fair
//! between hosts. Here: the dispatcher's loop; claiming due deliveries is [`claim`], one
//! attempt [`attempt`], recording outcomes [`record`], the slots per host [`queue`].

mod attempt;
mod claim;
mod queue;
mod record;
mod target;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, TimeDelta, Utc};
use reqwest::redirect::Policy;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::guard::GuardedResolver;
use crate::config::WebhookConfig;
use crate::platform::Platform;
use crate::store::events::Scope;
use crate::store::merchants::Merchant;
use attempt::Attempt;
use queue::Queue;
use record::{record, recorder};
use target::Target;

/// Deliveries to one endpoint (scheme, host and port) in flight at once, so one slow merchant
/// cannot take every slot.
const PER_ENDPOINT: usize = 4;

/// Deliveries per endpoint the background dispatcher holds: those in flight and, leased ahead,
/// seven times as many waiting for a slot there, so that a fast endpoint's slots are refilled
/// from the queue while a claim's round trips are under way, and each claim leases a batch
/// worth its round trips rather than the one or two events that finished meanwhile.
const HELD_PER_ENDPOINT: usize = 8 * PER_ENDPOINT;

/// Deliveries the background dispatcher holds per slot of its concurrency (in flight and
/// waiting, over all endpoints).
const HELD_PER_SLOT: usize = 8;

/// Finished attempts the recorder may fall behind by before the dispatcher waits for it.
const RECORD_QUEUE: usize = 256;

/// How often the background dispatcher looks for due events when idle.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// Delivers webhook events.
pub struct Dispatcher {
    client: reqwest::Client,
    allow_private: bool,
    concurrency: usize,
    lease: TimeDelta,
    /// How long a leased event may wait for a slot: one attempt's time-out.
    wait: TimeDelta,
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
        // An event may wait up to one time-out for a slot (one that has not started by then is
        // let go: `Queue::expire`), then take one for its attempt; the third leaves its
        // recording as much again.
        let timeout_seconds = i64::try_from(config.timeout_seconds).unwrap_or(i64::MAX / 4);
        let lease_seconds = timeout_seconds * 3 + 5;
        Ok(Self {
            client: builder
                .build()
                .context("building the webhook HTTP client")?,
            allow_private: config.allow_private,
            concurrency: config.concurrency,
            lease: TimeDelta::seconds(lease_seconds),
            wait: TimeDelta::seconds(timeout_seconds),
        })
    }

    /// Delivers every event of a test-clock merchant that is due at its clock, before returning
    /// (the test clock's catch-up).
    pub async fn deliver_due_now(
        self: &Arc<Self>,
        state: &Arc<Platform>,
        merchant_id: i64,
    ) -> anyhow::Result<usize> {
        let mut delivered = 0;
        loop {
            let claimed = self
                .claim(
                    state,
                    Scope::Merchant(merchant_id),
                    self.concurrency,
                    &HashMap::new(),
                    PER_ENDPOINT,
                )
                .await?;
            if claimed.is_empty() {
                return Ok(delivered);
            }
            let mut tasks = JoinSet::new();
            for delivery in claimed {
                let (dispatcher, state) = (self.clone(), state.clone());
                tasks.spawn(async move { dispatcher.attempt(&state, delivery).await });
            }
            let mut attempts = Vec::with_capacity(tasks.len());
            while let Some(attempt) = tasks.join_next().await {
                attempts.push(attempt?);
            }
            delivered += attempts.len();
            record(state, attempts).await?;
        }
    }

    /// Runs the background dispatcher for merchants on real time, until the task is dropped.
    ///
    /// Claims run in a task of their own and lease up to [`HELD_PER_SLOT`] times the slots
    /// ([`HELD_PER_ENDPOINT`] per endpoint) ahead, so deliveries start from the leased queue as
    /// slots free while the next claim is under way. A leased event that found no slot within
    /// one time-out is let go, to be claimed again when its lease expires. Finished attempts go
    /// to a recorder task, so that recording overlaps claiming and delivering too.
    pub async fn run(self: Arc<Self>, state: Arc<Platform>) {
        let (finished_tx, finished_rx) = mpsc::channel(RECORD_QUEUE);
        tokio::spawn(recorder(state.clone(), finished_rx));
        let concurrency = self.concurrency;
        let mut tasks: JoinSet<Attempt> = JoinSet::new();
        // The endpoint of each delivery task, so that even a failed task frees its slot.
        let mut endpoints: HashMap<tokio::task::Id, String> = HashMap::new();
        let mut claims: JoinSet<anyhow::Result<Vec<Delivery>>> = JoinSet::new();
        let mut queue: Queue<Delivery> = Queue::default();
        // When to claim next: at once while deliveries finish, after a pause once a claim
        // found nothing.
        let mut claim_at = tokio::time::Instant::now();
        loop {
            let expired = queue.expire(state.clock.now());
            if expired > 0 {
                tracing::warn!(
                    expired,
                    "leased webhook events found no free slot in time; they are delivered when their leases expire"
                );
            }
            for delivery in queue.start(concurrency.saturating_sub(tasks.len())) {
                let (dispatcher, state) = (self.clone(), state.clone());
                let endpoint = delivery.endpoint.clone();
                let task = tasks.spawn(async move { dispatcher.attempt(&state, delivery).await });
                endpoints.insert(task.id(), endpoint);
            }
            let room = (HELD_PER_SLOT * concurrency).saturating_sub(queue.held());
            let now = tokio::time::Instant::now();
            if claims.is_empty() && room > 0 && claim_at <= now {
                let held = queue.held_by_endpoint();
                let (dispatcher, state) = (self.clone(), state.clone());
                claims.spawn(async move {
                    dispatcher
                        .claim(&state, Scope::RealTime, room, &held, HELD_PER_ENDPOINT)
                        .await
                });
            }
            let wake = if room > 0 { claim_at } else { now + IDLE_POLL };
            tokio::select! {
                Some(first) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                    let mut finished = vec![first];
                    while let Some(more) = tasks.try_join_next_with_id() {
                        finished.push(more);
                    }
                    for result in finished {
                        let id = match &result {
                            Ok((id, _)) => *id,
                            Err(error) => error.id(),
                        };
                        if let Some(endpoint) = endpoints.remove(&id) {
                            queue.finished(&endpoint);
                        }
                        match result {
                            Ok((_, attempt)) => {
                                // Waits while the recorder is RECORD_QUEUE attempts behind.
                                if finished_tx.send(attempt).await.is_err() {
                                    tracing::warn!("the webhook recorder has stopped");
                                }
                            }
                            Err(error) => tracing::warn!(%error, "a webhook delivery task failed"),
                        }
                    }
                    claim_at = tokio::time::Instant::now();
                }
                Some(claimed) = claims.join_next(), if !claims.is_empty() => {
                    let claimed = match claimed {
                        Ok(Ok(claimed)) => claimed,
                        Ok(Err(error)) => {
                            tracing::warn!(error = %format!("{error:#}"), "claiming webhook events failed");
                            Vec::new()
                        }
                        Err(error) => {
                            tracing::warn!(%error, "a webhook claim task failed");
                            Vec::new()
                        }
                    };
                    if claimed.is_empty() {
                        claim_at = tokio::time::Instant::now() + IDLE_POLL;
                    }
                    for delivery in claimed {
                        queue.lease(delivery.endpoint.clone(), delivery.start_by, delivery);
                    }
                }
                () = tokio::time::sleep_until(wake), if claims.is_empty() => {}
            }
        }
    }
}

/// A leased delivery, ready to make.
struct Delivery {
    /// What is sent, and where.
    target: Target,
    /// [`endpoint_of`] its URL.
    endpoint: String,
    /// The merchant's test-clock time the attempt is made at; `None` for a merchant on real
    /// time, whose attempt is made at the time it starts (it may wait for a slot).
    test_clock: Option<DateTime<Utc>>,
    /// Its merchant, whose secrets sign it.
    merchant: Arc<Merchant>,
    /// The real time by which the background dispatcher must start it, so that its lease still
    /// covers the attempt and its recording.
    start_by: DateTime<Utc>,
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
