//! The final invoice of a membership that ends (DESIGN §19): canceled, or completed at its
//! `endDate`, it bills its last period's usage in arrears on an invoice of kind `final` (billing
//! key `final`, so one per membership), charged like a renewal but changing no status
//! ([`MembershipState::final_settled`](recur_domain::membership::MembershipState::final_settled)).

use chrono::{DateTime, Utc};

use super::attempts::pending_charge;
use super::invoicing::{issue, new_invoice};
use super::{taxation, usage, BillingError};
use crate::store::charges::{Charge, ChargeKind};
use crate::store::invoices::{Invoice, InvoiceKind};
use crate::store::memberships::Membership;
use crate::store::Tx;

/// The final invoice's billing key: one per membership.
const FINAL_KEY: &str = "final";

/// Issues the final invoice of `m`, which ends at `at`, in the caller's transaction (before its
/// status changes): its last period's usage less the coupon, taxed, credit first, and a
/// `Pending` attempt against the customer's card for what remains due. Returns the invoice and
/// the attempt to run once the transaction commits; neither when the membership bills no usage
/// or its usage comes to nothing.
pub(super) async fn issue_final(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(Option<Invoice>, Option<Charge>), BillingError> {
    let Some((period, usage)) = usage::bill_last_period(tx, m, at).await? else {
        return Ok((None, None));
    };
    let taxation = taxation::of(&mut **tx, m).await?;
    let Some(plan) = m.state.final_invoice(usage, &taxation) else {
        return Ok((None, None));
    };
    let new = new_invoice(m, InvoiceKind::Final, FINAL_KEY.into(), Some(period), &plan);
    let taken = "the membership's final invoice was already issued";
    let invoice = issue(tx, new, at, taken).await?;
    m.state.final_issued(&plan);
    let charge = if plan.amount_due > 0 {
        pending_charge(tx, m, &invoice, ChargeKind::Final, at).await?
    } else {
        None
    };
    Ok((Some(invoice), charge))
}
