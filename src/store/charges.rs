//! The `charges` table: every attempt to take money for an invoice. An attempt is written
//! `Pending` (with the idempotency key the processor receives) and committed *before* the
//! processor is called; the answer is recorded in a second transaction. An attempt left
//! `Pending` by a crash is completed later by asking the processor again with the same key.
//!
//! A membership has at most one attempt in flight (`Pending`): the unique index
//! `charges_in_flight` refuses a second, so two requests, workers or processes can never charge
//! one membership twice at once, whichever path they come by.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use recur_domain::membership::{ChargeDirective, RecurringAttempt};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, transaction_ids, Tx};

/// Why money is being taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeKind {
    /// The first payment (checkout, or the sandbox pay helper).
    First,
    /// A period's renewal charge.
    Renewal,
    /// A dunning retry of an open renewal invoice.
    Retry,
    /// A mid-period plan change.
    Proration,
    /// The customer pays a PastDue or Unpaid membership's open invoice on a checkout page.
    PayNow,
    /// The final invoice of a membership that ended: its last period's usage (DESIGN §19).
    Final,
}

impl ChargeKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeKind::First => "first",
            ChargeKind::Renewal => "renewal",
            ChargeKind::Retry => "retry",
            ChargeKind::Proration => "proration",
            ChargeKind::PayNow => "pay_now",
            ChargeKind::Final => "final",
        }
    }

    fn from_db(text: &str) -> ChargeKind {
        match text {
            "first" => ChargeKind::First,
            "retry" => ChargeKind::Retry,
            "proration" => ChargeKind::Proration,
            "pay_now" => ChargeKind::PayNow,
            "final" => ChargeKind::Final,
            _ => ChargeKind::Renewal,
        }
    }

    /// Whether the attempt is a recurring one (consumes a `chargeEmitterQueue` item).
    pub fn is_recurring(self) -> bool {
        matches!(self, ChargeKind::Renewal | ChargeKind::Retry)
    }
}

impl From<RecurringAttempt> for ChargeKind {
    fn from(attempt: RecurringAttempt) -> Self {
        match attempt {
            RecurringAttempt::Renewal => ChargeKind::Renewal,
            RecurringAttempt::Retry => ChargeKind::Retry,
        }
    }
}

/// Outcome of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeStatus {
    /// Written, processor not yet answered (or the answer not yet recorded).
    Pending,
    /// Money taken.
    Success,
    /// Declined by the processor.
    Rejected,
}

impl ChargeStatus {
    /// The name in the database and in notifications.
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeStatus::Pending => "Pending",
            ChargeStatus::Success => "Success",
            ChargeStatus::Rejected => "Rejected",
        }
    }

    fn from_db(text: &str) -> ChargeStatus {
        match text {
            "Success" => ChargeStatus::Success,
            "Pending" => ChargeStatus::Pending,
            _ => ChargeStatus::Rejected,
        }
    }
}

/// Where the customer paid in person: a hosted checkout page (first payment or pay-now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagePayment {
    /// `CascadingInfo.SessionId`: the UUID of the checkout session
    /// ([`crate::ids::named_uuid`] of its `cs_…` key), the same for every attempt on that link.
    pub session_id: String,
    /// `ClientIP`: the customer's address as the page saw it.
    pub client_ip: String,
}

/// A stored charge attempt.
#[derive(Debug, Clone)]
pub struct Charge {
    /// Internal id: the notification's `TransactionId`.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// The membership billed.
    pub membership_id: i64,
    /// The invoice paid.
    pub invoice_id: i64,
    /// Sent to the processor.
    pub idempotency_key: String,
    /// Why.
    pub kind: ChargeKind,
    /// The sandbox outcome of a recurring attempt (its `chargeEmitterQueue` item, or success
    /// past the queue's end); `None` for attempts the card decides.
    pub directive: Option<ChargeDirective>,
    /// Amount in minor units.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// The card charged.
    pub payment_method_id: i64,
    /// Outcome so far.
    pub status: ChargeStatus,
    /// Processor's decline code.
    pub decline_code: Option<String>,
    /// Processor's decline text.
    pub decline_reason: Option<String>,
    /// Processor's transaction reference.
    pub processor_reference: Option<String>,
    /// For proration charges: the change to apply once the charge succeeds (JSON).
    pub pending_update: Option<String>,
    /// The checkout page it was made on; `None` for attempts the engine or the API starts.
    pub page: Option<PagePayment>,
    /// When the attempt was written.
    pub created_at: DateTime<Utc>,
    /// When the answer was recorded.
    pub completed_at: Option<DateTime<Utc>>,
}

/// A new attempt.
#[derive(Debug, Clone)]
pub struct NewCharge<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The membership billed.
    pub membership_id: i64,
    /// The invoice paid.
    pub invoice_id: i64,
    /// Unique; sent to the processor.
    pub idempotency_key: String,
    /// Why.
    pub kind: ChargeKind,
    /// Ordinal among the membership's recurring attempts.
    pub recurring_ordinal: Option<i64>,
    /// The sandbox outcome of a recurring attempt; `None` for attempts the card decides.
    pub directive: Option<&'a ChargeDirective>,
    /// Amount in minor units.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: &'a str,
    /// The card charged.
    pub payment_method_id: i64,
    /// Change to apply on success (proration).
    pub pending_update: Option<String>,
    /// The checkout page it is made on.
    pub page: Option<PagePayment>,
}

const COLUMNS: &str = "id, merchant_id, membership_id, invoice_id, idempotency_key, kind, \
    directive, amount, currency, payment_method_id, status, decline_code, decline_reason, \
    processor_reference, pending_update, page_session_id, client_ip, created_at, completed_at";

/// [`COLUMNS`] qualified by the table, for the `RETURNING` of an `UPDATE … FROM`.
static QUALIFIED_COLUMNS: LazyLock<String> =
    LazyLock::new(|| super::qualified(COLUMNS, "charges", None));

fn decode(row: &AnyRow) -> Result<Charge, sqlx::Error> {
    let directive: Option<String> = row.try_get("directive")?;
    let page_session_id: Option<String> = row.try_get("page_session_id")?;
    let client_ip: Option<String> = row.try_get("client_ip")?;
    Ok(Charge {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        membership_id: row.try_get("membership_id")?,
        invoice_id: row.try_get("invoice_id")?,
        idempotency_key: row.try_get("idempotency_key")?,
        kind: ChargeKind::from_db(&row.try_get::<String, _>("kind")?),
        directive: directive
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        amount: row.try_get("amount")?,
        currency: row.try_get("currency")?,
        payment_method_id: row.try_get("payment_method_id")?,
        status: ChargeStatus::from_db(&row.try_get::<String, _>("status")?),
        decline_code: row.try_get("decline_code")?,
        decline_reason: row.try_get("decline_reason")?,
        processor_reference: row.try_get("processor_reference")?,
        pending_update: row.try_get("pending_update")?,
        page: page_session_id
            .zip(client_ip)
            .map(|(session_id, client_ip)| PagePayment {
                session_id,
                client_ip,
            }),
        created_at: from_micros(row.try_get("created_at")?),
        completed_at: row
            .try_get::<Option<i64>, _>("completed_at")?
            .map(from_micros),
    })
}

/// Writes a Pending attempt; `None` when its membership already has one in flight.
pub async fn insert_pending(
    tx: &mut Tx,
    new: NewCharge<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Charge>, sqlx::Error> {
    Ok(insert_pending_many(tx, &[new], now).await?.pop())
}

/// Writes Pending attempts in one statement, returned in no particular order. An attempt whose
/// membership already has one in flight is not written (and not returned).
pub async fn insert_pending_many(
    tx: &mut Tx,
    new: &[NewCharge<'_>],
    now: DateTime<Utc>,
) -> Result<Vec<Charge>, sqlx::Error> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO charges (id, merchant_id, membership_id, invoice_id, idempotency_key, kind, \
         recurring_ordinal, directive, amount, currency, payment_method_id, status, \
         pending_update, page_session_id, client_ip, created_at) VALUES {} \
         ON CONFLICT (membership_id) WHERE status = 'Pending' DO NOTHING RETURNING {COLUMNS}",
        transaction_ids::values_with_ids(tx, new.len(), 15, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for charge in new {
        let directive = charge
            .directive
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        query = query
            .bind(charge.merchant_id)
            .bind(charge.membership_id)
            .bind(charge.invoice_id)
            .bind(charge.idempotency_key.clone())
            .bind(charge.kind.as_str())
            .bind(charge.recurring_ordinal)
            .bind(directive)
            .bind(charge.amount)
            .bind(charge.currency.to_string())
            .bind(charge.payment_method_id)
            .bind(ChargeStatus::Pending.as_str())
            .bind(charge.pending_update.clone())
            .bind(charge.page.as_ref().map(|p| p.session_id.clone()))
            .bind(charge.page.as_ref().map(|p| p.client_ip.clone()))
            .bind(to_micros(now));
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode).collect()
}

/// The processor's answer to one Pending attempt.
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    /// The attempt.
    pub id: i64,
    /// Success or Rejected.
    pub status: ChargeStatus,
    /// The processor's reference.
    pub reference: &'a str,
    /// Code and reason of a decline.
    pub decline: Option<(&'a str, &'a str)>,
}

/// Records the processor's answers on Pending attempts in one statement. Returns the attempts
/// that were still Pending (in no particular order): one missing was answered by another
/// process first.
pub async fn complete_many(
    tx: &mut Tx,
    completions: &[Completion<'_>],
    now: DateTime<Utc>,
) -> Result<Vec<Charge>, sqlx::Error> {
    if completions.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "UPDATE charges SET status = v.column2, processor_reference = v.column3, \
         decline_code = v.column4, decline_reason = v.column5, completed_at = $1 \
         FROM (VALUES {}) AS v WHERE charges.id = v.column1 AND charges.status = 'Pending' \
         RETURNING {}",
        super::placeholders(completions.len(), 5, 2),
        *QUALIFIED_COLUMNS
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for completion in completions {
        query = query
            .bind(completion.id)
            .bind(completion.status.as_str())
            .bind(completion.reference.to_string())
            .bind(completion.decline.map(|d| d.0.to_string()))
            .bind(completion.decline.map(|d| d.1.to_string()));
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode).collect()
}

/// The merchant's attempt with this idempotency key, if any.
pub async fn by_idempotency_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    key: &str,
) -> Result<Option<Charge>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM charges WHERE merchant_id = $1 AND idempotency_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Pending attempts written at or before `before`, oldest first: of one merchant, or of all.
/// An attempt awaiting its customer's authentication (it has a processor reference while
/// `Pending`) counts only once written at or before `awaiting_before`; a SEPA debit (it waits
/// for its collection file) never does.
pub async fn pending<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: Option<i64>,
    before: DateTime<Utc>,
    awaiting_before: DateTime<Utc>,
) -> Result<Vec<Charge>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM charges WHERE status = 'Pending' AND created_at <= $1 \
         AND ($2 = 0 OR merchant_id = $2) \
         AND (processor_reference IS NULL OR created_at <= $3) \
         AND NOT EXISTS (SELECT 1 FROM sepa_debits d WHERE d.charge_id = charges.id) \
         ORDER BY id LIMIT 100"
    );
    let rows = sqlx::query(&sql)
        .bind(to_micros(before))
        .bind(merchant_id.unwrap_or(0))
        .bind(to_micros(awaiting_before))
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// Notes on the `Pending` attempt `charge` the processor's reference of what awaits its
/// customer's authentication (a PaymentIntent).
pub async fn await_authentication<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    charge: &Charge,
    reference: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE charges SET processor_reference = $1 \
         WHERE id = $2 AND merchant_id = $3 AND status = 'Pending'",
    )
    .bind(reference)
    .bind(charge.id)
    .bind(charge.merchant_id)
    .execute(executor)
    .await?;
    Ok(())
}

/// The membership's attempt in flight (`Pending`), if it has one.
pub async fn pending_for_membership<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    membership_id: i64,
) -> Result<Option<Charge>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM charges \
         WHERE membership_id = $1 AND merchant_id = $2 AND status = 'Pending'"
    );
    let row = sqlx::query(&sql)
        .bind(membership_id)
        .bind(merchant_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The approved attempt that paid invoice `invoice_id`, if one did (a charge fully covered by
/// credit has none).
pub async fn approved_for_invoice<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    invoice_id: i64,
) -> Result<Option<Charge>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM charges WHERE invoice_id = $1 AND status = 'Success' \
         ORDER BY id DESC LIMIT 1"
    );
    let row = sqlx::query(&sql)
        .bind(invoice_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// How many attempts an invoice has had.
pub async fn attempts_for_invoice(tx: &mut Tx, invoice_id: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM charges WHERE invoice_id = $1")
        .bind(invoice_id)
        .fetch_one(&mut **tx)
        .await
}

/// Whether the membership has an attempt in flight (`Pending`), read under its row lock.
pub async fn in_flight(tx: &mut Tx, membership_id: i64) -> Result<bool, sqlx::Error> {
    let found: Option<i32> = sqlx::query_scalar(
        "SELECT 1 FROM charges WHERE membership_id = $1 AND status = 'Pending' LIMIT 1",
    )
    .bind(membership_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(found.is_some())
}

/// The attempts with these `(merchant id, id)` pairs, in id order.
pub async fn get_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<Vec<Charge>, sqlx::Error> {
    let rows = super::rows_by_ids(executor, "charges", &QUALIFIED_COLUMNS, ids).await?;
    let mut charges = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    charges.sort_by_key(|c| c.id);
    Ok(charges)
}

/// Turns the merchant's attempt `id`, `Pending` or `Success`, into `Rejected` with this
/// decline (a SEPA debit the bank returned); the attempt as changed, `None` when it was
/// neither.
pub async fn reverse(
    tx: &mut Tx,
    merchant_id: i64,
    id: i64,
    decline: (&str, &str),
    now: DateTime<Utc>,
) -> Result<Option<Charge>, sqlx::Error> {
    let sql = format!(
        "UPDATE charges SET status = 'Rejected', decline_code = $3, decline_reason = $4, \
         completed_at = $5 WHERE merchant_id = $1 AND id = $2 \
         AND status IN ('Pending', 'Success') RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .bind(decline.0)
        .bind(decline.1)
        .bind(to_micros(now))
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}
