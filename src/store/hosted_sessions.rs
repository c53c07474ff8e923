//! The `hosted_page_sessions` table: cashier sessions created by merchants for single orders.

use chrono::{DateTime, Utc};

use super::{from_micros, to_micros, Tx};

/// What a hosted-page session is created with, validated.
#[derive(Debug, Clone)]
pub struct NewHostedSession {
    /// The merchant's order id.
    pub order_id: String,
    /// ISO 4217 code.
    pub currency: String,
    /// Fixed amount in minor units; `None` lets the customer choose.
    pub locked_amount: Option<i64>,
    /// `billingDetails` as received (validated), as JSON text.
    pub billing_details: String,
    /// Where notifications go.
    pub webhook_url: Option<String>,
    /// Where the customer goes after a success.
    pub success_redirect_url: Option<String>,
    /// Where the customer goes after a failure.
    pub failed_redirect_url: Option<String>,
    /// Processor ids hidden in the cashier.
    pub disabled_psp_ids: Vec<i64>,
    /// Show card processors only.
    pub credit_card_only: bool,
    /// Payout mode.
    pub is_payout: bool,
    /// Description shown in the cashier.
    pub cashier_description: Option<String>,
}

/// An open session found for an order: its sealed token and expiry.
#[derive(Debug, Clone)]
pub struct OpenSession {
    /// The session token, sealed with the server key.
    pub token_sealed: String,
    /// When it stops being usable.
    pub expires_at: DateTime<Utc>,
}

/// The newest open, unexpired session of `order_id`.
pub async fn open_for_order(
    tx: &mut Tx,
    merchant_id: i64,
    order_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<OpenSession>, sqlx::Error> {
    let row: Option<(String, i64)> = sqlx::query_as(
        "SELECT token_sealed, expires_at FROM hosted_page_sessions \
         WHERE merchant_id = $1 AND order_id = $2 AND status = 'open' AND expires_at > $3 \
         ORDER BY expires_at DESC LIMIT 1",
    )
    .bind(merchant_id)
    .bind(order_id)
    .bind(to_micros(now))
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|(token_sealed, expires)| OpenSession {
        token_sealed,
        expires_at: from_micros(expires),
    }))
}

/// Stores a new open session.
pub async fn insert(
    tx: &mut Tx,
    merchant_id: i64,
    session: &NewHostedSession,
    token_digest: &str,
    token_sealed: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let disabled = serde_json::to_string(&session.disabled_psp_ids)
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query(
        "INSERT INTO hosted_page_sessions (merchant_id, order_id, token_digest, token_sealed, \
         currency, locked_amount, billing_details, webhook_url, success_redirect_url, \
         failed_redirect_url, disabled_psp_ids, credit_card_only, is_payout, cashier_description, \
         status, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'open', $15, $16)",
    )
    .bind(merchant_id)
    .bind(&session.order_id)
    .bind(token_digest)
    .bind(token_sealed)
    .bind(&session.currency)
    .bind(session.locked_amount)
    .bind(&session.billing_details)
    .bind(&session.webhook_url)
    .bind(&session.success_redirect_url)
    .bind(&session.failed_redirect_url)
    .bind(disabled)
    .bind(i64::from(session.credit_card_only))
    .bind(i64::from(session.is_payout))
    .bind(&session.cashier_description)
    .bind(to_micros(now))
    .bind(to_micros(expires_at))
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// A stored session, as the cashier page needs it.
#[derive(Debug, Clone)]
pub struct HostedSession {
    /// Row id.
    pub id: i64,
    /// Owner.
    pub merchant_id: i64,
    /// What it was created with.
    pub fields: NewHostedSession,
    /// `open` until paid.
    pub status: String,
    /// When it stops being usable.
    pub expires_at: DateTime<Utc>,
}

/// The session whose token has this lookup digest. The token is the credential: it identifies the
/// merchant as well.
pub async fn by_token_digest(
    store: &super::Store,
    token_digest: &str,
) -> Result<Option<HostedSession>, sqlx::Error> {
    use sqlx::Row;
    let row = sqlx::query(
        "SELECT id, merchant_id, order_id, currency, locked_amount, billing_details, webhook_url, \
         success_redirect_url, failed_redirect_url, disabled_psp_ids, credit_card_only, is_payout, \
         cashier_description, status, expires_at FROM hosted_page_sessions WHERE token_digest = $1",
    )
    .bind(token_digest)
    .fetch_optional(store.pool())
    .await?;
    let Some(row) = row else { return Ok(None) };
    let disabled: String = row.try_get("disabled_psp_ids")?;
    Ok(Some(HostedSession {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        fields: NewHostedSession {
            order_id: row.try_get("order_id")?,
            currency: row.try_get("currency")?,
            locked_amount: row.try_get("locked_amount")?,
            billing_details: row.try_get("billing_details")?,
            webhook_url: row.try_get("webhook_url")?,
            success_redirect_url: row.try_get("success_redirect_url")?,
            failed_redirect_url: row.try_get("failed_redirect_url")?,
            disabled_psp_ids: serde_json::from_str(&disabled)
                .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
            credit_card_only: row.try_get::<i64, _>("credit_card_only")? != 0,
            is_payout: row.try_get::<i64, _>("is_payout")? != 0,
            cashier_description: row.try_get("cashier_description")?,
        },
        status: row.try_get("status")?,
        expires_at: from_micros(row.try_get("expires_at")?),
    }))
}
