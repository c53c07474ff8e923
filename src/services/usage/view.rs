//! A membership's usage of its current period so far (`GET /membership/{key}/usage`, the
//! portal, the dashboard): each metered price's quantity and amount, read from the period's
//! totals, a meter without events at 0; and, for the pages' charts, each meter's quantity in its
//! last periods ([`usage_summary`]), read from the per-period totals too.

use chrono::{DateTime, Utc};
use recur_domain::money::Currency;
use recur_domain::usage::{MeteredTerm, PricedUsage};
use rust_decimal::Decimal;

use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::memberships::metered::{self, MeteredMembership};
use crate::store::memberships::Membership;
use crate::store::usage::{self, PeriodKey};
use crate::store::{from_micros, to_micros};

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

/// How many periods a meter's history holds, the current one included.
pub const HISTORY_PERIODS: u32 = 6;

/// A meter's quantity in one period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodQuantity {
    /// The period's start.
    pub period_start: DateTime<Utc>,
    /// What the meter's aggregation came to in it (so far, for the current period).
    pub quantity: Decimal,
    /// Whether it is the membership's current period.
    pub current: bool,
}

/// What the portal and the dashboard show of a membership's usage.
#[derive(Debug, Clone)]
pub struct UsageSummary {
    /// The current period's usage so far.
    pub current: PeriodUsage,
    /// Per meter, in the order of `current.meters`, its quantity in its last periods with
    /// stored usage, oldest first, ending with the current period (at 0 when it has none yet):
    /// at most [`HISTORY_PERIODS`].
    pub history: Vec<Vec<PeriodQuantity>>,
}

/// The usage summary of `membership` (as read for its merchant): `None` when it carries no
/// metered price or has no billing period yet (not yet paid).
pub async fn usage_summary(
    state: &AppState,
    membership: &Membership,
) -> Result<Option<UsageSummary>, ServiceError> {
    let Some(period) = membership.state.current_period else {
        return Ok(None);
    };
    if membership.metered.is_empty() {
        return Ok(None);
    }
    let currency = membership.currency();
    let meters = priced_usage(
        state,
        membership.id,
        &membership.metered,
        period.start,
        currency,
    )
    .await?;
    let history = usage_history(state, membership, period.start).await?;
    Ok(Some(UsageSummary {
        current: PeriodUsage {
            period_start: period.start,
            period_end: period.end,
            currency,
            meters,
        },
        history,
    }))
}

/// Per metered price of `membership`, its meter's quantity in the last [`HISTORY_PERIODS`]
/// periods up to the current one, which starts at `current`: one range read of the per-period
/// totals per meter, in one statement.
async fn usage_history(
    state: &AppState,
    membership: &Membership,
    current: DateTime<Utc>,
) -> Result<Vec<Vec<PeriodQuantity>>, ServiceError> {
    let meter_ids: Vec<i64> = membership.metered.iter().map(|t| t.meter_id).collect();
    let stored = usage::recent_totals(
        state.store.pool(),
        membership.merchant_id,
        membership.id,
        &meter_ids,
        current,
        HISTORY_PERIODS,
    )
    .await?;
    let current_start = to_micros(current);
    let history = membership
        .metered
        .iter()
        .map(|term| {
            let mut periods: Vec<PeriodQuantity> = stored
                .iter()
                .filter(|s| s.key.meter_id == term.meter_id)
                .map(|s| PeriodQuantity {
                    period_start: from_micros(s.key.period_start),
                    quantity: s.totals.quantity(term.aggregation).normalize(),
                    current: s.key.period_start == current_start,
                })
                .collect();
            periods.sort_by_key(|p| p.period_start);
            if !periods.last().is_some_and(|p| p.current) {
                periods.push(PeriodQuantity {
                    period_start: current,
                    quantity: Decimal::ZERO,
                    current: true,
                });
            }
            let cap = usize::try_from(HISTORY_PERIODS).unwrap_or(usize::MAX);
            let extra = periods.len().saturating_sub(cap);
            periods.drain(..extra);
            periods
        })
        .collect();
    Ok(history)
}
