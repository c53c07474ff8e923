//! Background work inside `recur serve` (DESIGN §1): the billing engine, the webhook dispatcher,
//! the mailer and housekeeping, on real time. Several processes may run them against one
//! PostgreSQL: due work is claimed under row leases, so each item goes to one process.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::billing::engine;
use crate::delivery::mail::Mailer;
use crate::delivery::webhooks::Dispatcher;
use crate::store::idempotency;

/// How often the billing worker looks for due memberships.
const BILLING_INTERVAL: Duration = Duration::from_secs(1);

/// How often housekeeping looks for expired idempotency keys.
const HOUSEKEEPING_INTERVAL: Duration = Duration::from_secs(60);

/// The running background tasks.
pub struct Workers {
    tasks: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts every worker.
    pub fn start(state: &AppState) -> Self {
        Self {
            tasks: vec![
                tokio::spawn(run_billing(state.clone())),
                tokio::spawn(Dispatcher::run(state.clone())),
                tokio::spawn(Mailer::run(state.clone())),
                tokio::spawn(run_housekeeping(state.clone())),
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
/// a full batch.
async fn run_billing(state: AppState) {
    const BATCH: u32 = 500;
    repeat("billing pass", BILLING_INTERVAL, || {
        let state = state.clone();
        async move {
            engine::tick(&state, BATCH)
                .await
                .map(|actions| actions == BATCH)
        }
    })
    .await;
}

/// Housekeeping: every [`HOUSEKEEPING_INTERVAL`], deletes the idempotency keys past their
/// retention, in batches so that no statement holds the table for long.
async fn run_housekeeping(state: AppState) {
    const BATCH: u32 = 1000;
    repeat(
        "purging expired idempotency keys",
        HOUSEKEEPING_INTERVAL,
        || {
            let state = state.clone();
            async move {
                let expired_before = state.clock.now() - idempotency::RETENTION;
                idempotency::purge_expired(&state.store, expired_before, i64::from(BATCH))
                    .await
                    .map(|deleted| deleted == u64::from(BATCH))
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
