//! Webhook events (DESIGN §5): a membership's events with every delivery attempt, and sending an
//! event again, for the API (`GET /membership/{membershipKey}/events`, `GET /events`,
//! `POST /events/{actionId}/resend`) and the dashboard's membership page alike.

use super::ServiceError;
use crate::state::AppState;
use crate::store::events::{self, Attempt, Event};
use crate::store::memberships;

/// How many events a membership's listing returns, newest first.
pub const LISTED_EVENTS: i64 = 100;

/// The merchant's membership `membership_key`'s newest [`LISTED_EVENTS`] events, newest first,
/// each with its attempts (oldest first); not found when the merchant has no such membership.
pub async fn of_membership(
    state: &AppState,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Vec<(Event, Vec<Attempt>)>, ServiceError> {
    let m = memberships::get(state.store.pool(), merchant_id, membership_key)
        .await?
        .ok_or(ServiceError::NotFound)?;
    Ok(events::for_membership(&state.store, merchant_id, m.id, LISTED_EVENTS).await?)
}

/// `rows` (a page of events) each with its attempts, oldest first, read in one statement.
pub async fn with_attempts(
    state: &AppState,
    rows: Vec<Event>,
) -> Result<Vec<(Event, Vec<Attempt>)>, ServiceError> {
    let ids: Vec<i64> = rows.iter().map(|event| event.id).collect();
    let mut attempts = events::attempts_of(state.store.pool(), &ids).await?;
    Ok(rows
        .into_iter()
        .map(|event| {
            let made = attempts.remove(&event.id).unwrap_or_default();
            (event, made)
        })
        .collect())
}

/// Sends the merchant's event `action_id` again: a new round of up to 7 attempts starts now
/// (the merchant's time), whatever its status, to its own URL and to each registered endpoint
/// it went to that still exists. Same `ActionId`. The event as rescheduled, or not found.
pub async fn resend(
    state: &AppState,
    merchant_id: i64,
    action_id: &str,
) -> Result<Event, ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    events::resend_everywhere(&state.store, merchant_id, action_id, now)
        .await?
        .ok_or(ServiceError::NotFound)
}
