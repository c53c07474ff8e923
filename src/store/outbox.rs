//! The outboxes: webhook events and e-mails, written in the same transaction as the change they
//! report, so a change is never committed without them (DESIGN §5). The dispatcher and the
//! mailer deliver them.

use chrono::{DateTime, Utc};
use recur_domain::membership::EmailKind;
use serde_json::{Map, Value};

use super::events::EventStatus;
use super::{to_micros, Tx};

/// A webhook event to record.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The membership it reports on, if any.
    pub membership_id: Option<i64>,
    /// `Action`.
    pub action: &'a str,
    /// `OrderId`.
    pub order_id: &'a str,
    /// Where it goes.
    pub webhook_url: &'a str,
    /// The payload's own fields; `Action`, `ActionId` and `OrderId` are added here, `Signature`
    /// at delivery (from the merchant secret).
    pub fields: Map<String, Value>,
}

/// Records an event, due for delivery at `now`, and returns its `ActionId`: a new UUID, stable
/// across delivery attempts.
pub async fn insert_event(
    tx: &mut Tx,
    event: NewEvent<'_>,
    now: DateTime<Utc>,
) -> Result<String, sqlx::Error> {
    insert_events(tx, vec![event], now)
        .await?
        .pop()
        .ok_or(sqlx::Error::RowNotFound)
}

/// [`insert_event`] for many events in one statement, and their deliveries to the merchants'
/// webhook endpoints in one more; returns their `ActionId`s in order.
pub async fn insert_events(
    tx: &mut Tx,
    events: Vec<NewEvent<'_>>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, sqlx::Error> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO events (merchant_id, membership_id, action_id, action, order_id, webhook_url, \
         payload, status, attempts, next_attempt_at, created_at) VALUES {}",
        super::placeholders(events.len(), 11, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    let mut action_ids = Vec::with_capacity(events.len());
    for event in events {
        let action_id = uuid::Uuid::new_v4().hyphenated().to_string();
        let mut payload = event.fields;
        payload.insert("Action".into(), event.action.into());
        payload.insert("ActionId".into(), action_id.clone().into());
        payload.insert("OrderId".into(), event.order_id.into());
        query = query
            .bind(event.merchant_id)
            .bind(event.membership_id)
            .bind(action_id.clone())
            .bind(event.action.to_string())
            .bind(event.order_id.to_string())
            .bind(event.webhook_url.to_string())
            .bind(Value::Object(payload).to_string())
            .bind(EventStatus::Pending.as_str())
            .bind(0_i64)
            .bind(to_micros(now))
            .bind(to_micros(now));
        action_ids.push(action_id);
    }
    query.execute(&mut **tx).await?;
    super::endpoint_deliveries::fan_out(tx, &action_ids).await?;
    Ok(action_ids)
}

/// What an e-mail is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    /// A customer's e-mail about a membership.
    Customer(EmailKind),
    /// The merchant is told that a webhook endpoint was disabled for failing.
    EndpointDisabled,
}

impl MailKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::Customer(kind) => kind.as_str(),
            MailKind::EndpointDisabled => "endpoint_disabled",
        }
    }
}

/// A rendered e-mail to record.
#[derive(Debug, Clone)]
pub struct NewEmail {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Recipient customer; `None` for an e-mail to the merchant itself.
    pub customer_id: Option<i64>,
    /// What it is.
    pub kind: MailKind,
    /// Recipient address.
    pub to_address: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub text_body: String,
    /// HTML body.
    pub html_body: String,
    /// The session key of the pay-now link the bodies carry as [`LINK_MARKER`], if any.
    pub link_session: Option<String>,
    /// The Reply-To address (the merchant's support e-mail), if any.
    pub reply_to: Option<String>,
}

/// Stands in the stored bodies of an e-mail for its link (`emails.link_session`); the mailer
/// puts the link there as it sends, so the link's token is never stored.
pub const LINK_MARKER: &str = "[[recur-pay-now-link]]";

/// Records e-mails written at `created_at` (the merchant's time, a test clock's for sandbox
/// merchants that use one), due for sending at `due_at` (real time: mail is never held back by
/// a test clock), in one statement.
pub async fn insert_emails(
    tx: &mut Tx,
    emails: &[NewEmail],
    created_at: DateTime<Utc>,
    due_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if emails.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO emails (merchant_id, customer_id, kind, to_address, subject, text_body, \
         html_body, link_session, reply_to, status, attempts, next_attempt_at, created_at) \
         VALUES {}",
        super::placeholders(emails.len(), 13, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for email in emails {
        query = query
            .bind(email.merchant_id)
            .bind(email.customer_id)
            .bind(email.kind.as_str())
            .bind(email.to_address.clone())
            .bind(email.subject.clone())
            .bind(email.text_body.clone())
            .bind(email.html_body.clone())
            .bind(email.link_session.clone())
            .bind(email.reply_to.clone())
            .bind("Pending")
            .bind(0_i64)
            .bind(to_micros(due_at))
            .bind(to_micros(created_at));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
