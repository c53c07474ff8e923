//! Background work inside `recur serve` (DESIGN §1): the billing engine, the webhook dispatcher,
//! the mailer and housekeeping, on real time. Several processes may run them against one
//! PostgreSQL: due work is claimed under row leases, so each item goes to one process.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::billing::{engine, test_clock};
use crate::cashier;
use crate::delivery::mail::Mailer;
use crate::delivery::webhooks::Dispatcher;
use crate::platform::Platform;
use crate::store::{dashboard_sessions, idempotency};

/// How often the billing worker looks for due memberships.
const BILLING_INTERVAL: Duration = Duration::from_secs(1);

/// How often housekeeping looks for expired idempotency keys and ended dashboard sessions.
const HOUSEKEEPING_INTERVAL: Duration = Duration::from_secs(60);

/// The running background tasks.
pub struct Workers {
    tasks: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts every worker on `platform`, delivering with `webhooks` and `mailer`.
    pub fn start(
        platform: &Arc<Platform>,
        webhooks: &Arc<Dispatcher>,
        mailer: &Arc<Mailer>,
    ) -> Self {
        Self {
            tasks: vec![
                tokio::spawn(run_billing(platform.clone(), webhooks.clone())),
                tokio::spawn(webhooks.clone().run(platform.clone())),
                tokio::spawn(mailer.clone().run(platform.clone())),
                tokio::spawn(run_housekeeping(platform.clone())),
            ],
        }
    }

    /// Stops every worker at once.
    pub fn abort(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The billing worker: a pass every [`BILLING_INTERVAL`], and at once again while a pass finds
/// a full batch. Each pass first resumes a test-clock catch-up whose process died mid-way (and
/// delivers what it made due).
async fn run_billing(platform: Arc<Platform>, webhooks: Arc<Dispatcher>) {
    const BATCH: u32 = 500;
    repeat("billing pass", BILLING_INTERVAL, || {
        let (platform, webhooks) = (platform.clone(), webhooks.clone());
        async move {
            test_clock::resume_stalled(&platform, &webhooks).await?;
            // Cashier payments left unauthenticated at Stripe: settled or cancelled. Its failure
            // (the database) is told and does not hold up the billing pass.
            if let Err(error) =
                cashier::stripe::settle_abandoned(&platform, None, platform.clock.now()).await
            {
                tracing::warn!(%error, "settling abandoned Stripe cashier payments failed");
            }
            engine::tick(&platform, BATCH)
                .await
                .map(|actions| actions == BATCH)
        }
    })
    .await;
}

/// Housekeeping: every [`HOUSEKEEPING_INTERVAL`], deletes the idempotency keys past their
/// retention and the dashboard sessions that have ended, in batches so that no statement holds
/// a table for long.
async fn run_housekeeping(state: Arc<Platform>) {
    const BATCH: i64 = 1000;
    repeat(
        "purging expired idempotency keys and ended dashboard sessions",
        HOUSEKEEPING_INTERVAL,
        || {
            let state = state.clone();
            async move {
                let now = state.clock.now();
                let keys =
                    idempotency::purge_expired(&state.store, now - idempotency::RETENTION, BATCH)
                        .await?;
                let sessions = dashboard_sessions::purge_ended(&state.store, now, BATCH).await?;
                Ok::<_, sqlx::Error>(keys == BATCH as u64 || sessions == BATCH as u64)
            }
        },
    )
    .await;
}

/// Runs `pass` until the task is dropped: at once again while it says there is more to do
/// (it filled its batch), otherwise after `interval`. A failed pass is logged under `what` and
/// tried again after `interval`.
async fn repeat<E: std::fmt::Display, F: Future<Output = Result<bool, E>>>(
    what: &'static str,
    interval: Duration,
    mut pass: impl FnMut() -> F,
) {
    loop {
        match pass().await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, "{what} failed; retrying"),
        }
        tokio::time::sleep(interval).await;
    }
}
