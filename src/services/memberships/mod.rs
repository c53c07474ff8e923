//! A membership's operations, for the API, the dashboard and the customer's portal alike:
//! create ([`create`]), cancel, pause and resume, drop the change scheduled for the next period. Each is one
//! transaction of the billing engine around the domain's rules
//! ([`recur_domain::membership`]); a refusal comes back as a [`ServiceError`].

pub mod create;
pub mod metered;
pub mod switch;
pub mod terms;
pub mod update;

pub use create::{create, ChargeInput, NewMembershipInput, OrderInput};
pub use terms::{CycleInput, PricingInput};
pub use update::{update, MembershipChange};

use recur_domain::membership as rules;
use recur_domain::validation::FieldErrors;

use super::ServiceError;
use crate::billing::update::cancel_scheduled;
use crate::billing::{lifecycle, pause};
use crate::http::input::Field;
use crate::state::AppState;
use crate::store::memberships::Membership;

/// Cancels the merchant's membership `key` now (DESIGN §3): open invoices without a failed
/// attempt are voided; a Canceled one answers as it is.
pub async fn cancel(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, ServiceError> {
    Ok(lifecycle::cancel(state, merchant_id, key).await?)
}

/// Pauses the membership `key` now until `resume_at` (`YYYY-MM-DDTHH:mm:ss`, UTC, after the
/// merchant's time; absent or null: until resumed). An Active one is Paused and its unused paid
/// time credited; a Paused one takes the new date; any other status is a conflict.
pub async fn pause(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    resume_at: Field<String>,
) -> Result<Membership, ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut errors = FieldErrors::new();
    let resume_at = resume_at
        .optional("resumeAt", &mut errors)
        .and_then(|v| errors.check("resumeAt", rules::resume_at(&v, now)));
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    Ok(pause::pause(state, merchant_id, key, resume_at).await?)
}

/// Resumes the Paused membership `key` now: a new period starts, charged as a renewal (a decline
/// leaves it PastDue, as a declined renewal does).
pub async fn resume(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, ServiceError> {
    Ok(pause::resume(state, merchant_id, key).await?)
}

/// Drops the change scheduled for the membership `key`'s next period, if any.
pub async fn drop_scheduled_change(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, ServiceError> {
    Ok(cancel_scheduled(state, merchant_id, key).await?)
}
