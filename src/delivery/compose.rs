//! Customer e-mails about a membership (a receipt, a failed payment, a cancellation, a credit
//! note), rendered
//! from the `email/` templates into the outbox in the transaction of the change; the mailer
//! ([`super::mail`]) sends them. They speak for the merchant as its settings say: under its
//! display name, with its support e-mail as Reply-To and contact.

use recur_domain::invoice::{InvoiceLine, CREDIT_LINE};
use recur_domain::membership::EmailKind;
use recur_domain::money::display_amount;
use serde_json::{json, Value};
use sqlx::{Any, Executor};

use super::credits::{self, Credited};
use crate::platform::Platform;
use crate::store::customers::Customer;
use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::merchant_settings;
use crate::store::outbox::{MailKind, NewEmail, LINK_MARKER};

/// Whom a merchant's customer e-mails come from, as its settings say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// The name customers see: the display name, or the merchant's name.
    pub name: String,
    /// The support e-mail, when set: the Reply-To, and named in the message and its footer.
    pub support_email: Option<String>,
    /// The seller's legal name (or the display name), for the footer.
    pub legal_name: String,
    /// The seller's postal address and country on one line, when set, for the footer.
    pub address: Option<String>,
}

impl Sender {
    /// The sender of `merchant_id`'s e-mails, read in one statement through `executor` (the
    /// change's transaction); `None` when there is no such merchant.
    pub async fn load<'c, E: Executor<'c, Database = Any>>(
        executor: E,
        merchant_id: i64,
    ) -> Result<Option<Self>, sqlx::Error> {
        let named = merchant_settings::with_name(executor, merchant_id).await?;
        Ok(named.map(|named| {
            let address = named.settings.address_lines().join(", ");
            Sender {
                name: named.display_name().to_string(),
                legal_name: named
                    .settings
                    .legal_name_or(&named.merchant_name)
                    .to_string(),
                address: (!address.is_empty()).then_some(address),
                support_email: named.settings.support_email,
            }
        }))
    }
}

/// What a customer e-mail is about besides its membership.
#[derive(Debug, Default)]
pub struct About<'a> {
    /// The invoice it shows, if any.
    pub invoice: Option<&'a Invoice>,
    /// The session key of a pay-now link: the e-mail carries a "Pay now" button whose address
    /// the mailer fills in ([`LINK_MARKER`]).
    pub pay_link: Option<String>,
    /// The credit notes the change wrote, listed with their PDF links; a
    /// [`EmailKind::CreditNote`] e-mail is about the first.
    pub credits: &'a [Credited],
    /// What the first charge after a trial will be (a [`EmailKind::TrialWillEnd`] e-mail), in
    /// minor units.
    pub first_charge: Option<i64>,
    /// The debit an [`EmailKind::DebitNotice`] e-mail pre-notifies.
    pub debit: Option<&'a DebitNotice>,
}

/// What a SEPA debit's pre-notification tells the customer (DESIGN §18).
#[derive(Debug, Clone)]
pub struct DebitNotice {
    /// The amount, minor units.
    pub amount: i64,
    /// The collection date.
    pub collection_date: chrono::NaiveDate,
    /// The mandate's reference.
    pub mandate_reference: String,
    /// The debited account's last four characters.
    pub iban_last4: String,
    /// The creditor's name.
    pub creditor_name: String,
    /// The creditor identifier.
    pub creditor_id: String,
}

/// Renders a customer e-mail from `sender` about `m` and what `about` names.
pub fn email(
    state: &Platform,
    kind: EmailKind,
    sender: &Sender,
    m: &Membership,
    customer: &Customer,
    about: About<'_>,
) -> anyhow::Result<NewEmail> {
    let About {
        invoice,
        pay_link,
        credits,
        first_charge,
        debit,
    } = about;
    let currency = m.currency();
    let money = |minor: i64| display_amount(minor, currency, "en");
    let (subject, heading, message, total_label) = match kind {
        EmailKind::Receipt => (
            format!("Your receipt from {}", sender.name),
            "Payment received".to_string(),
            format!("Thank you: your payment for {} was received.", m.subscription_name),
            "Paid",
        ),
        EmailKind::PaymentFailed => (
            format!("Your payment to {} failed", sender.name),
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
        EmailKind::TrialWillEnd => {
            let ends = m
                .state
                .trial_end
                .map(|at| at.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            let charge = first_charge
                .map(|amount| format!(" Your card will then be charged {}.", money(amount)))
                .unwrap_or_default();
            (
                format!("Your {} trial ends on {ends}", m.subscription_name),
                "Your trial ends soon".to_string(),
                format!(
                    "Your free trial of {} ends on {ends}.{charge} To stop before then, cancel your membership.",
                    m.subscription_name
                ),
                "Total",
            )
        }
        EmailKind::DebitNotice => {
            let debit =
                debit.ok_or_else(|| anyhow::anyhow!("a debit notice without its debit"))?;
            let on = debit.collection_date.format("%Y-%m-%d");
            let amount = money(debit.amount);
            (
                format!("{} will collect {amount} by direct debit on {on}", sender.name),
                "Direct debit notice".to_string(),
                format!(
                    "{creditor} will collect {amount} for {} by SEPA Direct Debit from your account \
                     ending in {last4} on {on}, under mandate {reference} (creditor identifier \
                     {creditor_id}).",
                    m.subscription_name,
                    creditor = debit.creditor_name,
                    last4 = debit.iban_last4,
                    reference = debit.mandate_reference,
                    creditor_id = debit.creditor_id,
                ),
                "To be collected",
            )
        }
        EmailKind::CreditNote => {
            let credited = credits
                .first()
                .ok_or_else(|| anyhow::anyhow!("a credit-note e-mail without its credit note"))?;
            let (subject, heading, message) = credits::wording(credited)?;
            (subject, heading, message, "Total")
        }
    };
    let lines: Vec<Value> = invoice
        .map(|i| {
            let discount = (i.discount != 0).then(|| {
                let code = i.coupon.as_ref().map(|c| format!(" ({})", c.code));
                json!({
                    "description": format!("Discount{}", code.unwrap_or_default()),
                    "amount": money(-i.discount),
                })
            });
            // The discount comes off the charged lines, before the credit (the last line).
            let line =
                |l: &InvoiceLine| json!({"description": l.description, "amount": money(l.amount)});
            let (credit, charged): (Vec<&InvoiceLine>, Vec<&InvoiceLine>) =
                i.lines.iter().partition(|l| l.description == CREDIT_LINE);
            charged
                .into_iter()
                .map(line)
                .chain(discount)
                .chain(credit.into_iter().map(line))
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
        merchant_name => sender.name,
        support_email => sender.support_email,
        legal_name => sender.legal_name,
        address => sender.address,
        first_name => customer.fields.first_name,
        heading => heading,
        message => message,
        subscription_name => m.subscription_name,
        // Its number once finalized (every invoice an e-mail is about has been attempted).
        invoice_number => invoice.map(|i| i.number.clone().unwrap_or_else(|| i.invoice_key.clone())),
        period => period,
        lines => lines,
        total_label => total_label,
        total => total,
        credit_notes => credits::listed(credits)?,
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
        customer_id: Some(customer.id),
        kind: MailKind::Customer(kind),
        to_address: customer.fields.email.clone(),
        subject,
        text_body,
        html_body,
        link_session: pay_link,
        reply_to: sender.support_email.clone(),
    })
}
