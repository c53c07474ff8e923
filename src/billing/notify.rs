//! What the engine tells the outside world, written to the outboxes inside the transaction of
//! the change: webhook payloads in the spec's PascalCase shape (DESIGN §5) and customer e-mails.

use chrono::{DateTime, Utc};
use recur_domain::money::{format_amount, Currency};
use serde_json::{json, Map, Value};

use super::BillingError;
use crate::api::format_utc;
use crate::app::AppState;
use crate::pages::format::display_amount;
use crate::store::charges::{Charge, ChargeKind, ChargeStatus};
use crate::store::customers::Customer;
use crate::store::invoices::{self, Invoice};
use crate::store::memberships::Membership;
use crate::store::outbox::{self, EmailKind, NewEmail, NewEvent};
use crate::store::payment_methods::PaymentMethod;
use crate::store::{merchants, processors, Tx};

/// `Action` of a membership status change.
pub const STATUS_CHANGED: &str = "SUBSCRIPTION_STATUS_CHANGED";
/// `Action` of a membership update.
pub const UPDATED: &str = "SUBSCRIPTION_UPDATED";
/// `Action` of a charge attempt, refund or payout.
pub const TRANSACTION: &str = "TRANSACTION_DATA_UPDATE";

/// How many invoices a membership payload carries, newest first.
pub const RECENT_INVOICES: i64 = 10;

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
        "PeriodStart": time(invoice.period.map(|p| p.start)),
        "PeriodEnd": time(invoice.period.map(|p| p.end)),
        "CreatedAt": format_utc(invoice.created_at),
        "PaidAt": time(invoice.paid_at),
    })
}

/// The `Membership` object of every membership payload.
async fn membership_json(tx: &mut Tx, m: &Membership) -> Result<Value, BillingError> {
    let recent = invoices::recent(&mut **tx, m.id, RECENT_INVOICES).await?;
    let currency = m.currency();
    Ok(json!({
        "Id": m.membership_key,
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
    }))
}

async fn record(
    tx: &mut Tx,
    m: &Membership,
    action: &str,
    mut payload: Map<String, Value>,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let action_id = uuid::Uuid::new_v4().hyphenated().to_string();
    payload.insert("Action".into(), action.into());
    payload.insert("ActionId".into(), action_id.clone().into());
    payload.insert("OrderId".into(), m.order_id.clone().into());
    payload.insert("IssuedAt".into(), format_utc(at).into());
    let payload = Value::Object(payload);
    outbox::insert_event(
        tx,
        NewEvent {
            merchant_id: m.merchant_id,
            membership_id: Some(m.id),
            action_id,
            action,
            order_id: &m.order_id,
            webhook_url: &m.webhook_url,
            payload: &payload,
        },
        at,
    )
    .await?;
    Ok(())
}

/// Records a `SUBSCRIPTION_STATUS_CHANGED` event with the membership's new status and recent
/// invoices.
pub async fn status_changed(
    tx: &mut Tx,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership_json(tx, m).await?);
    record(tx, m, STATUS_CHANGED, payload, at).await
}

/// Records a `SUBSCRIPTION_UPDATED` event; `updates` holds only the changed keys of the spec's
/// table (`Name`, `PricePerUnit`, `Quantity`, `EndDate`, `IntervalType`, `IntervalCount`,
/// `Metadata`).
pub async fn updated(
    tx: &mut Tx,
    m: &Membership,
    updates: Map<String, Value>,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let mut membership = membership_json(tx, m).await?;
    membership["Updates"] = Value::Object(updates);
    let mut payload = Map::new();
    payload.insert("Membership".into(), membership);
    record(tx, m, UPDATED, payload, at).await
}

/// Everything a transaction notification is built from.
pub struct TransactionFacts<'a> {
    /// The membership billed.
    pub membership: &'a Membership,
    /// Its customer.
    pub customer: &'a Customer,
    /// The completed attempt.
    pub charge: &'a Charge,
    /// The invoice it paid (or tried to).
    pub invoice: &'a Invoice,
    /// The card charged.
    pub payment_method: &'a PaymentMethod,
}

/// Records a `TRANSACTION_DATA_UPDATE` event for a completed charge attempt, with the fields of
/// the hosted-payment-page notification table that apply to a subscription charge.
pub async fn transaction(
    tx: &mut Tx,
    facts: TransactionFacts<'_>,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let TransactionFacts {
        membership: m,
        customer,
        charge,
        invoice,
        payment_method: card,
    } = facts;
    let currency = m.currency();
    let processor = processors::list(&mut **tx, m.merchant_id)
        .await?
        .into_iter()
        .find(|p| p.kind == processors::ProcessorKind::Card);
    let (processor_id, processor_name, processor_key) = processor
        .map(|p| (p.processor_id, p.name, p.processor_key))
        .unwrap_or((0, "Sandbox".into(), String::new()));
    let status = match charge.status {
        ChargeStatus::Success => "Success",
        ChargeStatus::Rejected => "Rejected",
        ChargeStatus::Pending => "Failed",
    };
    let reference = charge.processor_reference.clone().unwrap_or_default();
    let f = &customer.fields;
    let mut payload = Map::new();
    let mut put = |key: &str, value: Value| {
        payload.insert(key.into(), value);
    };
    put("OrganizationId", m.merchant_id.into());
    put("MerchantOrderId", m.order_id.clone().into());
    put("AccountId", customer.customer_key.clone().into());
    put(
        "AccountDetails",
        json!({
            "MerchantId": m.merchant_id,
            "CreatedDate": format_utc(customer.created_at),
            "FirstName": f.first_name,
            "LastName": f.last_name,
            "Email": f.email,
            "Currency": m.currency,
            "Country": f.country_code,
            "Dob": Value::Null,
            "City": f.city,
            "ZipCode": f.zip_code,
            "Region": f.state,
            "Street": f.address1,
            "Phone": f.phone,
        }),
    );
    put("BinType", Value::Null);
    put(
        "UsdAmount",
        if m.currency == "USD" {
            amount_number(charge.amount, currency)
        } else {
            Value::Null
        },
    );
    put("TransactionType", "PayIn".into());
    put("TransactionStatus", status.into());
    put("Amount", amount_number(charge.amount, currency));
    put(
        "InitialAmount",
        amount_number(invoice.subtotal.max(0), currency),
    );
    put("Currency", m.currency.clone().into());
    put("TransactionId", charge.id.into());
    put("ExternalTransactionId", reference.clone().into());
    put("PaymentProcessor", processor_name.clone().into());
    put("PaymentProcessorId", processor_id.into());
    put(
        "PaymentProcessorTitleForSync",
        processor_name.clone().into(),
    );
    put("DeclineReasonText", charge.decline_reason.clone().into());
    put("DeclineReasonCode", charge.decline_code.clone().into());
    put("CardType", card.brand.clone().into());
    put("CardIssuer", Value::Null);
    put("LastCcDigits", card.last4.clone().into());
    put("MaskedPan", card.masked_pan().into());
    put(
        "CascadingInfo",
        json!({
            "SessionId": Value::Null,
            "AttemptsVector": [{
                "PaymentSystem": processor_name,
                "PaymentProcessorId": processor_id,
                "PaymentProcessorKey": processor_key,
                "DeclineReason": charge.decline_reason,
                "ExternalTransactionId": reference,
                "InternalPspId": reference,
                "TransactionId": charge.id,
                "Date": format_utc(charge.completed_at.unwrap_or(at)),
                "Status": status,
            }],
        }),
    );
    put("IssueDate", format_utc(at).into());
    put("ClientIP", Value::Null);
    put("InternalPspId", reference.into());
    put("EncryptedGatewayData", Value::Null);
    put("CreditCardDigest", card.fingerprint.clone().into());
    put("CreditCardCountry", Value::Null);
    put("CrmPaymentType", 1.into());
    put("PlanKey", m.membership_key.clone().into());
    put("IsSubscriptionTransaction", true.into());
    put("SubscriptionInvoiceId", invoice.invoice_key.clone().into());
    put("Retried", (charge.kind == ChargeKind::Retry).into());
    payload.insert("Membership".into(), membership_json(tx, m).await?);
    record(tx, m, TRANSACTION, payload, at).await
}

/// Renders and records a customer e-mail about `m` (and `invoice`, when there is one).
pub async fn email(
    tx: &mut Tx,
    state: &AppState,
    kind: EmailKind,
    m: &Membership,
    customer: &Customer,
    invoice: Option<&Invoice>,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let merchant = merchants::by_id_in(&mut **tx, m.merchant_id)
        .await?
        .ok_or_else(|| BillingError::Internal(anyhow::anyhow!("membership without merchant")))?;
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
                "We could not charge your card for {}. We will try again; you can also update your payment method.",
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
        action_url => Value::Null,
        action_label => Value::Null,
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
    outbox::insert_email(
        tx,
        NewEmail {
            merchant_id: m.merchant_id,
            customer_id: customer.id,
            kind,
            to_address: &customer.fields.email,
            subject: &subject,
            text_body: &text_body,
            html_body: &html_body,
        },
        at,
        state.clock.now(),
    )
    .await?;
    Ok(())
}
