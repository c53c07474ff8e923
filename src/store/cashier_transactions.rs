//! The `cashier_transactions` table: pay-ins, payouts and refunds of hosted-payment-page orders,
//! each with the attempts of its card cascade.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, is_unique_violation, to_micros, Tx};

/// `TransactionType` of the notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionKind {
    /// The customer paid.
    PayIn,
    /// The customer received money on their card.
    PayOut,
    /// (Part of) a pay-in went back.
    Refund,
}

impl TransactionKind {
    /// The stored and notified name.
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionKind::PayIn => "PayIn",
            TransactionKind::PayOut => "PayOut",
            TransactionKind::Refund => "Refund",
        }
    }

    fn from_db(text: &str) -> Self {
        match text {
            "PayOut" => TransactionKind::PayOut,
            "Refund" => TransactionKind::Refund,
            _ => TransactionKind::PayIn,
        }
    }
}

/// `TransactionStatus` of the notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    /// The money moved.
    Success,
    /// The processor declined.
    Rejected,
    /// The processor could not be asked (an error, not an answer).
    Failed,
}

impl TransactionStatus {
    /// The stored and notified name.
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionStatus::Success => "Success",
            TransactionStatus::Rejected => "Rejected",
            TransactionStatus::Failed => "Failed",
        }
    }

    fn from_db(text: &str) -> Self {
        match text {
            "Success" => TransactionStatus::Success,
            "Rejected" => TransactionStatus::Rejected,
            _ => TransactionStatus::Failed,
        }
    }
}

/// The card of a transaction as recur may keep it: the processor's token and what is safe to
/// show, never the number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardFacts {
    /// The processor's token.
    pub token: String,
    /// `CardType` name (`Visa`, `MasterCard`, …).
    pub brand: String,
    /// First six digits.
    pub bin: String,
    /// Last four digits.
    pub last4: String,
    /// Keyed fingerprint of the number.
    pub fingerprint: String,
    /// `credit`, `debit` or `prepaid`, when the BIN lookup knows.
    pub bin_type: Option<String>,
    /// Issuing bank, when known.
    pub issuer: Option<String>,
    /// Issuing country, when known.
    pub country: Option<String>,
}

impl CardFacts {
    /// `424242******4242`.
    pub fn masked_pan(&self) -> String {
        format!("{}******{}", self.bin, self.last4)
    }
}

/// One processor attempt of a cascade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// `PaymentProcessorId`.
    pub processor_id: i64,
    /// `PaymentProcessorKey`.
    pub processor_key: String,
    /// `PaymentSystem`.
    pub processor_name: String,
    /// The processor's reference of the attempt (empty when it could not be asked).
    pub reference: String,
    /// Decline code, when declined.
    pub decline_code: Option<String>,
    /// Decline text, when declined or failed.
    pub decline_reason: Option<String>,
    /// `Success`, `Rejected` or `Failed`.
    pub status: String,
    /// When the processor answered.
    pub at: DateTime<Utc>,
}

/// A transaction to record.
#[derive(Debug, Clone)]
pub struct NewTransaction<'a> {
    /// Owner.
    pub merchant_id: i64,
    /// The cashier session of the order (a refund's or payout's: the paying session's).
    pub session_id: i64,
    /// The merchant's order id.
    pub order_id: &'a str,
    /// The processor idempotency key of the final attempt's operation; unique.
    pub idempotency_key: &'a str,
    /// Pay-in, payout or refund.
    pub kind: TransactionKind,
    /// Outcome.
    pub status: TransactionStatus,
    /// Amount processed, minor units.
    pub amount: i64,
    /// The order's price (`InitialAmount`), minor units.
    pub initial_amount: i64,
    /// ISO 4217.
    pub currency: &'a str,
    /// The processor of the final attempt.
    pub processor_id: i64,
    /// Its reference.
    pub external_id: Option<&'a str>,
    /// Decline code of the final attempt.
    pub decline_code: Option<&'a str>,
    /// Decline text of the final attempt.
    pub decline_reason: Option<&'a str>,
    /// The card, for card transactions.
    pub card: Option<&'a CardFacts>,
    /// The customer's address, when they were present.
    pub client_ip: Option<&'a str>,
    /// `CascadingInfo.SessionId`.
    pub cascade_id: &'a str,
    /// Every attempt, in order.
    pub attempts: &'a [Attempt],
    /// The pay-in refunded, or the rejected transaction retried.
    pub parent_id: Option<i64>,
    /// A provider-started retry.
    pub retried: bool,
}

/// A recorded transaction.
#[derive(Debug, Clone)]
pub struct CashierTransaction {
    /// `TransactionId`.
    pub id: i64,
    /// Owner.
    pub merchant_id: i64,
    /// The order's cashier session.
    pub session_id: i64,
    /// Merchant order id.
    pub order_id: String,
    /// Pay-in, payout or refund.
    pub kind: TransactionKind,
    /// Outcome.
    pub status: TransactionStatus,
    /// Amount processed, minor units.
    pub amount: i64,
    /// The order's price, minor units.
    pub initial_amount: i64,
    /// ISO 4217.
    pub currency: String,
    /// The final attempt's processor.
    pub processor_id: i64,
    /// Its reference.
    pub external_id: Option<String>,
    /// Decline code.
    pub decline_code: Option<String>,
    /// Decline text.
    pub decline_reason: Option<String>,
    /// The card, for card transactions.
    pub card: Option<CardFacts>,
    /// The customer's address.
    pub client_ip: Option<String>,
    /// Cascade id.
    pub cascade_id: String,
    /// Every attempt.
    pub attempts: Vec<Attempt>,
    /// Refunded pay-in or retried transaction.
    pub parent_id: Option<i64>,
    /// A provider-started retry.
    pub retried: bool,
    /// When it was recorded.
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, merchant_id, session_id, order_id, kind, status, amount, \
    initial_amount, currency, processor_id, external_id, decline_code, decline_reason, card_token, \
    card_brand, card_bin, card_last4, card_fingerprint, bin_type, card_issuer, card_country, \
    client_ip, cascade_id, attempts, parent_id, retried, created_at";

fn from_row(row: &AnyRow) -> Result<CashierTransaction, sqlx::Error> {
    let token: Option<String> = row.try_get("card_token")?;
    let text = |name: &str| -> Result<String, sqlx::Error> {
        Ok(row.try_get::<Option<String>, _>(name)?.unwrap_or_default())
    };
    let card = match token {
        Some(token) => Some(CardFacts {
            token,
            brand: text("card_brand")?,
            bin: text("card_bin")?,
            last4: text("card_last4")?,
            fingerprint: text("card_fingerprint")?,
            bin_type: row.try_get("bin_type")?,
            issuer: row.try_get("card_issuer")?,
            country: row.try_get("card_country")?,
        }),
        None => None,
    };
    let attempts: String = row.try_get("attempts")?;
    Ok(CashierTransaction {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        session_id: row.try_get("session_id")?,
        order_id: row.try_get("order_id")?,
        kind: TransactionKind::from_db(&row.try_get::<String, _>("kind")?),
        status: TransactionStatus::from_db(&row.try_get::<String, _>("status")?),
        amount: row.try_get("amount")?,
        initial_amount: row.try_get("initial_amount")?,
        currency: row.try_get("currency")?,
        processor_id: row.try_get("processor_id")?,
        external_id: row.try_get("external_id")?,
        decline_code: row.try_get("decline_code")?,
        decline_reason: row.try_get("decline_reason")?,
        card,
        client_ip: row.try_get("client_ip")?,
        cascade_id: row.try_get("cascade_id")?,
        attempts: serde_json::from_str(&attempts).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        parent_id: row.try_get("parent_id")?,
        retried: row.try_get::<i64, _>("retried")? != 0,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Records a transaction and returns its id; `None` when a transaction with the same
/// idempotency key exists (a concurrent request recorded the same processor operation).
pub async fn insert(
    tx: &mut Tx,
    new: &NewTransaction<'_>,
    now: DateTime<Utc>,
) -> Result<Option<i64>, sqlx::Error> {
    let attempts =
        serde_json::to_string(new.attempts).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let card = new.card;
    let sql = format!(
        "INSERT INTO cashier_transactions (id, merchant_id, session_id, order_id, \
         idempotency_key, kind, status, amount, initial_amount, currency, processor_id, \
         external_id, decline_code, decline_reason, card_token, card_brand, card_bin, card_last4, \
         card_fingerprint, bin_type, card_issuer, card_country, client_ip, cascade_id, attempts, \
         parent_id, retried, created_at) VALUES {} RETURNING id",
        super::transaction_ids::values_with_ids(tx, 1, 27, 1)
    );
    let result = sqlx::query_scalar(&sql)
        .bind(new.merchant_id)
        .bind(new.session_id)
        .bind(new.order_id)
        .bind(new.idempotency_key)
        .bind(new.kind.as_str())
        .bind(new.status.as_str())
        .bind(new.amount)
        .bind(new.initial_amount)
        .bind(new.currency)
        .bind(new.processor_id)
        .bind(new.external_id)
        .bind(new.decline_code)
        .bind(new.decline_reason)
        .bind(card.map(|c| c.token.as_str()))
        .bind(card.map(|c| c.brand.as_str()))
        .bind(card.map(|c| c.bin.as_str()))
        .bind(card.map(|c| c.last4.as_str()))
        .bind(card.map(|c| c.fingerprint.as_str()))
        .bind(card.and_then(|c| c.bin_type.as_deref()))
        .bind(card.and_then(|c| c.issuer.as_deref()))
        .bind(card.and_then(|c| c.country.as_deref()))
        .bind(new.client_ip)
        .bind(new.cascade_id)
        .bind(attempts)
        .bind(new.parent_id)
        .bind(i64::from(new.retried))
        .bind(to_micros(now))
        .fetch_one(&mut **tx)
        .await;
    match result {
        Ok(id) => Ok(Some(id)),
        Err(e) if is_unique_violation(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The transaction `id` of `merchant_id`.
pub async fn by_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<CashierTransaction>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM cashier_transactions WHERE merchant_id = $1 AND id = $2"
    ))
    .bind(merchant_id)
    .bind(id)
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// The order's newest transaction of `kind`, or of any kind when `kind` is `None`.
pub async fn latest<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    order_id: &str,
    kind: Option<TransactionKind>,
) -> Result<Option<CashierTransaction>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM cashier_transactions WHERE merchant_id = $1 AND order_id = $2 \
         AND ($3 IS NULL OR kind = $3) ORDER BY id DESC LIMIT 1"
    ))
    .bind(merchant_id)
    .bind(order_id)
    .bind(kind.map(TransactionKind::as_str))
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// The order's newest successful transaction of `kind`.
pub async fn latest_success<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    order_id: &str,
    kind: TransactionKind,
) -> Result<Option<CashierTransaction>, sqlx::Error> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM cashier_transactions WHERE merchant_id = $1 AND order_id = $2 \
         AND kind = $3 AND status = 'Success' ORDER BY id DESC LIMIT 1"
    ))
    .bind(merchant_id)
    .bind(order_id)
    .bind(kind.as_str())
    .fetch_optional(executor)
    .await?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// How many transactions a session has recorded (numbers the next attempt's idempotency key).
pub async fn count_for_session<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    session_id: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM cashier_transactions WHERE session_id = $1")
        .bind(session_id)
        .fetch_one(executor)
        .await
}

/// Transactions of the order of `kind` (payout numbering).
pub async fn count_of_kind<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    order_id: &str,
    kind: TransactionKind,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM cashier_transactions WHERE merchant_id = $1 AND order_id = $2 \
         AND kind = $3",
    )
    .bind(merchant_id)
    .bind(order_id)
    .bind(kind.as_str())
    .fetch_one(executor)
    .await
}
