//! Pausing and resuming a membership (DESIGN §15): `POST /membership/{key}/pause` and
//! `…/resume`, and the engine's resume when `resumeAt` arrives. The rules are the domain's
//! ([`can_pause`], [`MembershipState::pause`](recur_domain::membership::MembershipState::pause)
//! and `resume`); a pause's credit for the unused paid time is a credit note naming the invoice
//! that billed the period (never a negative invoice, DESIGN §4), and a resume is a renewal
//! starting then.

use chrono::{DateTime, Utc};
use recur_domain::membership::{can_pause, PauseRequest};
use recur_domain::status::MembershipStatus;

use super::followups::{save, Followups};
use super::{charging, credit_notes, locked, recurring, taxation, BillingError};
use crate::platform::Platform;
use crate::store::charges::Charge;
use crate::store::invoices::Invoice;
use crate::store::memberships::{self, Membership};
use crate::store::Tx;

/// Pauses the membership `key` now, until `resume_at` (or until resumed). An Active one is
/// Paused, its unused paid time credited; a Paused one takes the new `resume_at`; any other
/// status is a conflict.
pub async fn pause(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    resume_at: Option<DateTime<Utc>>,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    if resume_at.is_some_and(|resume| resume <= at) {
        return Err(BillingError::Invalid {
            field: "resumeAt",
            message: "must be in the future".into(),
        });
    }
    let mut tx = state.store.begin().await?;
    let mut m = locked(&mut tx, state, merchant_id, key).await?;
    match can_pause(m.state.status).map_err(BillingError::Conflict)? {
        PauseRequest::NewResumeDate => {
            m.state.set_resume_at(resume_at);
            save(&mut tx, &mut m, at).await?;
            tx.commit().await?;
            return Ok(m);
        }
        PauseRequest::Pause => {}
    }
    let taxation = taxation::of(&mut *tx, &m).await?;
    // When the period the credit comes from started, before the pause ends it.
    let started = m.state.current_period.map(|p| p.start);
    let credit = m
        .state
        .pause(at, resume_at, &taxation)
        .map_err(|refused| BillingError::Conflict(refused.to_string()))?;
    let credits = match &credit {
        Some(credit) => {
            let owed = credit_notes::owed_back(&mut tx, &m, started, credit).await?;
            credit_notes::for_balance(&mut tx, owed, at).await?
        }
        None => Vec::new(),
    };
    save(&mut tx, &mut m, at).await?;
    Followups {
        credits,
        ..Followups::status_change(true)
    }
    .record_for(&mut tx, state, &m, None, at)
    .await?;
    tx.commit().await?;
    Ok(m)
}

/// Resumes the Paused membership `key` now: Active, and a new period starts, charged as a
/// renewal (credit first). A declined charge makes it PastDue, as a declined renewal does. Any
/// other status is a conflict.
pub async fn resume(
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = locked(&mut tx, state, merchant_id, key).await?;
    if m.state.status != MembershipStatus::Paused {
        return Err(BillingError::Conflict(format!(
            "a {} membership cannot be resumed; only a Paused one can",
            m.state.status
        )));
    }
    let (charge, followups, invoice) = resume_in(&mut tx, &mut m, at).await?;
    followups
        .record_for(&mut tx, state, &m, invoice.as_ref(), at)
        .await?;
    tx.commit().await?;
    if let Some(charge) = charge {
        charging::execute(state, &charge, at).await?;
    }
    memberships::get(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)
}

/// Resumes the Paused membership `m` at `at` in the caller's transaction and starts the
/// renewal of the period beginning then. Returns the attempt to run, if any, what follows (the
/// status change among it) and the renewal invoice.
pub(super) async fn resume_in(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Charge>, Followups, Option<Invoice>), BillingError> {
    if !m.state.resume(at) {
        return Err(BillingError::Conflict(format!(
            "a {} membership cannot be resumed",
            m.state.status
        )));
    }
    let (charge, followups, invoice) = recurring::start_renewal(tx, m, at).await?;
    Ok((
        charge,
        Followups::status_change(true).and(followups),
        invoice,
    ))
}
