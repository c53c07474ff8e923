//! The `payment_processors` table: processor instances offered in a merchant's cashier.

use chrono::{DateTime, Utc};

use super::{to_micros, Backend, Tx};

/// The first id a connected processor gets; the sandbox set holds 101–202.
pub const FIRST_CONNECTED_ID: i64 = 301;

/// Card gateway or alternative payment method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessorKind {
    /// Takes card numbers; card gateways cascade on soft declines.
    Card,
    /// Wallets, bank transfers and other non-card methods.
    Alternative,
}

impl ProcessorKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessorKind::Card => "card",
            ProcessorKind::Alternative => "alternative",
        }
    }
}

/// One processor instance of a merchant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentProcessor {
    /// `PaymentProcessorId` in notifications; unique per merchant.
    pub processor_id: i64,
    /// `PaymentProcessorKey` (UUID) in cascading attempts.
    pub processor_key: String,
    /// `PaymentProcessor` name shown in the cashier and notifications.
    pub name: String,
    /// Card or alternative.
    pub kind: ProcessorKind,
}

/// The sandbox set every merchant starts with: (id, name, kind), in cascade order.
pub const SANDBOX_PROCESSORS: [(i64, &str, ProcessorKind); 4] = [
    (101, "Sandbox Card Gateway A", ProcessorKind::Card),
    (102, "Sandbox Card Gateway B", ProcessorKind::Card),
    (201, "Sandbox E-Wallet", ProcessorKind::Alternative),
    (202, "Sandbox Bank Transfer", ProcessorKind::Alternative),
];

/// Gives a new merchant the sandbox processor set.
pub async fn insert_sandbox_set(tx: &mut Tx, merchant_id: i64) -> Result<(), sqlx::Error> {
    for (position, (processor_id, name, kind)) in SANDBOX_PROCESSORS.iter().enumerate() {
        sqlx::query(
            "INSERT INTO payment_processors (merchant_id, processor_id, processor_key, name, kind, position) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(merchant_id)
        .bind(processor_id)
        .bind(uuid::Uuid::new_v4().hyphenated().to_string())
        .bind(*name)
        .bind(kind.as_str())
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A merchant's sandbox processors in cascade order: the ones that take card numbers and
/// alternative payments in the cashier. Connected Stripe accounts are not among them (a card
/// number never reaches recur on their route; see `stripe_accounts`).
pub async fn list<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Vec<PaymentProcessor>, sqlx::Error> {
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT processor_id, processor_key, name, kind FROM payment_processors \
         WHERE merchant_id = $1 AND connector = 'sandbox' ORDER BY position",
    )
    .bind(merchant_id)
    .fetch_all(executor)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(processor_id, processor_key, name, kind)| PaymentProcessor {
                processor_id,
                processor_key,
                name,
                kind: if kind == "card" {
                    ProcessorKind::Card
                } else {
                    ProcessorKind::Alternative
                },
            },
        )
        .collect())
}

/// The merchant's first card processor in cascade order: the one its subscription charges and
/// their refunds are reported under.
pub async fn first_card<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Option<PaymentProcessor>, sqlx::Error> {
    Ok(list(executor, merchant_id)
        .await?
        .into_iter()
        .find(|p| p.kind == ProcessorKind::Card))
}

/// Where a connected processor's payments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// A Stripe account (DESIGN §17).
    Stripe,
    /// SEPA Direct Debit collection files for the merchant's bank (DESIGN §18).
    Sepa,
}

impl Connector {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Connector::Stripe => "stripe",
            Connector::Sepa => "sepa",
        }
    }

    /// The stored `kind` of its processors: a Stripe account takes cards, a SEPA processor
    /// debits bank accounts under mandates.
    fn kind(self) -> &'static str {
        match self {
            Connector::Stripe => "card",
            Connector::Sepa => "debit",
        }
    }
}

/// A connected processor's row to add to the merchant's set.
#[derive(Debug)]
pub struct Connected<'a> {
    /// Stripe or SEPA.
    pub connector: Connector,
    /// Its name.
    pub name: &'a str,
    /// How many of this connector a merchant may hold.
    pub max_held: i64,
}

/// Adds `connected` to the merchant's set under the next processor id no connected processor
/// of any merchant holds (Stripe's webhooks name an account by it), after the merchant's other
/// processors in cascade order; `None` when the merchant holds `max_held` of its connector
/// already. Two merchants connecting at once may pick one id: the unique index refuses the
/// second, which is to try again ([`super::retry_unique`]).
pub async fn insert_connected(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    connected: &Connected<'_>,
    now: DateTime<Utc>,
) -> Result<Option<i64>, sqlx::Error> {
    super::lock_merchant(tx, backend, merchant_id).await?;
    let (held, last_position): (i64, Option<i64>) = sqlx::query_as(
        "SELECT COUNT(*) FILTER (WHERE connector = $2), MAX(position) \
         FROM payment_processors WHERE merchant_id = $1",
    )
    .bind(merchant_id)
    .bind(connected.connector.as_str())
    .fetch_one(&mut **tx)
    .await?;
    if held >= connected.max_held {
        return Ok(None);
    }
    let last_id: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(processor_id) FROM payment_processors WHERE connector <> 'sandbox'",
    )
    .fetch_one(&mut **tx)
    .await?;
    let processor_id = last_id.map_or(FIRST_CONNECTED_ID, |id| (id + 1).max(FIRST_CONNECTED_ID));
    sqlx::query(
        "INSERT INTO payment_processors (merchant_id, processor_id, processor_key, name, kind, \
         position, connector, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(uuid::Uuid::new_v4().hyphenated().to_string())
    .bind(connected.name)
    .bind(connected.connector.kind())
    .bind(last_position.unwrap_or(0) + 1)
    .bind(connected.connector.as_str())
    .bind(to_micros(now))
    .execute(&mut **tx)
    .await?;
    Ok(Some(processor_id))
}

/// Whether a connected processor could be removed.
#[derive(Debug, PartialEq, Eq)]
pub enum Removal {
    /// It was removed.
    Removed,
    /// The merchant has no such processor.
    NotFound,
    /// A payment method it holds (a card, a mandate) is still some customer's, or a payment
    /// waits on it.
    InUse,
}

/// Whether a payment method the merchant's processor `processor_id` holds is still some
/// customer's.
pub async fn holds_payment_methods(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
) -> Result<bool, sqlx::Error> {
    let in_use: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM payment_methods WHERE merchant_id = $1 AND processor_id = $2 \
         AND detached_at IS NULL LIMIT 1",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(in_use.is_some())
}
