//! Customer e-mails about a membership (a receipt, a failed payment, a cancellation), rendered
//! from the `email/` templates into the outbox in the transaction of the change; the mailer
//! ([`super::mail`]) sends them.

use recur_domain::membership::EmailKind;
use recur_domain::money::display_amount;
use serde_json::{json, Value};

use crate::services::Services;
use crate::store::customers::Customer;
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::merchants::Merchant;
use crate::store::outbox::{NewEmail, LINK_MARKER};

/// Renders a customer e-mail of `merchant` about `m` (and `invoice`, when there is one). With
/// `pay_link` (the session key of a pay-now link) the e-mail carries a "Pay now" button whose
/// address the mailer fills in ([`LINK_MARKER`]).
pub fn email(
    state: &Services,
    kind: EmailKind,
    merchant: &Merchant,
    m: &Membership,
    customer: &Customer,
    invoice: Option<&Invoice>,
    pay_link: Option<String>,
) -> anyhow::Result<NewEmail> {
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
    let render = |name: &str| -> Result<String, minijinja::Error> {
        state
            .templates
            .get_template(name)
            .and_then(|t| t.render(&context))
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
