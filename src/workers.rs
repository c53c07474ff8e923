//! Background work inside `recur serve` (DESIGN §1): the billing engine on real time. Several
//! processes may run it against one PostgreSQL; claims skip rows another process holds.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::billing::engine;

/// How often the billing worker looks for due memberships.
const BILLING_INTERVAL: Duration = Duration::from_secs(1);

/// The running background tasks.
pub struct Workers {
    billing: JoinHandle<()>,
}

impl Workers {
    /// Starts every worker.
    pub fn start(state: &AppState) -> Self {
        Self {
            billing: tokio::spawn(run_billing(state.clone())),
        }
    }

    /// Stops every worker at once.
    pub fn abort(&self) {
        self.billing.abort();
    }
}

/// The billing worker: a pass every [`BILLING_INTERVAL`], and at once again while a pass finds
/// a full batch.
async fn run_billing(state: AppState) {
    const BATCH: u32 = 500;
    loop {
        match engine::tick(&state, BATCH).await {
            Ok(actions) if actions == BATCH => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "billing pass failed; retrying"),
        }
        tokio::time::sleep(BILLING_INTERVAL).await;
    }
}
