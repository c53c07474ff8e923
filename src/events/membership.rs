//! The `Membership` object of the membership events (`SUBSCRIPTION_STATUS_CHANGED`,
//! `SUBSCRIPTION_UPDATED`, and a subscription's `TRANSACTION_DATA_UPDATE`), in the spec's
//! PascalCase shape (DESIGN §5), and the payloads of the first two.

use chrono::{DateTime, Utc};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use serde_json::{json, Map, Value};

use crate::ids;
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;

/// An optional instant: its text, or `null`.
fn time(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, |at| Value::String(format_utc(at)))
}

fn invoice_json(invoice: &Invoice) -> Value {
    let currency = Currency::parse(&invoice.currency).ok();
    let money =
        |minor: i64| currency.map_or(Value::Null, |c| Value::String(format_amount(minor, c)));
    json!({
        "InvoiceId": invoice.invoice_key,
        "Number": invoice.number,
        "Status": invoice.status.as_str(),
        "Currency": invoice.currency,
        "Subtotal": money(invoice.subtotal),
        "Discount": money(invoice.discount),
        "CouponCode": invoice.coupon.as_ref().map(|c| c.code.clone()),
        "Taxes": invoice.taxes.iter().map(|tax| json!({
            "TaxRateId": tax.tax_rate_id,
            "Name": tax.name,
            "Percentage": tax.percentage.to_string(),
            "Inclusive": tax.inclusive,
            "Amount": money(tax.amount),
        })).collect::<Vec<_>>(),
        "Total": money(invoice.total),
        "ReverseCharge": invoice.reverse_charge,
        "CreditApplied": money(invoice.credit_applied),
        "AmountDue": money(invoice.amount_due),
        "AmountPaid": money(invoice.amount_paid),
        "AmountRefunded": money(invoice.amount_refunded),
        "PeriodStart": time(invoice.period.map(|p| p.start)),
        "PeriodEnd": time(invoice.period.map(|p| p.end)),
        "CreatedAt": format_utc(invoice.created_at),
        "PaidAt": time(invoice.paid_at),
        // Credit last; a usage line's meter and quantity (DESIGN §19), null on the others.
        "Lines": invoice.lines.iter().map(|line| json!({
            "Description": line.description,
            "Amount": money(line.amount),
            "MeterCode": line.usage.as_ref().map(|u| u.meter_code.clone()),
            "Quantity": line.usage.as_ref().map(|u| u.quantity.normalize().to_string()),
        })).collect::<Vec<_>>(),
    })
}

/// `Membership.Id`: a UUID named by the membership key ([`ids::named_uuid`]). The interface
/// names `Id` and `Key` apart and types its other `…Id` fields as UUIDs; internal row ids are
/// never exposed, so `Id` is the membership's stable UUID and `Key` its `mmbrshp_…` key.
fn membership_id(membership_key: &str) -> String {
    ids::named_uuid(&format!("membership:{membership_key}"))
}

/// The `Membership` object of every membership payload, with its `recent` invoices (newest
/// first, at most [`RECENT_INVOICES`](crate::store::invoices::RECENT_INVOICES)).
pub(super) fn membership_json(m: &Membership, recent: &[Invoice]) -> Value {
    let currency = m.currency();
    json!({
        "Id": membership_id(&m.membership_key),
        "Key": m.membership_key,
        "CustomerKey": m.customer_key,
        "Metadata": m.metadata,
        "Status": m.state.status.as_str(),
        "Name": m.subscription_name,
        "Currency": m.currency,
        "TotalAmount": format_amount(m.state.price.total, currency),
        "IntervalType": m.state.cycle.interval_type.as_str(),
        "IntervalCount": m.state.cycle.interval_count,
        "CurrentPeriodStart": time(m.state.current_period.map(|p| p.start)),
        "CurrentPeriodEnd": time(m.state.current_period.map(|p| p.end)),
        "NextBillingDate": time(m.state.next_billing_date()),
        "CreditBalance": format_amount(m.state.credit_balance, currency),
        "EndDate": time(m.state.end_date),
        "TrialEnd": time(m.state.trial_end),
        "ResumeAt": time(m.state.resume_at),
        "Invoices": recent.iter().map(invoice_json).collect::<Vec<_>>(),
    })
}

/// The payload of a `SUBSCRIPTION_STATUS_CHANGED` event: the membership with its new status
/// and its `recent` invoices.
pub(super) fn status_changed(m: &Membership, recent: &[Invoice]) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership_json(m, recent));
    payload
}

/// The payload of a `SUBSCRIPTION_UPDATED` event: the membership with its `Updates`.
pub(super) fn updated(
    m: &Membership,
    recent: &[Invoice],
    updates: Map<String, Value>,
) -> Map<String, Value> {
    let mut membership = membership_json(m, recent);
    membership["Updates"] = Value::Object(updates);
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership);
    payload
}

/// The payload of a `SUBSCRIPTION_TRIAL_WILL_END` event: the status-change payload plus
/// `TrialEnd`, when the first charge runs.
pub(super) fn trial_will_end(m: &Membership, recent: &[Invoice]) -> Map<String, Value> {
    let mut payload = status_changed(m, recent);
    payload.insert("TrialEnd".into(), time(m.state.trial_end));
    payload
}
