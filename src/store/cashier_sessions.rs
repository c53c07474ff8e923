//! The `cashier_sessions` table: cashier sessions created by merchants for single orders.

use chrono::{DateTime, Utc};

use super::cashier_transactions::CardFacts;
use super::{from_micros, to_micros, Tx};

/// What a hosted-page session is created with, validated.
#[derive(Debug, Clone)]
pub struct NewCashierSession {
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

/// An open session found for an order: its sealed token, what it was created with and its
/// expiry.
#[derive(Debug, Clone)]
pub struct OpenSession {
    /// The session token, sealed with the server key.
    pub token_sealed: String,
    /// What it was created with, as validated then.
    pub fields: NewCashierSession,
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
    use sqlx::Row;
    let row = sqlx::query(&format!(
        "SELECT {SESSION_COLUMNS}, token_sealed FROM cashier_sessions \
         WHERE merchant_id = $1 AND order_id = $2 AND status = 'open' AND expires_at > $3 \
         ORDER BY expires_at DESC LIMIT 1"
    ))
    .bind(merchant_id)
    .bind(order_id)
    .bind(to_micros(now))
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|row| {
        let session = from_row(&row)?;
        Ok(OpenSession {
            token_sealed: row.try_get("token_sealed")?,
            fields: session.fields,
            expires_at: session.expires_at,
        })
    })
    .transpose()
}

/// Stores a new open session.
pub async fn insert(
    tx: &mut Tx,
    merchant_id: i64,
    session: &NewCashierSession,
    token_digest: &str,
    token_sealed: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let disabled = serde_json::to_string(&session.disabled_psp_ids)
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query(
        "INSERT INTO cashier_sessions (merchant_id, order_id, token_digest, token_sealed, \
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
pub struct CashierSession {
    /// Row id.
    pub id: i64,
    /// Owner.
    pub merchant_id: i64,
    /// What it was created with.
    pub fields: NewCashierSession,
    /// `open` until paid.
    pub status: String,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it stops being usable.
    pub expires_at: DateTime<Utc>,
    /// A card waiting for the customer's identity confirmation, with the amount and the chosen
    /// processor.
    pub pending: Option<PendingPayment>,
}

/// What a session keeps while the customer confirms their identity.
#[derive(Debug, Clone)]
pub struct PendingPayment {
    /// The card.
    pub card: CardFacts,
    /// Amount in minor units.
    pub amount: i64,
    /// The processor the customer chose.
    pub processor_id: i64,
    /// A payment through a connected Stripe account: its PaymentIntent, waiting for Stripe's
    /// decision or the customer's authentication, and when it was parked.
    pub intent: Option<ParkedIntent>,
}

/// A Stripe PaymentIntent parked on a cashier session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedIntent {
    /// `pi_…`.
    pub id: String,
    /// When it was made.
    pub since: DateTime<Utc>,
}

const SESSION_COLUMNS: &str = "id, merchant_id, order_id, currency, locked_amount, \
    billing_details, webhook_url, success_redirect_url, failed_redirect_url, disabled_psp_ids, \
    credit_card_only, is_payout, cashier_description, status, created_at, expires_at, \
    pending_card, pending_amount, pending_processor_id, pending_intent, pending_since";

fn from_row(row: &sqlx::any::AnyRow) -> Result<CashierSession, sqlx::Error> {
    use sqlx::Row;
    let disabled: String = row.try_get("disabled_psp_ids")?;
    let pending_card: Option<String> = row.try_get("pending_card")?;
    let pending = match pending_card {
        Some(card) => Some(PendingPayment {
            card: serde_json::from_str(&card).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
            amount: row
                .try_get::<Option<i64>, _>("pending_amount")?
                .unwrap_or(0),
            processor_id: row
                .try_get::<Option<i64>, _>("pending_processor_id")?
                .unwrap_or(0),
            intent: match (
                row.try_get::<Option<String>, _>("pending_intent")?,
                row.try_get::<Option<i64>, _>("pending_since")?,
            ) {
                (Some(id), Some(since)) => Some(ParkedIntent {
                    id,
                    since: from_micros(since),
                }),
                _ => None,
            },
        }),
        None => None,
    };
    Ok(CashierSession {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        fields: NewCashierSession {
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
        created_at: from_micros(row.try_get("created_at")?),
        expires_at: from_micros(row.try_get("expires_at")?),
        pending,
    })
}

/// The session whose token has this lookup digest. The token is the credential: it identifies the
/// merchant as well.
pub async fn by_token_digest(
    store: &super::Store,
    token_digest: &str,
) -> Result<Option<CashierSession>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {SESSION_COLUMNS} FROM cashier_sessions WHERE token_digest = $1"
    ))
    .bind(token_digest)
    .fetch_optional(store.pool())
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// The session `id` of `merchant_id`.
pub async fn by_id<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<CashierSession>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {SESSION_COLUMNS} FROM cashier_sessions WHERE merchant_id = $1 AND id = $2"
    ))
    .bind(merchant_id)
    .bind(id)
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// Claims an open session for one payment until `until`: `false` when it is completed or another
/// request holds the claim (a double click, a second tab). A claim left by a crashed process
/// lapses at `until`.
pub async fn claim(
    store: &super::Store,
    id: i64,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let claimed = sqlx::query(
        "UPDATE cashier_sessions SET claimed_until = $1 WHERE id = $2 AND status = 'open' \
         AND (claimed_until IS NULL OR claimed_until <= $3)",
    )
    .bind(to_micros(until))
    .bind(id)
    .bind(to_micros(now))
    .execute(store.writer())
    .await?;
    Ok(claimed.rows_affected() == 1)
}

/// Ends a payment's claim and drops the payment parked on the session; `completed` closes the
/// session for good (paid or paid out).
pub async fn release(tx: &mut Tx, id: i64, completed: bool) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE cashier_sessions SET claimed_until = NULL, pending_card = NULL, \
         pending_amount = NULL, pending_processor_id = NULL, pending_intent = NULL, \
         pending_since = NULL, status = CASE WHEN $1 = 1 THEN 'completed' ELSE status END \
         WHERE id = $2",
    )
    .bind(i64::from(completed))
    .bind(id)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Parks a payment on the session while the customer confirms their identity (or Stripe
/// decides); `None` clears it.
pub async fn set_pending(
    store: &super::Store,
    id: i64,
    pending: Option<&PendingPayment>,
) -> Result<(), sqlx::Error> {
    let card = pending
        .map(|p| serde_json::to_string(&p.card))
        .transpose()
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let intent = pending.and_then(|p| p.intent.as_ref());
    sqlx::query(
        "UPDATE cashier_sessions SET pending_card = $1, pending_amount = $2, \
         pending_processor_id = $3, pending_intent = $4, pending_since = $5 WHERE id = $6",
    )
    .bind(card)
    .bind(pending.map(|p| p.amount))
    .bind(pending.map(|p| p.processor_id))
    .bind(intent.map(|i| i.id.clone()))
    .bind(intent.map(|i| to_micros(i.since)))
    .bind(id)
    .execute(store.writer())
    .await
    .map(|_| ())
}

/// Sessions (of `merchant_id`, or of every merchant) with a Stripe PaymentIntent parked at or
/// before `before`, oldest first, at most `limit`.
pub async fn parked_intents(
    store: &super::Store,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<CashierSession>, sqlx::Error> {
    let rows = match merchant_id {
        Some(merchant_id) => {
            sqlx::query(&format!(
                "SELECT {SESSION_COLUMNS} FROM cashier_sessions WHERE merchant_id = $1 \
                 AND pending_intent IS NOT NULL AND pending_since <= $2 \
                 ORDER BY pending_since LIMIT $3"
            ))
            .bind(merchant_id)
            .bind(to_micros(before))
            .bind(limit)
            .fetch_all(store.pool())
            .await?
        }
        None => {
            sqlx::query(&format!(
                "SELECT {SESSION_COLUMNS} FROM cashier_sessions \
                 WHERE pending_intent IS NOT NULL AND pending_since <= $1 \
                 ORDER BY pending_since LIMIT $2"
            ))
            .bind(to_micros(before))
            .bind(limit)
            .fetch_all(store.pool())
            .await?
        }
    };
    rows.iter().map(from_row).collect()
}
