//! The `checkout_sessions` table: hosted checkout sessions (one membership to pay) and portal
//! sessions (a customer's self-service page). The token in the link is never stored, only its
//! keyed digest.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Tx};

/// What a session is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// Pays one membership (first payment or pay-now).
    Checkout,
    /// The customer's portal.
    Portal,
}

impl SessionKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Checkout => "checkout",
            SessionKind::Portal => "portal",
        }
    }
}

/// A stored session.
#[derive(Debug, Clone)]
pub struct CheckoutSession {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// The customer it serves.
    pub customer_id: i64,
    /// The membership a checkout pays; `None` for a portal.
    pub membership_id: Option<i64>,
    /// Public id, `cs_…` or `ps_…`.
    pub session_key: String,
    /// Checkout or portal.
    pub kind: SessionKind,
    /// Where the customer goes afterwards.
    pub return_url: Option<String>,
    /// A card entered on the page that waits for the customer to confirm their identity.
    pub pending_payment_method_id: Option<i64>,
    /// Whether the page shows the identity-confirmation step for that card.
    pub challenge_pending: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// When the link stops working.
    pub expires_at: DateTime<Utc>,
    /// When a checkout was paid.
    pub completed_at: Option<DateTime<Utc>>,
}

/// A session to create.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The customer.
    pub customer_id: i64,
    /// The membership to pay, for a checkout.
    pub membership_id: Option<i64>,
    /// Fresh public id.
    pub session_key: String,
    /// Keyed digest of the link's token.
    pub token_digest: &'a str,
    /// Checkout or portal.
    pub kind: SessionKind,
    /// Where the customer goes afterwards.
    pub return_url: Option<&'a str>,
    /// When the link stops working.
    pub expires_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, merchant_id, customer_id, membership_id, session_key, kind, \
    return_url, pending_payment_method_id, challenge_pending, created_at, expires_at, completed_at";

fn decode(row: &AnyRow) -> Result<CheckoutSession, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    Ok(CheckoutSession {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        customer_id: row.try_get("customer_id")?,
        membership_id: row.try_get("membership_id")?,
        session_key: row.try_get("session_key")?,
        kind: if kind == "portal" {
            SessionKind::Portal
        } else {
            SessionKind::Checkout
        },
        return_url: row.try_get("return_url")?,
        pending_payment_method_id: row.try_get("pending_payment_method_id")?,
        challenge_pending: row.try_get::<i64, _>("challenge_pending")? != 0,
        created_at: from_micros(row.try_get("created_at")?),
        expires_at: from_micros(row.try_get("expires_at")?),
        completed_at: row
            .try_get::<Option<i64>, _>("completed_at")?
            .map(from_micros),
    })
}

/// Stores a new session.
pub async fn insert(
    tx: &mut Tx,
    new: NewSession<'_>,
    now: DateTime<Utc>,
) -> Result<CheckoutSession, sqlx::Error> {
    let sql = format!(
        "INSERT INTO checkout_sessions (merchant_id, customer_id, membership_id, session_key, \
         token_digest, kind, return_url, challenge_pending, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9) RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(new.merchant_id)
        .bind(new.customer_id)
        .bind(new.membership_id)
        .bind(&new.session_key)
        .bind(new.token_digest)
        .bind(new.kind.as_str())
        .bind(new.return_url)
        .bind(to_micros(now))
        .bind(to_micros(new.expires_at))
        .fetch_one(&mut **tx)
        .await?;
    decode(&row)
}

/// The newest checkout sessions of the merchant's membership that are still open at `now` (not
/// paid, not expired), as `(session_key, token_digest)`: the caller tells a pay-now link, whose
/// token derives from its key, from the others.
pub async fn open_for_membership<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    membership_id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT session_key, token_digest FROM checkout_sessions WHERE merchant_id = $1 \
         AND membership_id = $2 AND kind = 'checkout' AND completed_at IS NULL \
         AND expires_at > $3 ORDER BY id DESC LIMIT 20",
    )
    .bind(merchant_id)
    .bind(membership_id)
    .bind(to_micros(now))
    .fetch_all(executor)
    .await
}

/// The session whose token has this digest, if any (expired ones included: the caller decides).
pub async fn by_token_digest<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    digest: &str,
) -> Result<Option<CheckoutSession>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM checkout_sessions WHERE token_digest = $1");
    let row = sqlx::query(&sql)
        .bind(digest)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Remembers (or forgets, with `None`) the card waiting for the identity-confirmation step.
pub async fn set_challenge<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    session: &CheckoutSession,
    payment_method_id: Option<i64>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE checkout_sessions SET pending_payment_method_id = $1, challenge_pending = $2 \
         WHERE merchant_id = $3 AND id = $4",
    )
    .bind(payment_method_id)
    .bind(i64::from(payment_method_id.is_some()))
    .bind(session.merchant_id)
    .bind(session.id)
    .execute(executor)
    .await?;
    Ok(())
}

/// Marks a checkout paid.
pub async fn complete<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    session: &CheckoutSession,
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE checkout_sessions SET completed_at = $1, pending_payment_method_id = NULL, \
         challenge_pending = 0 WHERE merchant_id = $2 AND id = $3 AND completed_at IS NULL",
    )
    .bind(to_micros(at))
    .bind(session.merchant_id)
    .bind(session.id)
    .execute(executor)
    .await?;
    Ok(())
}
