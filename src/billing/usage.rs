//! Billing usage in arrears (DESIGN §19): the usage lines of the period a membership's invoice
//! closes, one per metered price, read from the period's totals, which the same statement marks
//! billed under their row locks. An event for that period then either was added before the
//! lock (and is on the invoice) or is refused after it: none is lost or billed twice.
//!
//! A trial's usage is free: the renewal that ends a trial bills no usage lines.

use std::collections::HashMap;

use recur_domain::invoice::InvoiceLine;
use recur_domain::status::MembershipStatus;

use super::BillingError;
use crate::store::memberships::Membership;
use crate::store::usage::{self, PeriodKey};
use crate::store::Tx;

/// The usage lines of each of `ms`' current periods, by membership id, their totals marked
/// billed, in one statement. A membership without metered prices, without a period, or in a
/// trial has none.
pub async fn bill_periods(
    tx: &mut Tx,
    ms: &[&Membership],
) -> Result<HashMap<i64, Vec<InvoiceLine>>, BillingError> {
    let mut keys: Vec<PeriodKey> = Vec::new();
    for m in ms.iter().filter(|m| bills_usage(m)) {
        if let Some(period) = m.state.current_period {
            keys.extend(
                m.metered
                    .iter()
                    .map(|t| PeriodKey::new(m.id, t.meter_id, period.start)),
            );
        }
    }
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
    for m in ms.iter().filter(|m| bills_usage(m)) {
        let Some(period) = m.state.current_period else {
            continue;
        };
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

/// The usage lines of `m`'s current period, its totals marked billed.
pub async fn bill_period(tx: &mut Tx, m: &Membership) -> Result<Vec<InvoiceLine>, BillingError> {
    Ok(bill_periods(tx, &[m])
        .await?
        .remove(&m.id)
        .unwrap_or_default())
}

/// Whether `m`'s current period bills its usage: it has metered prices and is not a trial.
fn bills_usage(m: &Membership) -> bool {
    !m.metered.is_empty() && m.state.status != MembershipStatus::Trialing
}
