//! Billing usage in arrears (DESIGN §19): the usage lines of the period an invoice closes, one
//! per metered price, read from the period's totals, which the same statement marks billed
//! under their row locks. An event for that period then either was added before the lock (and
//! is on the invoice) or is refused after it: none is lost or billed twice.
//!
//! A renewal bills the period that just ended; a membership's end (cancel, completion) bills
//! its last period on a final invoice. A trial's usage is free: the renewal that ends a trial
//! bills no usage lines, and a trial that is canceled has no final invoice.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use recur_domain::calendar::Period;
use recur_domain::invoice::InvoiceLine;
use recur_domain::membership::DueAction;
use recur_domain::status::MembershipStatus;
use recur_domain::tax::Taxation;

use super::BillingError;
use crate::store::memberships::Membership;
use crate::store::usage::{self, PeriodKey};
use crate::store::Tx;

/// The usage lines of the current periods of those of `ms` that renew at `at`, by membership
/// id, their totals marked billed, in one statement. A membership without metered prices, in a
/// trial, or that completes instead of renewing has none (and its totals stay as they are).
pub async fn bill_periods(
    tx: &mut Tx,
    ms: &[&Membership],
    at: DateTime<Utc>,
) -> Result<HashMap<i64, Vec<InvoiceLine>>, BillingError> {
    let renewing: Vec<(&Membership, Period)> = ms
        .iter()
        .filter(|m| bills_usage(m, at))
        .filter_map(|m| Some((*m, m.state.current_period?)))
        .collect();
    bill(tx, &renewing).await
}

/// The usage lines of `m`'s current period, its totals marked billed, when it renews at `at`.
pub async fn bill_period(
    tx: &mut Tx,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<Vec<InvoiceLine>, BillingError> {
    Ok(bill_periods(tx, &[m], at)
        .await?
        .remove(&m.id)
        .unwrap_or_default())
}

/// The usage of `m`'s last period when it ends at `at` (asked before its status changes): the
/// period, cut at `at`, and its usage lines, its totals marked billed. `None` when the
/// membership bills no usage or had no period of paid service.
pub async fn bill_last_period(
    tx: &mut Tx,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<Option<(Period, Vec<InvoiceLine>)>, BillingError> {
    if m.metered.is_empty() {
        return Ok(None);
    }
    let Some(last) = m.state.final_usage_period(at) else {
        return Ok(None);
    };
    let lines = bill(tx, &[(m, last)])
        .await?
        .remove(&m.id)
        .unwrap_or_default();
    Ok(Some((last, lines)))
}

/// The usage lines of each membership's `period` (keyed by its start), by membership id, the
/// totals marked billed in one statement.
async fn bill(
    tx: &mut Tx,
    periods: &[(&Membership, Period)],
) -> Result<HashMap<i64, Vec<InvoiceLine>>, BillingError> {
    let mut keys: Vec<PeriodKey> = periods
        .iter()
        .flat_map(|(m, period)| {
            m.metered
                .iter()
                .map(|t| PeriodKey::new(m.id, t.meter_id, period.start))
        })
        .collect();
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    keys.sort();
    keys.dedup();
    let totals: HashMap<PeriodKey, _> = usage::lock_totals(tx, &keys, true)
        .await?
        .into_iter()
        .map(|t| (t.key, t.totals))
        .collect();
    let mut lines = HashMap::new();
    for (m, period) in periods {
        let mut of_m = Vec::with_capacity(m.metered.len());
        for term in &m.metered {
            let key = PeriodKey::new(m.id, term.meter_id, period.start);
            let totals = totals.get(&key).cloned().unwrap_or_default();
            let priced = term
                .priced(&totals, m.currency())
                .map_err(BillingError::Conflict)?;
            of_m.push(term.line(&priced));
        }
        lines.insert(m.id, of_m);
    }
    Ok(lines)
}

/// Whether the renewal of `m` at `at` bills its current period's usage: it has metered prices,
/// the period is not a trial, and a renewal (not its completion) is what is due.
fn bills_usage(m: &Membership, at: DateTime<Utc>) -> bool {
    !m.metered.is_empty()
        && m.state.status != MembershipStatus::Trialing
        && m.state.due_action(at) == DueAction::Renew
        && m.state.next_renewal("", &Taxation::none()).is_some()
}
