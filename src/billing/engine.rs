//! The renewal engine: finds memberships whose next action is due and performs it (renew,
//! retry, expire, complete). It runs as a worker inside `recur serve` on real time, and
//! synchronously for a sandbox merchant whose test clock was advanced.

use chrono::{DateTime, TimeDelta, Utc};
use recur_domain::status::MembershipStatus;

use super::lifecycle::{self, Followups};
use super::{charging, renewals, BillingError};
use crate::app::AppState;
use crate::delivery::webhooks::Dispatcher;
use crate::store::charges::Charge;
use crate::store::memberships::{self, Membership};
use crate::store::{test_clocks, Tx};

/// Which memberships a run looks at, and at what time the actions are taken.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Every merchant on real time: actions happen now.
    RealTime,
    /// One merchant's test clock: each action happens at the time it was due, so a jump of a
    /// year replays the year in order.
    TestClock(i64),
}

/// Performs the earliest action due at `until`; returns `false` when none is due.
pub async fn run_next_due(
    state: &AppState,
    scope: Scope,
    until: DateTime<Utc>,
) -> Result<bool, BillingError> {
    let merchant = match scope {
        Scope::RealTime => None,
        Scope::TestClock(merchant_id) => Some(merchant_id),
    };
    let mut tx = state.store.begin().await?;
    let Some(mut m) =
        memberships::claim_due(&mut tx, state.store.backend(), merchant, until).await?
    else {
        tx.rollback().await?;
        return Ok(false);
    };
    let at = match scope {
        Scope::RealTime => until,
        Scope::TestClock(_) => m.next_action_at.unwrap_or(until),
    };
    let charge = act(state, &mut tx, &mut m, at).await?;
    tx.commit().await?;
    if let Some(charge) = charge {
        charging::execute(state, &charge, at).await?;
    }
    Ok(true)
}

/// Takes the action due on a claimed membership at `at`, in the caller's transaction. Returns
/// the `Pending` attempt to run once it commits, if the action charges.
pub(super) async fn act(
    state: &AppState,
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Option<Charge>, BillingError> {
    let end_reached = m.end_date.is_some_and(|end| end <= at);
    let mut invoice = None;
    let (charge, followups) = match m.status {
        MembershipStatus::Incomplete => (None, lifecycle::expire(tx, m, at).await?),
        MembershipStatus::Active | MembershipStatus::PastDue | MembershipStatus::Unpaid
            if end_reached =>
        {
            (None, lifecycle::complete(tx, m, at).await?)
        }
        MembershipStatus::Active => {
            let (charge, followups, renewal_invoice) = lifecycle::start_renewal(tx, m, at).await?;
            invoice = renewal_invoice;
            (charge, followups)
        }
        MembershipStatus::PastDue => lifecycle::start_retry(tx, m, at).await?,
        _ => {
            // Unpaid waits for payment (or its end date); terminal statuses have nothing to do.
            m.next_action_at = if m.status == MembershipStatus::Unpaid {
                m.end_date.filter(|end| *end > at)
            } else {
                None
            };
            lifecycle::save(tx, m, at).await?;
            (None, Followups::default())
        }
    };
    followups
        .record_for(tx, state, m, invoice.as_ref(), at)
        .await?;
    Ok(charge)
}

/// Brings a sandbox merchant's memberships up to its test clock's time `until`: completes
/// interrupted attempts, then performs every due action in time order. Returns how many
/// actions ran.
pub async fn catch_up(
    state: &AppState,
    merchant_id: i64,
    until: DateTime<Utc>,
) -> Result<u64, BillingError> {
    charging::recover_pending(state, Some(merchant_id), until, until).await?;
    let mut actions = 0;
    while run_next_due(state, Scope::TestClock(merchant_id), until).await? {
        actions += 1;
    }
    Ok(actions)
}

/// How many renewals one batch claims, invoices, charges and settles together.
pub const RENEWAL_BATCH: u32 = 250;

/// One pass of the background worker: attempts left `Pending` longer than
/// `RECUR_BILLING_RECOVERY_SECONDS` (a crash between the processor's answer and the commit
/// leaves them so) first, then up to `batch` due actions. Returns how many actions ran.
pub async fn tick(state: &AppState, batch: u32) -> Result<u32, BillingError> {
    let now = state.clock.now();
    let grace = TimeDelta::seconds(
        i64::try_from(state.config.billing_recovery_seconds).unwrap_or(i64::MAX / 1_000_000),
    );
    charging::recover_pending(state, None, now - grace, now).await?;
    // Renewals of Active memberships, the bulk of the work, go in batches; everything else
    // (dunning retries, expiries, completions) one by one.
    let mut actions = 0;
    while actions < batch {
        let renewed = renewals::renew_due(state, state.clock.now(), RENEWAL_BATCH).await?;
        actions += renewed;
        if renewed < RENEWAL_BATCH {
            break;
        }
    }
    while actions < batch && run_next_due(state, Scope::RealTime, state.clock.now()).await? {
        actions += 1;
    }
    Ok(actions)
}

/// Moves a sandbox merchant's test clock to `to` (never backwards), catches the engine up and
/// delivers the webhook events that are due by then. Returns how many billing actions ran.
pub async fn advance_test_clock(
    state: &AppState,
    merchant_id: i64,
    to: DateTime<Utc>,
) -> Result<u64, BillingError> {
    let now = super::merchant_now(state, merchant_id).await?;
    if to < now {
        return Err(BillingError::Conflict(format!(
            "a test clock only moves forward; it shows {now}"
        )));
    }
    let mut tx = state.store.begin().await?;
    test_clocks::set(&mut tx, merchant_id, to).await?;
    tx.commit().await?;
    let actions = catch_up(state, merchant_id, to).await?;
    Dispatcher::deliver_due_now(state, merchant_id).await?;
    Ok(actions)
}
