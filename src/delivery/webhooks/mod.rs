//! The webhook dispatcher: POSTs due events to their own URLs and to the merchants' registered
//! endpoints ([`target`]), signed, on the schedule of DESIGN §5, concurrency-bounded and fair
//! between hosts. Here: the dispatcher's loop; claiming due deliveries is [`claim`], one
//! attempt [`attempt`], recording outcomes [`record`], the slots per host [`queue`].

mod attempt;
mod claim;
mod queue;
mod record;
mod target;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, TimeDelta, Utc};
use reqwest::redirect::Policy;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::guard::GuardedResolver;
use crate::config::WebhookConfig;
use crate::platform::Platform;
use crate::store::events::Scope;
use crate::store::merchants::Merchant;
use attempt::Attempt;
use queue::Queue;
use record::recorder;
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
    /// how many attempts it made (the test clock's catch-up): the background dispatcher's loop
    /// on the merchant's own queue, until a claim made with nothing held finds nothing and every
    /// attempt is recorded. An endpoint that fails to answer (refused, timed out, unreachable)
    /// gets its failed attempts on the retry schedule and nothing more in this catch-up; its
    /// other due events stay due, for the next advance.
    pub async fn deliver_due_now(
        self: &Arc<Self>,
        state: &Arc<Platform>,
        merchant_id: i64,
    ) -> anyhow::Result<usize> {
        let (_, finished) = watch::channel(true);
        self.deliver_during(state, merchant_id, finished).await
    }

    /// As [`Self::deliver_due_now`], while the catch-up is still writing events: each change of
    /// `finished` says that more may be due (its value: whether the catch-up has written its
    /// last), so that deliveries overlap the renewals. It returns once `finished` holds `true`
    /// (or its sender is gone) and nothing is left, as `deliver_due_now` does.
    pub async fn deliver_during(
        self: &Arc<Self>,
        state: &Arc<Platform>,
        merchant_id: i64,
        finished: watch::Receiver<bool>,
    ) -> anyhow::Result<usize> {
        self.clone()
            .pump(state.clone(), Scope::Merchant(merchant_id), finished)
            .await
    }

    /// Runs the background dispatcher for merchants on real time, until the task is dropped.
    pub async fn run(self: Arc<Self>, state: Arc<Platform>) {
        let (_, no_catch_up) = watch::channel(true);
        if let Err(error) = self.pump(state, Scope::RealTime, no_catch_up).await {
            tracing::error!(error = %format!("{error:#}"), "the webhook dispatcher stopped");
        }
    }

    /// Delivers the due events of `scope`: on real time for as long as the task runs, for a
    /// test-clock merchant until none is left.
    ///
    /// Claims run in a task of their own and lease up to [`HELD_PER_SLOT`] times the slots
    /// ([`HELD_PER_ENDPOINT`] per endpoint) ahead, so deliveries start from the leased queue as
    /// slots free while the next claim is under way. A leased event that found no slot within
    /// one time-out is let go, to be claimed again when its lease expires. Finished attempts go
    /// to a recorder task, so that recording overlaps claiming and delivering too. On real time
    /// a failed claim is logged and tried again; a test-clock catch-up fails with it, and waits
    /// for `catch_up_finished` (see [`Self::deliver_during`]) before it stops.
    async fn pump(
        self: Arc<Self>,
        state: Arc<Platform>,
        scope: Scope,
        mut catch_up_finished: watch::Receiver<bool>,
    ) -> anyhow::Result<usize> {
        let drain = matches!(scope, Scope::Merchant(_));
        let mut catch_up_done = *catch_up_finished.borrow_and_update();
        let (finished_tx, finished_rx) = mpsc::channel(RECORD_QUEUE);
        let recording = tokio::spawn(recorder(state.clone(), finished_rx));
        let concurrency = self.concurrency;
        let mut tasks: JoinSet<Attempt> = JoinSet::new();
        // The endpoint of each delivery task, so that even a failed task frees its slot.
        let mut endpoints: HashMap<tokio::task::Id, String> = HashMap::new();
        let mut claims: JoinSet<anyhow::Result<Claimed>> = JoinSet::new();
        let mut queue: Queue<Delivery> = Queue::default();
        // When to claim next: at once while deliveries finish, after a pause once a claim
        // found nothing.
        let mut claim_at = tokio::time::Instant::now();
        // Whether the last claim, made while nothing was held, found nothing.
        let mut drained = false;
        // How many times the catch-up said more may be due: a claim made before the last time
        // may have missed what it wrote, so finding nothing does not drain the queue.
        let mut written = 0_u64;
        // A catch-up's endpoints that failed to answer: nothing more is sent to them until the
        // next advance, so one that never answers costs one round of time-outs, not one per
        // event.
        let mut unanswering: HashSet<String> = HashSet::new();
        let mut attempts = 0;
        loop {
            if drain
                && drained
                && catch_up_done
                && tasks.is_empty()
                && claims.is_empty()
                && queue.held() == 0
            {
                break;
            }
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
            if claims.is_empty() && room > 0 && claim_at <= now && !(drain && drained) {
                let mut held = queue.held_by_endpoint();
                let nothing_held = held.is_empty();
                // An endpoint counted as full is not claimed for.
                for endpoint in &unanswering {
                    held.insert(endpoint.clone(), HELD_PER_ENDPOINT);
                }
                let (dispatcher, state) = (self.clone(), state.clone());
                claims.spawn(async move {
                    let deliveries = dispatcher
                        .claim(&state, scope, room, &held, HELD_PER_ENDPOINT)
                        .await?;
                    Ok(Claimed {
                        deliveries,
                        nothing_held,
                        written,
                    })
                });
            }
            let wake = if room > 0 && !(drain && drained) {
                claim_at
            } else {
                now + IDLE_POLL
            };
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
                        let endpoint = endpoints.remove(&id);
                        if let Some(endpoint) = &endpoint {
                            queue.finished(endpoint);
                        }
                        match result {
                            Ok((_, attempt)) => {
                                attempts += 1;
                                if let Some(endpoint) = endpoint.filter(|_| drain && attempt.1.status_code.is_none()) {
                                    let let_go = queue.forget(&endpoint);
                                    tracing::info!(
                                        %endpoint,
                                        let_go,
                                        "a webhook endpoint did not answer; the test clock's catch-up sends it nothing more until the next advance"
                                    );
                                    unanswering.insert(endpoint);
                                }
                                // Waits while the recorder is RECORD_QUEUE attempts behind.
                                if finished_tx.send(attempt).await.is_err() {
                                    tracing::warn!("the webhook recorder has stopped");
                                }
                            }
                            Err(error) => tracing::warn!(%error, "a webhook delivery task failed"),
                        }
                    }
                    claim_at = tokio::time::Instant::now();
                    drained = false;
                }
                Some(claimed) = claims.join_next(), if !claims.is_empty() => {
                    let claimed = match claimed {
                        Ok(Ok(claimed)) => claimed,
                        Ok(Err(error)) if drain => return Err(error),
                        Ok(Err(error)) => {
                            tracing::warn!(error = %format!("{error:#}"), "claiming webhook events failed");
                            Claimed::default()
                        }
                        Err(error) => {
                            tracing::warn!(%error, "a webhook claim task failed");
                            Claimed::default()
                        }
                    };
                    if claimed.deliveries.is_empty() {
                        claim_at = tokio::time::Instant::now() + IDLE_POLL;
                        drained = claimed.nothing_held && claimed.written == written;
                    }
                    for delivery in claimed.deliveries {
                        queue.lease(delivery.endpoint.clone(), delivery.start_by, delivery);
                    }
                }
                changed = catch_up_finished.changed(), if drain && !catch_up_done => {
                    catch_up_done = changed.is_err() || *catch_up_finished.borrow_and_update();
                    written += 1;
                    claim_at = tokio::time::Instant::now();
                    drained = false;
                }
                () = tokio::time::sleep_until(wake), if claims.is_empty() => {}
            }
        }
        drop(finished_tx);
        match recording.await.context("the webhook recorder failed")? {
            Some(error) => Err(error),
            None => Ok(attempts),
        }
    }
}

/// What one claim leased, and whether the dispatcher held nothing when it was made and the
/// catch-up has written nothing since (so that finding nothing means nothing is due).
#[derive(Default)]
struct Claimed {
    deliveries: Vec<Delivery>,
    nothing_held: bool,
    /// The catch-up's count of writes when it was made.
    written: u64,
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
