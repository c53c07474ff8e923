//! The sandbox processor's own tables ([`crate::processor::sandbox`]): its vault
//! (`sandbox_cards`: token → behaviour, never the card number) and its ledger (`sandbox_charges`:
//! the first answer for each idempotency key). recur's billing code never reads them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor, Row};

use super::{placeholders, to_micros, Backend, Store, Tx};

/// An answer the ledger holds for an idempotency key.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The processor's reference of the charge, refund or payout (`sbx_…`).
    pub reference: String,
    /// `(code, reason)` when it was declined; `None` when approved.
    pub decline: Option<(String, String)>,
}

/// One ledger entry to record.
pub struct Entry<'a> {
    /// The idempotency key: the first entry recorded for it is its answer.
    pub key: &'a str,
    /// The merchant it is for.
    pub merchant_id: i64,
    /// `charge`, `refund` or `payout`.
    pub kind: &'static str,
    /// The charge a refund refunds.
    pub refunded_reference: Option<&'a str>,
    /// The card's token (blank for an alternative method).
    pub token: &'a str,
    /// Minor units.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// `(code, reason)` of a decline; `None` to approve.
    pub decline: Option<(&'a str, &'a str)>,
    /// The reference the answer gets if this entry is the first for its key.
    pub reference: String,
}

/// A charge as a refund of it needs it.
#[derive(Debug, Clone)]
pub struct Refundable {
    /// The card's token.
    pub token: String,
    /// Minor units charged.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Whether the charge was approved.
    pub approved: bool,
}

/// The first answers recorded for these `(merchant id, key)` pairs, by key.
pub async fn answers<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    keys: &[(i64, &str)],
) -> Result<HashMap<String, Answer>, sqlx::Error> {
    let sql = format!(
        "SELECT idempotency_key, outcome, decline_code, decline_reason, reference \
         FROM sandbox_charges JOIN (VALUES {}) AS v \
         ON sandbox_charges.merchant_id = v.column1 AND sandbox_charges.idempotency_key = v.column2",
        placeholders(keys.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, key) in keys {
        query = query.bind(*merchant_id).bind(key.to_string());
    }
    let mut recorded = HashMap::new();
    for row in query.fetch_all(executor).await? {
        let decline = if row.try_get::<String, _>("outcome")? == "approved" {
            None
        } else {
            Some((
                row.try_get::<Option<String>, _>("decline_code")?
                    .unwrap_or_default(),
                row.try_get::<Option<String>, _>("decline_reason")?
                    .unwrap_or_default(),
            ))
        };
        let answer = Answer {
            reference: row.try_get("reference")?,
            decline,
        };
        recorded.insert(row.try_get("idempotency_key")?, answer);
    }
    Ok(recorded)
}

/// Records each entry unless its key has an answer already, in one statement, at `now`, and
/// returns the answers then recorded for the entries' keys: the first answer for a key wins.
pub async fn record(
    tx: &mut Tx,
    entries: &[Entry<'_>],
    now: DateTime<Utc>,
) -> Result<HashMap<String, Answer>, sqlx::Error> {
    if entries.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "INSERT INTO sandbox_charges (idempotency_key, merchant_id, kind, refunded_reference, \
         token, amount, currency, outcome, decline_code, decline_reason, reference, created_at) \
         VALUES {} ON CONFLICT (idempotency_key) DO NOTHING",
        placeholders(entries.len(), 12, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for entry in entries {
        let (outcome, code, reason) = match entry.decline {
            None => ("approved", None, None),
            Some((code, reason)) => ("declined", Some(code.to_string()), Some(reason.to_string())),
        };
        query = query
            .bind(entry.key.to_string())
            .bind(entry.merchant_id)
            .bind(entry.kind)
            .bind(entry.refunded_reference.map(str::to_string))
            .bind(entry.token.to_string())
            .bind(entry.amount)
            .bind(entry.currency.to_string())
            .bind(outcome)
            .bind(code)
            .bind(reason)
            .bind(entry.reference.clone())
            .bind(to_micros(now));
    }
    query.execute(&mut **tx).await?;
    let keys: Vec<(i64, &str)> = entries.iter().map(|e| (e.merchant_id, e.key)).collect();
    answers(&mut **tx, &keys).await
}

/// The merchant's charge `reference`, if the ledger holds it, locked for the refund being decided
/// (PostgreSQL), and how much of it approved refunds gave back already.
pub async fn refundable(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    reference: &str,
) -> Result<(Option<Refundable>, i64), sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let original = sqlx::query(&format!(
        "SELECT token, amount, currency, outcome FROM sandbox_charges \
         WHERE reference = $1 AND merchant_id = $2 AND kind = 'charge'{lock}"
    ))
    .bind(reference)
    .bind(merchant_id)
    .fetch_optional(&mut **tx)
    .await?;
    let refunded: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM sandbox_charges WHERE kind = 'refund' \
         AND refunded_reference = $1 AND merchant_id = $2 AND outcome = 'approved'",
    )
    .bind(reference)
    .bind(merchant_id)
    .fetch_one(&mut **tx)
    .await?;
    let original = original
        .map(|row| {
            Ok::<_, sqlx::Error>(Refundable {
                token: row.try_get("token")?,
                amount: row.try_get("amount")?,
                currency: row.try_get("currency")?,
                approved: row.try_get::<String, _>("outcome")? == "approved",
            })
        })
        .transpose()?;
    Ok((original, refunded))
}

/// Puts a card in the vault: `token` of the merchant, behaving as `behaviour` (its stored name).
pub async fn insert_card(
    store: &Store,
    token: &str,
    merchant_id: i64,
    behaviour: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO sandbox_cards (token, merchant_id, behaviour, created_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(token)
    .bind(merchant_id)
    .bind(behaviour)
    .bind(to_micros(now))
    .execute(store.writer())
    .await?;
    Ok(())
}

/// The stored behaviours of the cards with these `(merchant id, token)` pairs.
pub async fn behaviours(
    store: &Store,
    cards: &[(i64, &str)],
) -> Result<HashMap<(i64, String), String>, sqlx::Error> {
    let sql = format!(
        "SELECT merchant_id, token, behaviour FROM sandbox_cards JOIN (VALUES {}) AS v \
         ON sandbox_cards.merchant_id = v.column1 AND sandbox_cards.token = v.column2",
        placeholders(cards.len(), 2, 1)
    );
    let sql = super::for_backend(sql, store.backend());
    let mut query = sqlx::query_as::<_, (i64, String, String)>(&sql);
    for (merchant_id, token) in cards {
        query = query.bind(*merchant_id).bind(token.to_string());
    }
    Ok(query
        .fetch_all(store.pool())
        .await?
        .into_iter()
        .map(|(merchant_id, token, behaviour)| ((merchant_id, token), behaviour))
        .collect())
}
