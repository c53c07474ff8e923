//! Sending the `emails` outbox: due messages, leases, and the outcome of each send.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{from_micros, to_micros, Store, Tx};

/// A rendered e-mail waiting to be sent.
#[derive(Debug, Clone)]
pub struct OutgoingEmail {
    /// Internal id.
    pub id: i64,
    /// The merchant it speaks for.
    pub merchant_id: i64,
    /// Recipient.
    pub to_address: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub text_body: String,
    /// HTML body.
    pub html_body: String,
    /// The session key of the pay-now link the bodies carry as
    /// [`LINK_MARKER`](super::outbox::LINK_MARKER), if any.
    pub link_session: Option<String>,
    /// The Reply-To address, if any.
    pub reply_to: Option<String>,
    /// Send attempts so far.
    pub attempts: i64,
    /// When it was recorded.
    pub created_at: DateTime<Utc>,
}

/// How many e-mails are pending (due now or later): the `emails_due` index.
pub async fn pending_count(store: &Store) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM emails WHERE status = 'Pending'")
        .fetch_one(store.pool())
        .await
}

/// Leases up to `limit` pending e-mails due at `now` and not leased, earliest due first (the
/// order of the `emails_due` index, so a claim never sorts the backlog), until `until`, in one
/// statement, and returns them. An e-mail another mailer leased first is left out: the outer
/// condition is checked again on the row it updates.
pub async fn lease_due(
    store: &Store,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<OutgoingEmail>, sqlx::Error> {
    let rows = sqlx::query(
        "UPDATE emails SET lease_until = $2 WHERE id IN (SELECT id FROM emails \
         WHERE status = 'Pending' AND next_attempt_at <= $1 \
         AND (lease_until IS NULL OR lease_until < $1) ORDER BY next_attempt_at, id LIMIT $3) \
         AND status = 'Pending' AND (lease_until IS NULL OR lease_until < $1) \
         RETURNING id, merchant_id, to_address, subject, text_body, html_body, link_session, reply_to, \
         attempts, created_at",
    )
    .bind(to_micros(now))
    .bind(to_micros(until))
    .bind(limit)
    .fetch_all(store.writer())
    .await?;
    rows.iter()
        .map(|row| {
            Ok(OutgoingEmail {
                id: row.try_get("id")?,
                merchant_id: row.try_get("merchant_id")?,
                to_address: row.try_get("to_address")?,
                subject: row.try_get("subject")?,
                text_body: row.try_get("text_body")?,
                html_body: row.try_get("html_body")?,
                link_session: row.try_get("link_session")?,
                reply_to: row.try_get("reply_to")?,
                attempts: row.try_get("attempts")?,
                created_at: from_micros(row.try_get("created_at")?),
            })
        })
        .collect()
}

/// Records a successful send.
pub async fn mark_sent(
    tx: &mut Tx,
    id: i64,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE emails SET status = 'Sent', message_id = $1, sent_at = $2, attempts = attempts + 1, \
         lease_until = NULL, next_attempt_at = NULL WHERE id = $3",
    )
    .bind(message_id)
    .bind(to_micros(now))
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Records a failed send: retried at `retry_at`, or `Failed` for good when it is `None`.
pub async fn mark_failed(
    tx: &mut Tx,
    id: i64,
    error: &str,
    retry_at: Option<DateTime<Utc>>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE emails SET status = $1, last_error = $2, attempts = attempts + 1, lease_until = NULL, \
         next_attempt_at = $3 WHERE id = $4",
    )
    .bind(if retry_at.is_some() { "Pending" } else { "Failed" })
    .bind(error)
    .bind(retry_at.map(to_micros))
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
