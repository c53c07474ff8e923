//! Renewals in batches: the engine's bulk work. A batch claims up to N Active memberships whose
//! period ended, writes their invoices, `Pending` attempts and new periods with one statement
//! each and commits; then the processor is asked once for all of them and the answers are
//! recorded in one transaction ([`charging::execute_many`]). The rules are the per-membership
//! ones of [`super::lifecycle`]; only the writes are grouped. Memberships a batch cannot renew the
//! plain way (the cycle ended, credit pays the period, no card, a scheduled change to apply)
//! take the one-by-one path inside the same transaction.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::actions::act;
use super::scope::Scope;
use super::{attempts, followups, recurring, taxation, usage};
use super::{charging, numbering, BillingError};
use crate::platform::Platform;
use crate::store::charges::{self, ChargeKind, NewCharge};
use crate::store::invoices::{self, Invoice, NewInvoice};
use crate::store::memberships::{self, Membership};
use crate::store::payment_methods;

/// Renews up to `limit` Active memberships in `scope` whose period ended by `until`, at
/// `until`. Returns how many memberships it acted on (fewer than `limit`: none are left).
///
/// A test clock's catch-up passes the earliest time anything of the merchant is due as `until`:
/// the renewals due then are renewed together, at the time they were due.
pub async fn renew_due(
    state: &Platform,
    scope: Scope,
    until: DateTime<Utc>,
    limit: u32,
) -> Result<u32, BillingError> {
    let merchant = match scope {
        Scope::RealTime => None,
        Scope::TestClock(merchant_id) => Some(merchant_id),
    };
    let mut tx = state.store.begin().await?;
    let claimed = memberships::claim_due_renewals(
        &mut tx,
        state.store.backend(),
        merchant,
        until,
        i64::from(limit),
    )
    .await?;
    if claimed.is_empty() {
        tx.rollback().await?;
        return Ok(0);
    }
    let acted = u32::try_from(claimed.len()).unwrap_or(limit);
    let owners: Vec<(i64, i64)> = claimed
        .iter()
        .map(|m| (m.merchant_id, m.customer_id))
        .collect();
    let cards = payment_methods::current_many(&mut *tx, &owners).await?;
    let parties = taxation::parties_of(&mut *tx, &claimed).await?;
    let claimed_refs: Vec<&Membership> = claimed.iter().collect();
    let mut used = usage::bill_periods(&mut tx, &claimed_refs, until).await?;
    let mut attempts = Vec::new();
    let mut plain = Vec::new();
    for mut m in claimed {
        let lines = used.remove(&m.id).unwrap_or_default();
        let taxation = taxation::with_parties(&m, &parties);
        match (
            m.state
                .renewal_with_usage(&m.subscription_name, &taxation, lines),
            cards.get(&m.customer_id),
        ) {
            // A renewal that applies a scheduled change reports it: one by one.
            (Some((period, plan)), Some(card))
                if plan.amount_due > 0 && m.state.scheduled.is_none() =>
            {
                plain.push((m, card.id, period, plan));
            }
            _ => match act(state, &mut tx, &mut m, until).await {
                Ok(charge) => attempts.extend(charge),
                // As below: the batch is claimed again on the next pass.
                Err(BillingError::PaymentInProgress) => {
                    tx.rollback().await?;
                    return Ok(0);
                }
                Err(e) => return Err(e),
            },
        }
    }
    if !plain.is_empty() {
        let new_invoices: Vec<NewInvoice<'_>> = plain
            .iter()
            .map(|(m, _, period, plan)| recurring::renewal_invoice(m, *period, plan))
            .collect();
        let issued: HashMap<i64, Invoice> = invoices::insert_many(&mut tx, &new_invoices, until)
            .await?
            .into_iter()
            .map(|invoice| (invoice.membership_id, invoice))
            .collect();
        if issued.len() != plain.len() {
            return Err(BillingError::Conflict(
                "a period was already invoiced".into(),
            ));
        }
        for (m, _, period, plan) in &mut plain {
            // Charged: the Pending attempt now owns the membership's next step.
            m.state.renewal_issued(*period, plan);
        }
        let new_charges: Vec<NewCharge<'_>> = plain
            .iter()
            .map(|(m, card, ..)| {
                let invoice = &issued[&m.id];
                attempts::new_charge(m, invoice, ChargeKind::Renewal, *card, 0)
            })
            .collect();
        let written = charges::insert_pending_many(&mut tx, &new_charges, until).await?;
        if written.len() != new_charges.len() {
            // A request wrote a charge of a claimed membership between the claim's snapshot
            // and its lock: nothing of the batch is written, and the next pass claims again.
            tx.rollback().await?;
            return Ok(0);
        }
        let finalized: Vec<&Invoice> = issued.values().collect();
        numbering::finalize(&mut tx, &finalized, until).await?;
        attempts.extend(written);
        let mut renewed: Vec<&mut Membership> = plain.iter_mut().map(|(m, ..)| m).collect();
        followups::save_many(&mut tx, &mut renewed, until).await?;
    }
    tx.commit().await?;
    charging::execute_many(state, attempts, until).await?;
    Ok(acted)
}
