//! A membership's usage of its current period so far (`GET /membership/{key}/usage`, the
//! portal, the dashboard): each metered price's quantity and amount, read from the period's
//! totals, a meter without events at 0.

use chrono::{DateTime, Utc};
use recur_domain::money::Currency;
use recur_domain::usage::{MeteredTerm, PricedUsage};

use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::memberships::metered::{self, MeteredMembership};
use crate::store::usage::{self, PeriodKey};

/// One meter's usage so far.
#[derive(Debug, Clone)]
pub struct MeterUsage {
    /// The metered price and its meter.
    pub term: MeteredTerm,
    /// What the meter's aggregation comes to so far, and its price in minor units of the
    /// membership's currency.
    pub priced: PricedUsage,
}

/// A membership's current period and its usage so far.
#[derive(Debug, Clone)]
pub struct PeriodUsage {
    /// The period's start.
    pub period_start: DateTime<Utc>,
    /// The period's end.
    pub period_end: DateTime<Utc>,
    /// The membership's currency.
    pub currency: Currency,
    /// One entry per metered price, in the membership's order.
    pub meters: Vec<MeterUsage>,
}

/// The usage so far of the merchant's membership `key`'s current period; a conflict when it has
/// no period yet (not yet paid).
pub async fn current_usage(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<PeriodUsage, ServiceError> {
    let membership = metered::by_keys(state.store.pool(), merchant_id, &[key])
        .await?
        .pop()
        .ok_or(ServiceError::NotFound)?;
    usage_of(state, &membership).await
}

/// The usage so far of `membership`'s current period.
pub async fn usage_of(
    state: &AppState,
    membership: &MeteredMembership,
) -> Result<PeriodUsage, ServiceError> {
    let period = membership
        .period
        .ok_or_else(|| ServiceError::Conflict("the membership has no billing period yet".into()))?;
    let currency = Currency::parse(&membership.currency)
        .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e.to_string())))?;
    let meters = priced_usage(
        state,
        membership.id,
        &membership.metered,
        period.start,
        currency,
    )
    .await?;
    Ok(PeriodUsage {
        period_start: period.start,
        period_end: period.end,
        currency,
        meters,
    })
}

/// Each of `metered`'s usage so far in the period of membership `membership_id` starting at
/// `start`, priced in `currency`, read from the period's totals (writing nothing).
pub async fn priced_usage(
    state: &AppState,
    membership_id: i64,
    metered: &[MeteredTerm],
    start: DateTime<Utc>,
    currency: Currency,
) -> Result<Vec<MeterUsage>, ServiceError> {
    let keys: Vec<PeriodKey> = metered
        .iter()
        .map(|t| PeriodKey::new(membership_id, t.meter_id, start))
        .collect();
    let stored = usage::totals(state.store.pool(), &keys).await?;
    let mut meters = Vec::with_capacity(keys.len());
    for (term, key) in metered.iter().zip(&keys) {
        let totals = stored
            .iter()
            .find(|s| s.key == *key)
            .map(|s| s.totals.clone())
            .unwrap_or_default();
        let priced = term
            .priced(&totals, currency)
            .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e)))?;
        meters.push(MeterUsage {
            term: term.clone(),
            priced,
        });
    }
    Ok(meters)
}
