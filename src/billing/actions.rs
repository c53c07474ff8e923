//! The action due on a claimed membership (renew, retry, expire, complete, notify a trial's end,
//! resume, or wait), taken in
//! the claim's transaction: one path for the engine's one-by-one pass and its renewal batches.

use chrono::{DateTime, Utc};
use recur_domain::membership::DueAction;

use super::followups::{self, Followups};
use super::lifecycle;
use super::{pause, recurring, BillingError};
use crate::platform::Platform;
use crate::store::charges::Charge;
use crate::store::memberships::Membership;
use crate::store::Tx;

/// Takes the action due on a claimed membership at `at`, in the caller's transaction. Returns
/// the `Pending` attempt to run once it commits, if the action charges.
pub(super) async fn act(
    state: &Platform,
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Option<Charge>, BillingError> {
    let mut invoice = None;
    let (charge, followups) = match m.state.due_action(at) {
        DueAction::Expire => (None, lifecycle::expire(tx, m, at).await?),
        DueAction::Complete => {
            let (charge, followups, final_invoice) = lifecycle::complete(tx, m, at).await?;
            invoice = final_invoice;
            (charge, followups)
        }
        DueAction::Renew => {
            let (charge, followups, renewal_invoice) = recurring::start_renewal(tx, m, at).await?;
            invoice = renewal_invoice;
            (charge, followups)
        }
        DueAction::Retry => {
            let (charge, followups, retried) = recurring::start_retry(tx, m, at).await?;
            invoice = retried;
            (charge, followups)
        }
        DueAction::NotifyTrialEnd => (None, lifecycle::notify_trial_end(tx, m, at).await?),
        DueAction::Resume => {
            let (charge, followups, renewal_invoice) = pause::resume_in(tx, m, at).await?;
            invoice = renewal_invoice;
            (charge, followups)
        }
        DueAction::Wait => {
            m.state.wait(at);
            followups::save(tx, m, at).await?;
            (None, Followups::default())
        }
    };
    followups
        .record_for(tx, state, m, invoice.as_ref(), at)
        .await?;
    Ok(charge)
}
