//! SEPA debits the bank returned (DESIGN §18): each is reversed once. The charge becomes
//! `Rejected` with the ISO reason code, its invoice Open again, the membership PastDue with
//! dunning (retries are new debits in later files) and the customer gets the payment-failed
//! e-mail with its pay-now link; `TRANSACTION_DATA_UPDATE` reports the rejection. `AC01`,
//! `AC04`, `AC06`, `MD01` and `MD07` also revoke the mandate. One file is one transaction.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::charge_context::{distinct, Context};
use super::followups::{self, Followups};
use super::BillingError;
use crate::platform::Platform;
use crate::store::charges::{self, Charge};
use crate::store::memberships::{self, Membership};
use crate::store::sepa_debits::{self, Named};
use crate::store::{invoices, payment_methods, sepa_mandates};

/// Reason codes after which the mandate takes no more debits: the account is wrong, closed or
/// blocked, there is no mandate, or the debtor died.
const REVOKING: [&str; 5] = ["AC01", "AC04", "AC06", "MD01", "MD07"];

/// Reverses the merchant's `returned` debits (each with its ISO reason code), in one
/// transaction. Returns how many were reversed here; a debit reversed before (or by a
/// concurrent request) is left as it is.
pub async fn reverse(
    state: &Platform,
    merchant_id: i64,
    returned: &[(Named, String)],
    at: DateTime<Utc>,
) -> Result<usize, BillingError> {
    let mut tx = state.store.begin().await?;
    let mut reversed: Vec<(Charge, &str)> = Vec::new();
    for (debit, code) in returned {
        if !sepa_debits::mark_returned(&mut tx, debit.charge_id, code, at).await? {
            continue;
        }
        let reason = format!("The bank returned the direct debit ({code}).");
        if let Some(charge) =
            charges::reverse(&mut tx, merchant_id, debit.charge_id, (code, &reason), at).await?
        {
            if REVOKING.contains(&code.as_str()) {
                sepa_mandates::revoke(&mut tx, merchant_id, debit.payment_method_id, at).await?;
            }
            reversed.push((charge, code));
        }
    }
    if reversed.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let membership_ids = distinct(reversed.iter().map(|(c, _)| (merchant_id, c.membership_id)));
    let mut memberships: HashMap<i64, Membership> =
        memberships::lock_many(&mut tx, state.store.backend(), &membership_ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
    let mut due_list = Vec::with_capacity(reversed.len());
    for (charge, _) in &reversed {
        invoices::reopen(&mut tx, charge.invoice_id).await?;
        let m = memberships
            .get_mut(&charge.membership_id)
            .ok_or(BillingError::NotFound)?;
        let last_change = m.updated_at;
        let settlement = m.state.debit_returned(at, last_change);
        due_list.push(Followups::after(&settlement));
    }
    let mut to_save: Vec<&mut Membership> = memberships.values_mut().collect();
    followups::save_many(&mut tx, &mut to_save, at).await?;
    let charges: Vec<&Charge> = reversed.iter().map(|(c, _)| c).collect();
    let invoice_ids = distinct(charges.iter().map(|c| (merchant_id, c.invoice_id)));
    let method_ids = distinct(charges.iter().map(|c| (merchant_id, c.payment_method_id)));
    let methods = payment_methods::get_many(&mut *tx, &method_ids).await?;
    let context = Context::load(&mut tx, &charges, &memberships, &invoice_ids, &methods).await?;
    let settled = charges.iter().copied().zip(due_list).collect();
    context
        .record_outbox(&mut tx, state, settled, &memberships, true, at)
        .await?;
    tx.commit().await?;
    tracing::info!(merchant_id, debits = reversed.len(), "SEPA debits returned");
    Ok(reversed.len())
}
