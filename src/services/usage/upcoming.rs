//! The upcoming invoice (`GET /membership/{key}/upcoming-invoice`, DESIGN §19): the invoice the
//! membership's next renewal would make if it ran now — the next period's fixed price, the
//! current period's usage so far, the coupon's discount, taxes and credit — computed by the same
//! rules as the renewal and written nowhere.

use recur_domain::invoice::InvoiceLine;
use recur_domain::status::{InvoiceStatus, MembershipStatus};

use super::view::priced_usage;
use crate::billing::taxation;
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::invoices::{Invoice, InvoiceKind};
use crate::store::memberships;

/// The invoice the next renewal of the merchant's membership `key` would make now, unstored:
/// no key, no number, `Draft`. A conflict when no renewal follows (not yet paid, ended, or its
/// end date comes first).
pub async fn upcoming_invoice(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Invoice, ServiceError> {
    let pool = state.store.pool();
    let m = memberships::get(pool, merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let renews = matches!(
        m.state.status,
        MembershipStatus::Active | MembershipStatus::PastDue | MembershipStatus::Trialing
    );
    let no_renewal = || ServiceError::Conflict("no renewal follows for this membership".into());
    let period = m
        .state
        .current_period
        .filter(|_| renews)
        .ok_or_else(no_renewal)?;
    let currency = m.currency();
    let usage: Vec<InvoiceLine> = if m.state.status == MembershipStatus::Trialing {
        // A trial's usage is free (see `billing::usage`).
        Vec::new()
    } else {
        priced_usage(state, m.id, &m.metered, period.start, currency)
            .await?
            .iter()
            .map(|u| u.term.line(&u.priced))
            .collect()
    };
    let taxation = taxation::of(pool, &m).await?;
    let (next, plan) = m
        .state
        .renewal_with_usage(&m.subscription_name, &taxation, usage)
        .filter(|(next, _)| m.state.end_date.is_none_or(|end| next.start < end))
        .ok_or_else(no_renewal)?;
    let now = state.merchant_now(merchant_id).await?;
    Ok(Invoice {
        id: 0,
        merchant_id,
        membership_id: m.id,
        invoice_key: String::new(),
        number: None,
        kind: InvoiceKind::Renewal,
        status: InvoiceStatus::Draft,
        currency: m.currency.clone(),
        period: Some(next),
        subtotal: plan.subtotal,
        discount: plan.discount,
        coupon: plan.coupon,
        taxes: plan.taxes,
        total: plan.total,
        reverse_charge: plan.reverse_charge,
        disputed: false,
        credit_applied: plan.credit_applied,
        amount_due: plan.amount_due,
        amount_paid: 0,
        amount_refunded: 0,
        lines: plan.lines,
        created_at: now,
        paid_at: None,
        voided_at: None,
    })
}
