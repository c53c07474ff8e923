//! Sandbox test clocks (DESIGN §7): an advance moves a merchant's frozen time and catches the
//! engine up, in time order, before it answers. The catch-up is crash-safe: the advance is
//! recorded as unfinished (owned by a stamp of its process's real time, see
//! [`crate::store::test_clocks`]) in the transaction that moves the clock, and if the process
//! dies mid-way the billing worker of any process resumes it once the stamp is older than the
//! recovery grace. Every action is claimed under its membership's lock and every charge has an
//! idempotency key, so two catch-ups of one clock never charge a period twice.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::engine::{abandoned_before, recovery_grace, run_next_due, RENEWAL_BATCH};
use super::scope::Scope;
use super::{charging, refunds, renewals, BillingError};
use crate::delivery::webhooks::Dispatcher;
use crate::platform::Platform;
use crate::store::{memberships, test_clocks};

/// Rounds of a catch-up that found due work it could not claim (locked by a concurrent request,
/// or a charge in flight) before it gives up with a conflict.
const MAX_BLOCKED_ROUNDS: u32 = 1_000;

/// Moves a sandbox merchant's test clock to `to` (already checked against
/// `recur_domain::schedule::test_clock_refusal`), catches the engine up and delivers the
/// webhook events that are due by then. Returns how many billing actions ran.
pub async fn advance(
    state: &Arc<Platform>,
    webhooks: &Arc<Dispatcher>,
    merchant_id: i64,
    to: DateTime<Utc>,
) -> Result<u64, BillingError> {
    let now = state.merchant_now(merchant_id).await?;
    if let Some(why) = recur_domain::schedule::test_clock_refusal(now, to) {
        return Err(BillingError::Conflict(format!("the new time {why}")));
    }
    let lease = Lease::new(state, merchant_id);
    let mut tx = state.store.begin().await?;
    test_clocks::advance(&mut tx, merchant_id, to, lease.stamp).await?;
    tx.commit().await?;
    catch_up(state, webhooks, lease, to).await
}

/// Resumes one catch-up whose process fell silent for longer than the recovery grace (killed
/// mid-advance); returns whether there was one. Run by the billing worker of every process.
pub async fn resume_stalled(
    state: &Arc<Platform>,
    webhooks: &Arc<Dispatcher>,
) -> Result<bool, BillingError> {
    let now = state.clock.now();
    let Some((merchant_id, to)) =
        test_clocks::claim_stalled(state.store.pool(), abandoned_before(state, now), now).await?
    else {
        return Ok(false);
    };
    let lease = Lease {
        merchant_id,
        stamp: now,
        owned: true,
    };
    let actions = catch_up(state, webhooks, lease, to).await?;
    tracing::info!(
        merchant_id,
        actions,
        "resumed an interrupted test-clock advance"
    );
    Ok(true)
}

/// Brings the merchant up to its clock's time `until` ([`lease_run`]) while delivering the
/// webhook events that fall due, then marks the catch-up done. The deliveries start with the
/// first renewals and end once the last renewal's events are delivered (or their endpoint failed
/// to answer), so an advance takes about the longer of the two, not their sum.
async fn catch_up(
    state: &Arc<Platform>,
    webhooks: &Arc<Dispatcher>,
    mut lease: Lease,
    until: DateTime<Utc>,
) -> Result<u64, BillingError> {
    let merchant_id = lease.merchant_id;
    let (written, finished) = watch::channel(false);
    let renewing = async {
        let actions = lease_run(state, &mut lease, until, &written).await;
        written.send_replace(true);
        actions
    };
    let delivering = webhooks.deliver_during(state, merchant_id, finished);
    let (actions, delivered) = tokio::join!(renewing, delivering);
    let actions = actions?;
    delivered?;
    lease.release(state).await?;
    Ok(actions)
}

/// Brings the merchant's memberships up to its clock's time `until`: completes interrupted
/// attempts, then performs every due action in time order, renewing the lease as it goes. The
/// renewals due at one time are renewed together in the engine's batches
/// ([`renewals::renew_due`]), each other action one by one. Due work that another request holds
/// (its row locked, or a charge of it in flight) is waited for, so the advance answers only once
/// everything due by `until` has run. Each committed step is told to `written`, whose
/// deliveries then claim what it wrote.
async fn lease_run(
    state: &Platform,
    lease: &mut Lease,
    until: DateTime<Utc>,
    written: &watch::Sender<bool>,
) -> Result<u64, BillingError> {
    let merchant_id = lease.merchant_id;
    let scope = Scope::TestClock(merchant_id);
    let mut actions = 0;
    for _ in 0..MAX_BLOCKED_ROUNDS {
        charging::recover_pending(state, Some(merchant_id), until, until).await?;
        refunds::recover_pending(state, Some(merchant_id), until, until).await?;
        super::sepa_collection::collect_due(state, Some(merchant_id), until).await?;
        crate::cashier::stripe::settle_abandoned(state, Some(merchant_id), until)
            .await
            .map_err(|e| BillingError::Internal(e.into()))?;
        loop {
            let Some(due) =
                memberships::earliest_due(state.store.pool(), merchant_id, until).await?
            else {
                return Ok(actions);
            };
            let renewed = renewals::renew_due(state, scope, due, RENEWAL_BATCH).await?;
            actions += u64::from(renewed);
            if renewed == 0 {
                // Not a renewal, or not claimable now: the earliest claimable action alone;
                // none claimable means the due work is held elsewhere, waited for below.
                if !run_next_due(state, scope, until).await? {
                    break;
                }
                actions += 1;
            }
            written.send_modify(|_| {});
            lease.keep(state).await?;
        }
        tokio::task::yield_now().await;
    }
    Err(BillingError::Conflict(
        "the sandbox is busy with concurrent requests; advance again to finish".into(),
    ))
}

/// A process's ownership of an unfinished catch-up.
struct Lease {
    merchant_id: i64,
    /// The real time written as the owner's stamp.
    stamp: DateTime<Utc>,
    /// Whether the stamp is still ours (another process may have taken over).
    owned: bool,
}

impl Lease {
    fn new(state: &Platform, merchant_id: i64) -> Self {
        Self {
            merchant_id,
            stamp: state.clock.now(),
            owned: true,
        }
    }

    /// Renews the stamp once half the grace has passed since it was written.
    async fn keep(&mut self, state: &Platform) -> Result<(), BillingError> {
        let now = state.clock.now();
        if !self.owned || now - self.stamp < recovery_grace(state) / 2 {
            return Ok(());
        }
        self.owned =
            test_clocks::renew(state.store.pool(), self.merchant_id, self.stamp, now).await?;
        self.stamp = now;
        Ok(())
    }

    /// Marks the catch-up finished, unless another process owns it now.
    async fn release(self, state: &Platform) -> Result<(), BillingError> {
        if self.owned {
            test_clocks::finish(state.store.pool(), self.merchant_id, self.stamp).await?;
        }
        Ok(())
    }
}
