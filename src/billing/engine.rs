//! The renewal engine: finds memberships whose next action is due and performs it (renew,
//! retry, expire, complete). It runs as a worker inside `recur serve` on real time, and
//! synchronously for a sandbox merchant whose test clock was advanced ([`super::test_clock`]).

use chrono::{DateTime, TimeDelta, Utc};

use super::scope::Scope;
use super::{actions, charging, refunds, renewals, BillingError};
use crate::platform::Platform;
use crate::store::memberships;

/// Performs the earliest action due at `until`; returns `false` when none is due or the one
/// claimed has a charge in flight after all.
pub async fn run_next_due(
    state: &Platform,
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
        Scope::TestClock(_) => m.state.next_action_at.unwrap_or(until),
    };
    let charge = match actions::act(state, &mut tx, &mut m, at).await {
        Ok(charge) => charge,
        // A request wrote a charge of this membership between the claim's snapshot and its
        // lock: nothing is written, and the action is claimed again once that charge is done.
        Err(BillingError::PaymentInProgress) => {
            tx.rollback().await?;
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    tx.commit().await?;
    if let Some(charge) = charge {
        match charging::execute(state, &charge, at).await {
            // Stripe did not answer: the attempt stays Pending for the recovery pass, and the
            // other due actions go on.
            Ok(_) | Err(BillingError::Unavailable(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(true)
}

/// How long work may stay unanswered before another pass or process takes it over: a `Pending`
/// attempt, or a test-clock catch-up whose process fell silent (`RECUR_BILLING_RECOVERY_SECONDS`).
pub(super) fn recovery_grace(state: &Platform) -> TimeDelta {
    i64::try_from(state.config.billing_recovery_seconds)
        .ok()
        .and_then(TimeDelta::try_seconds)
        .unwrap_or(TimeDelta::MAX)
}

/// At `now`, the time before which unanswered work counts as abandoned ([`recovery_grace`]).
pub(super) fn abandoned_before(state: &Platform, now: DateTime<Utc>) -> DateTime<Utc> {
    now.checked_sub_signed(recovery_grace(state))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// How many renewals one batch claims, invoices, charges and settles together.
pub const RENEWAL_BATCH: u32 = 250;

/// One pass of the background worker: attempts left `Pending` longer than
/// `RECUR_BILLING_RECOVERY_SECONDS` (a crash between the processor's answer and the commit
/// leaves them so) first, and SEPA debits whose collection date has come, then up to `batch`
/// due actions. Returns how many actions ran.
pub async fn tick(state: &Platform, batch: u32) -> Result<u32, BillingError> {
    let now = state.clock.now();
    charging::recover_pending(state, None, abandoned_before(state, now), now).await?;
    refunds::recover_pending(state, None, abandoned_before(state, now), now).await?;
    super::sepa_collection::collect_due(state, None, now).await?;
    // Renewals of Active memberships, the bulk of the work, go in batches; everything else
    // (dunning retries, expiries, completions) one by one.
    let mut actions = 0;
    while actions < batch {
        let renewed =
            renewals::renew_due(state, Scope::RealTime, state.clock.now(), RENEWAL_BATCH).await?;
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
