//! Recording finished attempts: each delivery's outcome and next attempt, each endpoint's
//! health (an endpoint failing for five days is disabled and its merchant told, DESIGN §12),
//! in one transaction per batch; then the log lines and metrics.

use std::collections::HashMap;
use std::sync::Arc;

use recur_domain::schedule::endpoint_gives_up;
use tokio::sync::mpsc;

use super::attempt::Attempt;
use super::target::Target;
use super::RECORD_QUEUE;
use crate::delivery::notices;
use crate::platform::Platform;
use crate::store::events::{self, EventStatus};
use crate::store::webhook_endpoints::{self, Health};
use crate::store::{endpoint_deliveries, merchant_settings, merchants, outbox, Tx};

/// Records attempts as the dispatcher hands them over, all those queued by then in one
/// transaction, until the dispatcher stops; returns the first failure, if any. An attempt whose
/// recording fails keeps its lease until it expires, and the delivery is then made again (at
/// least once, never lost).
pub(super) async fn recorder(
    state: Arc<Platform>,
    mut queue: mpsc::Receiver<Attempt>,
) -> Option<anyhow::Error> {
    let mut batch = Vec::new();
    let mut failed = None;
    while queue.recv_many(&mut batch, RECORD_QUEUE).await > 0 {
        if let Err(error) = record(&state, std::mem::take(&mut batch)).await {
            tracing::warn!(error = %format!("{error:#}"), "recording webhook attempts failed");
            failed.get_or_insert(error);
        }
    }
    failed
}

/// Records finished attempts in one transaction, then logs them.
pub(super) async fn record(state: &Platform, attempts: Vec<Attempt>) -> anyhow::Result<()> {
    let mut own = Vec::new();
    let mut to_endpoints = Vec::new();
    for (target, outcome) in &attempts {
        match target {
            Target::Own(event) => own.push((event, outcome)),
            Target::Endpoint(delivery) => to_endpoints.push((delivery, outcome)),
        }
    }
    let mut tx = state.store.begin().await?;
    events::record_attempts(&mut tx, &own).await?;
    endpoint_deliveries::record_attempts(&mut tx, &to_endpoints).await?;
    let health = health_of(to_endpoints.iter().map(|(d, o)| (d.endpoint_id, *o)));
    let disabled = webhook_endpoints::record_health(&mut tx, &health, endpoint_gives_up).await?;
    for endpoint in &disabled {
        tell_merchant(state, &mut tx, endpoint).await?;
    }
    tx.commit().await?;
    for endpoint in &disabled {
        tracing::warn!(
            merchant_id = endpoint.merchant_id,
            endpoint_id = %endpoint.endpoint_key,
            failing_since = %endpoint.failing_since,
            "webhook endpoint disabled: every attempt failed for five days"
        );
    }
    for (target, outcome) in &attempts {
        state.metrics.webhook_attempt(outcome.status);
        let action_id = target.action_id();
        let (status_code, error) = (outcome.status_code, outcome.error.as_deref());
        match outcome.status {
            EventStatus::Delivered => tracing::debug!(
                action_id,
                latency_ms = outcome.latency_ms,
                "webhook delivered"
            ),
            EventStatus::Pending => tracing::info!(
                action_id,
                status_code,
                error,
                "webhook attempt failed; will retry"
            ),
            EventStatus::Undeliverable => tracing::warn!(
                action_id,
                status_code,
                error,
                "webhook undeliverable after its last attempt"
            ),
        }
    }
    Ok(())
}

/// What a batch's attempts (endpoint id, outcome) say of each endpoint.
fn health_of<'a>(attempts: impl Iterator<Item = (i64, &'a events::Outcome)>) -> Vec<Health> {
    let mut health: HashMap<i64, Health> = HashMap::new();
    for (endpoint_id, outcome) in attempts {
        let entry = health.entry(endpoint_id).or_insert(Health {
            endpoint_id,
            succeeded: false,
            first_failure: None,
            last_failure: None,
        });
        if outcome.status == EventStatus::Delivered {
            entry.succeeded = true;
        } else {
            let at = outcome.started_at;
            entry.first_failure = Some(entry.first_failure.map_or(at, |t| t.min(at)));
            entry.last_failure = Some(entry.last_failure.map_or(at, |t| t.max(at)));
        }
    }
    let mut health: Vec<Health> = health.into_values().collect();
    health.sort_by_key(|h| h.endpoint_id);
    health
}

/// Queues the e-mail telling the merchant its endpoint was disabled, to its support address;
/// a merchant without one is not told by e-mail (the log and the endpoint's record say it).
async fn tell_merchant(
    state: &Platform,
    tx: &mut Tx,
    endpoint: &webhook_endpoints::Disabled,
) -> anyhow::Result<()> {
    let settings = merchant_settings::get(&mut **tx, endpoint.merchant_id).await?;
    let Some(to) = settings.support_email else {
        tracing::info!(
            merchant_id = endpoint.merchant_id,
            "no support e-mail set: the merchant is not told of its disabled endpoint by e-mail"
        );
        return Ok(());
    };
    let merchant = merchants::by_id(&state.store, endpoint.merchant_id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("endpoint without merchant"))?;
    let email = notices::endpoint_disabled(state, &merchant, endpoint, to)?;
    let now = state.clock.now();
    outbox::insert_emails(tx, &[email], endpoint.disabled_at, now).await?;
    Ok(())
}
