//! What the engine tells the outside world, written to the outboxes inside the transaction of
//! the change: webhook payloads in the spec's PascalCase shape (DESIGN §5) and customer e-mails.

use chrono::{DateTime, Utc};
use recur_domain::money::{display_amount, format_amount, Currency};
use recur_domain::time::format_utc;
use serde_json::{json, Map, Value};

use super::BillingError;
use crate::app::AppState;
use crate::ids;
use crate::payments::notification::{AccountDetails, TransactionPayload, CRM_CARD};
use crate::payments::payer::account_id;
use crate::store::cashier_transactions::{Attempt, CardFacts, TransactionKind, TransactionStatus};
use crate::store::charges::{Charge, ChargeKind, ChargeStatus};
use crate::store::customers::Customer;
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::merchants::Merchant;
use crate::store::outbox::{EmailKind, NewEmail, NewEvent, LINK_MARKER};
use crate::store::payment_methods::PaymentMethod;
use crate::store::processors::PaymentProcessor;
use crate::store::refunds::{Refund, RefundStatus};

/// `Action` of a membership status change.
pub const STATUS_CHANGED: &str = "SUBSCRIPTION_STATUS_CHANGED";
/// `Action` of a membership update.
pub const UPDATED: &str = "SUBSCRIPTION_UPDATED";
/// `Action` of a charge attempt, refund or payout.
pub const TRANSACTION: &str = "TRANSACTION_DATA_UPDATE";

/// A money amount as a JSON number carrying the exact decimal (`12.5`, `1000`, `0.125`).
pub fn amount_number(minor: i64, currency: Currency) -> Value {
    format_amount(minor, currency)
        .parse::<serde_json::Number>()
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn time(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, |at| Value::String(format_utc(at)))
}

fn invoice_json(invoice: &Invoice) -> Value {
    let currency = Currency::parse(&invoice.currency).ok();
    let money =
        |minor: i64| currency.map_or(Value::Null, |c| Value::String(format_amount(minor, c)));
    json!({
        "InvoiceId": invoice.invoice_key,
        "Status": invoice.status.as_str(),
        "Currency": invoice.currency,
        "Subtotal": money(invoice.subtotal),
        "CreditApplied": money(invoice.credit_applied),
        "AmountDue": money(invoice.amount_due),
        "AmountPaid": money(invoice.amount_paid),
        "AmountRefunded": money(invoice.amount_refunded),
        "PeriodStart": time(invoice.period.map(|p| p.start)),
        "PeriodEnd": time(invoice.period.map(|p| p.end)),
        "CreatedAt": format_utc(invoice.created_at),
        "PaidAt": time(invoice.paid_at),
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
fn membership_json(m: &Membership, recent: &[Invoice]) -> Value {
    let currency = m.currency();
    json!({
        "Id": membership_id(&m.membership_key),
        "Key": m.membership_key,
        "CustomerKey": m.customer_key,
        "Metadata": m.metadata,
        "Status": m.status.as_str(),
        "Name": m.subscription_name,
        "Currency": m.currency,
        "TotalAmount": format_amount(m.total_amount, currency),
        "IntervalType": m.interval_type.as_str(),
        "IntervalCount": m.interval_count,
        "CurrentPeriodStart": time(m.current_period.map(|p| p.start)),
        "CurrentPeriodEnd": time(m.current_period.map(|p| p.end)),
        "NextBillingDate": time(super::next_billing_date(m)),
        "CreditBalance": format_amount(m.credit_balance, currency),
        "EndDate": time(m.end_date),
        "Invoices": recent.iter().map(invoice_json).collect::<Vec<_>>(),
    })
}

/// The event of `action` about `m`, issued at `at`.
fn event<'a>(
    m: &'a Membership,
    action: &'a str,
    mut payload: Map<String, Value>,
    at: DateTime<Utc>,
) -> NewEvent<'a> {
    payload.insert("IssuedAt".into(), format_utc(at).into());
    NewEvent {
        merchant_id: m.merchant_id,
        membership_id: Some(m.id),
        action,
        order_id: &m.order_id,
        webhook_url: &m.webhook_url,
        fields: payload,
    }
}

/// A `SUBSCRIPTION_STATUS_CHANGED` event with the membership's new status and its `recent`
/// invoices.
pub fn status_changed<'a>(
    m: &'a Membership,
    recent: &[Invoice],
    at: DateTime<Utc>,
) -> NewEvent<'a> {
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership_json(m, recent));
    event(m, STATUS_CHANGED, payload, at)
}

/// A `SUBSCRIPTION_UPDATED` event; `updates` holds only the changed keys of the spec's table
/// (`Name`, `PricePerUnit`, `Quantity`, `EndDate`, `IntervalType`, `IntervalCount`, `Metadata`).
pub fn updated<'a>(
    m: &'a Membership,
    recent: &[Invoice],
    updates: Map<String, Value>,
    at: DateTime<Utc>,
) -> NewEvent<'a> {
    let mut membership = membership_json(m, recent);
    membership["Updates"] = Value::Object(updates);
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership);
    event(m, UPDATED, payload, at)
}

/// Everything a transaction notification is built from.
pub struct TransactionFacts<'a> {
    /// The membership billed.
    pub membership: &'a Membership,
    /// Its customer.
    pub customer: &'a Customer,
    /// The money that moved (or did not).
    pub movement: Movement<'a>,
    /// The invoice it paid or refunded (or tried to).
    pub invoice: &'a Invoice,
    /// The card charged or refunded.
    pub payment_method: &'a PaymentMethod,
    /// The membership's latest invoices, newest first (after the charge was recorded).
    pub recent: &'a [Invoice],
    /// The merchant's card processor, when it has one.
    pub processor: Option<&'a PaymentProcessor>,
}

/// What a subscription transaction notification reports.
#[derive(Debug, Clone, Copy)]
pub enum Movement<'a> {
    /// A completed charge attempt (`TransactionType: "PayIn"`).
    Charge(&'a Charge),
    /// A completed refund of an invoice's charge (`TransactionType: "Refund"`).
    Refund(&'a Refund),
}

/// The fields a notification takes from its [`Movement`].
struct MovementFacts {
    kind: TransactionKind,
    status: TransactionStatus,
    id: i64,
    amount: i64,
    reference: String,
    decline: Option<(String, String)>,
    completed_at: Option<DateTime<Utc>>,
    page: Option<(String, String)>,
    retried: bool,
}

impl Movement<'_> {
    fn facts(self) -> MovementFacts {
        match self {
            Movement::Charge(charge) => MovementFacts {
                kind: TransactionKind::PayIn,
                status: match charge.status {
                    ChargeStatus::Success => TransactionStatus::Success,
                    ChargeStatus::Rejected => TransactionStatus::Rejected,
                    ChargeStatus::Pending => TransactionStatus::Failed,
                },
                id: charge.id,
                amount: charge.amount,
                reference: charge.processor_reference.clone().unwrap_or_default(),
                decline: charge
                    .decline_code
                    .clone()
                    .map(|code| (code, charge.decline_reason.clone().unwrap_or_default())),
                completed_at: charge.completed_at,
                page: charge
                    .page
                    .as_ref()
                    .map(|p| (p.session_id.clone(), p.client_ip.clone())),
                retried: charge.kind == ChargeKind::Retry,
            },
            Movement::Refund(refund) => MovementFacts {
                kind: TransactionKind::Refund,
                status: match refund.status {
                    RefundStatus::Succeeded => TransactionStatus::Success,
                    RefundStatus::Failed => TransactionStatus::Rejected,
                    RefundStatus::Pending => TransactionStatus::Failed,
                },
                id: refund.id,
                amount: refund.amount,
                reference: refund.processor_reference.clone().unwrap_or_default(),
                decline: refund.decline.clone(),
                completed_at: refund.completed_at,
                page: None,
                retried: false,
            },
        }
    }
}

/// The `TRANSACTION_DATA_UPDATE` event of a completed charge attempt or refund, with the fields
/// of the hosted-payment-page notification table filled for a subscription transaction.
pub async fn transaction<'a>(
    state: &AppState,
    facts: TransactionFacts<'a>,
    at: DateTime<Utc>,
) -> Result<NewEvent<'a>, BillingError> {
    let TransactionFacts {
        membership: m,
        customer,
        movement,
        invoice,
        payment_method: card,
        recent,
        processor,
    } = facts;
    let currency = m.currency();
    let (processor_id, processor_name, processor_key) = processor
        .map(|p| (p.processor_id, p.name.clone(), p.processor_key.clone()))
        .unwrap_or((0, "Sandbox".into(), String::new()));
    let moved = movement.facts();
    let status = moved.status;
    let reference = moved.reference.clone();
    let (decline_code, decline_reason) = moved.decline.clone().unzip();
    let bin = state.processor.bin_info(&card.bin).await?;
    let f = &customer.fields;
    let payload = TransactionPayload {
        organization_id: m.merchant_id,
        merchant_order_id: m.order_id.clone(),
        account_id: account_id(&state.keys, m.merchant_id, &f.email),
        account: AccountDetails {
            merchant_id: m.merchant_id,
            created: Some(customer.created_at),
            first_name: Some(f.first_name.clone()),
            last_name: Some(f.last_name.clone()),
            email: Some(f.email.clone()),
            currency: m.currency.clone(),
            country: Some(f.country_code.clone()),
            dob: None,
            city: f.city.clone(),
            zip_code: f.zip_code.clone(),
            region: f.state.clone(),
            street: f.address1.clone(),
            phone: Some(f.phone.clone()),
        },
        usd_amount: state.config.usd_rates.to_usd(moved.amount, currency),
        kind: moved.kind.as_str(),
        status: status.as_str(),
        amount: amount_number(moved.amount, currency),
        initial_amount: amount_number(invoice.subtotal.max(0), currency),
        currency: m.currency.clone(),
        transaction_id: moved.id,
        reference: reference.clone(),
        processor_id,
        processor_name: processor_name.clone(),
        decline_code: decline_code.clone(),
        decline_reason: decline_reason.clone(),
        card: Some(CardFacts {
            token: String::new(),
            brand: card.brand.clone(),
            bin: card.bin.clone(),
            last4: card.last4.clone(),
            fingerprint: card.fingerprint.clone(),
            bin_type: bin.bin_type,
            issuer: bin.issuer,
            country: bin.country,
        }),
        cascade_id: moved.page.as_ref().map(|p| p.0.clone()),
        attempts: vec![Attempt {
            processor_id,
            processor_key,
            processor_name,
            reference,
            decline_code,
            decline_reason,
            status: status.as_str().into(),
            at: moved.completed_at.unwrap_or(at),
        }],
        issued_at: at,
        client_ip: moved.page.map(|p| p.1),
        crm_payment_type: CRM_CARD,
        plan_key: Some(m.membership_key.clone()),
        is_subscription: true,
        subscription_invoice_id: Some(invoice.invoice_key.clone()),
        retried: moved.retried,
    };
    let mut payload = payload.into_json();
    payload.insert("Membership".into(), membership_json(m, recent));
    Ok(event(m, TRANSACTION, payload, at))
}

/// Renders a customer e-mail of `merchant` about `m` (and `invoice`, when there is one). With
/// `pay_link` (the session key of a pay-now link) the e-mail carries a "Pay now" button whose
/// address the mailer fills in ([`LINK_MARKER`]).
pub fn email(
    state: &AppState,
    kind: EmailKind,
    merchant: &Merchant,
    m: &Membership,
    customer: &Customer,
    invoice: Option<&Invoice>,
    pay_link: Option<String>,
) -> Result<NewEmail, BillingError> {
    let currency = m.currency();
    let money = |minor: i64| display_amount(minor, currency, "en");
    let (subject, heading, message, total_label) = match kind {
        EmailKind::Receipt => (
            format!("Your receipt from {}", merchant.name),
            "Payment received".to_string(),
            format!("Thank you: your payment for {} was received.", m.subscription_name),
            "Paid",
        ),
        EmailKind::PaymentFailed => (
            format!("Your payment to {} failed", merchant.name),
            "Payment failed".to_string(),
            format!(
                "We could not charge your card for {}. We will try again; you can also pay now, with your saved card or another one.",
                m.subscription_name
            ),
            "Amount due",
        ),
        EmailKind::Canceled => (
            format!("Your {} membership was canceled", m.subscription_name),
            "Membership canceled".to_string(),
            format!("Your membership {} was canceled. You will not be charged again.", m.subscription_name),
            "Total",
        ),
    };
    let lines: Vec<Value> = invoice
        .map(|i| {
            i.lines
                .iter()
                .map(|l| json!({"description": l.description, "amount": money(l.amount)}))
                .collect()
        })
        .unwrap_or_default();
    let total = invoice.map(|i| match kind {
        EmailKind::Receipt => money(i.amount_paid),
        _ => money(i.amount_due),
    });
    let period = invoice.and_then(|i| i.period).map(|p| {
        format!(
            "{} – {}",
            p.start.format("%Y-%m-%d"),
            p.end.format("%Y-%m-%d")
        )
    });
    let context = minijinja::context! {
        merchant_name => merchant.name,
        first_name => customer.fields.first_name,
        heading => heading,
        message => message,
        subscription_name => m.subscription_name,
        invoice_key => invoice.map(|i| i.invoice_key.clone()),
        period => period,
        lines => lines,
        total_label => total_label,
        total => total,
        action_url => pay_link.as_ref().map(|_| LINK_MARKER),
        action_label => pay_link.as_ref().map(|_| "Pay now"),
    };
    let render = |name: &str| -> Result<String, BillingError> {
        state
            .templates
            .get_template(name)
            .and_then(|t| t.render(&context))
            .map_err(|e| BillingError::Internal(e.into()))
    };
    let text_body = render("email/message.txt")?;
    let html_body = render("email/message.html")?;
    Ok(NewEmail {
        merchant_id: m.merchant_id,
        customer_id: customer.id,
        kind,
        to_address: customer.fields.email.clone(),
        subject,
        text_body,
        html_body,
        link_session: pay_link,
    })
}
