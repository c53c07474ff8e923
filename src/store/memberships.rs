//! The `memberships` table. Every query is scoped by merchant id, or by a membership id that was
//! read under one.
//!
//! The engine changes a membership by locking its row ([`lock`]), changing the struct in memory
//! and writing it back with [`save`], which also checks the row's `version`: a write based on a
//! stale read fails instead of overwriting someone else's change.

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType, Period};
use recur_domain::membership::ChargeDirective;
use recur_domain::money::Currency;
use recur_domain::price::Price;
use recur_domain::status::MembershipStatus;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use futures_util::future::BoxFuture;

use super::coalesce::{Batch, Statements};
use super::customers::Created;
use super::invoices::{self, Invoice, RECENT_INVOICES};
use super::{from_micros, to_micros, Backend, Pool, Store, Tx};

/// A membership as stored.
#[derive(Debug, Clone)]
pub struct Membership {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// Owning customer's internal id.
    pub customer_id: i64,
    /// Owning customer's key.
    pub customer_key: String,
    /// Public key, `mmbrshp_…`.
    pub membership_key: String,
    /// `productInfo.orderId`, unique per customer.
    pub order_id: String,
    /// `productInfo.description`.
    pub order_description: Option<String>,
    /// `subscriptionName`.
    pub subscription_name: String,
    /// Merchant's free-form string.
    pub metadata: Option<String>,
    /// Where events are posted.
    pub webhook_url: String,
    /// Where the customer is sent after an update or checkout.
    pub return_to_website_link: Option<String>,
    /// No cycle starts at or after this instant.
    pub end_date: Option<DateTime<Utc>>,
    /// ISO 4217 code.
    pub currency: String,
    /// `totalAmount` in minor units: the price per period.
    pub total_amount: i64,
    /// `pricePerUnit` in minor units, when given.
    pub price_per_unit: Option<i64>,
    /// `quantity`, when given.
    pub quantity: Option<i64>,
    /// Daily, Weekly, Monthly or Annually.
    pub interval_type: IntervalType,
    /// Units of `interval_type` per cycle.
    pub interval_count: u32,
    /// Forced outcomes of recurring attempts (sandbox testing).
    pub charge_emitter_queue: Option<Vec<ChargeDirective>>,
    /// Recurring charge attempts made so far (the queue's position).
    pub recurring_attempts: i64,
    /// Lifecycle status.
    pub status: MembershipStatus,
    /// Current billing period, once the first payment started it.
    pub current_period: Option<Period>,
    /// Credit in minor units, applied first at every charge.
    pub credit_balance: i64,
    /// When the renewal charge that started dunning failed.
    pub dunning_failed_at: Option<DateTime<Utc>>,
    /// Dunning retries made since then.
    pub dunning_retries: i64,
    /// When the engine must next look at this membership; `None` when nothing is scheduled.
    pub next_action_at: Option<DateTime<Utc>>,
    /// Optimistic-concurrency counter, bumped by every [`save`].
    pub version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When it was canceled.
    pub canceled_at: Option<DateTime<Utc>>,
}

impl Membership {
    /// The plan's price: `totalAmount` per period, with the parts it was given as.
    pub fn price(&self) -> Price {
        Price {
            total: self.total_amount,
            per_unit: self.price_per_unit,
            quantity: self.quantity,
        }
    }

    /// The billing cycle.
    pub fn cycle(&self) -> BillingCycle {
        BillingCycle {
            interval_type: self.interval_type,
            interval_count: self.interval_count,
        }
    }

    /// The currency (stored codes were validated on the way in).
    pub fn currency(&self) -> Currency {
        Currency::parse(&self.currency)
            .unwrap_or_else(|_| Currency::parse("USD").expect("USD is an ISO 4217 currency"))
    }
}

/// What a membership is created with, already validated. Its customer is named by key where it
/// is stored ([`insert`]), so that the customer's read can be part of the insert.
#[derive(Debug, Clone)]
pub struct NewMembership {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Fresh key.
    pub membership_key: String,
    /// `productInfo.orderId`.
    pub order_id: String,
    /// `productInfo.description`.
    pub order_description: Option<String>,
    /// `subscriptionName`.
    pub subscription_name: String,
    /// `metadata`.
    pub metadata: Option<String>,
    /// `webhookUrl`.
    pub webhook_url: String,
    /// `endDate`.
    pub end_date: Option<DateTime<Utc>>,
    /// Currency code.
    pub currency: String,
    /// `totalAmount` in minor units.
    pub total_amount: i64,
    /// `pricePerUnit` in minor units.
    pub price_per_unit: Option<i64>,
    /// `quantity`.
    pub quantity: Option<i64>,
    /// Billing cycle.
    pub cycle: BillingCycle,
    /// `chargeEmitterQueue`.
    pub charge_emitter_queue: Option<Vec<ChargeDirective>>,
}

/// When a membership is created: the merchant's time and the deadline of its first payment.
#[derive(Debug, Clone, Copy)]
pub struct CreatedAt {
    /// The merchant's current time (its test clock's, if it has one).
    pub now: DateTime<Utc>,
    /// When the membership expires unless paid (Incomplete → Expired).
    pub expires_at: DateTime<Utc>,
}

/// Which merchants [`insert`] inserts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockCondition {
    /// Any merchant: the caller read the merchant's time.
    Any,
    /// Only a merchant without a test clock, whose time is the injected clock's: the caller
    /// assumed that time without reading it.
    WithoutTestClock,
}

const COLUMNS: &str = "m.id, m.merchant_id, m.customer_id, c.customer_key, m.membership_key, \
    m.order_id, m.order_description, m.subscription_name, m.metadata, m.webhook_url, \
    m.return_to_website_link, m.end_date, m.currency, m.total_amount, m.price_per_unit, \
    m.quantity, m.interval_type, m.interval_count, m.charge_emitter_queue, m.recurring_attempts, \
    m.status, m.current_period_start, m.current_period_end, m.credit_balance, \
    m.dunning_failed_at, m.dunning_retries, m.next_action_at, m.version, m.created_at, \
    m.updated_at, m.canceled_at";

const FROM: &str = "FROM memberships m JOIN customers c ON c.id = m.customer_id";

fn decode_error(message: String) -> sqlx::Error {
    sqlx::Error::Decode(message.into())
}

fn decode(row: &AnyRow) -> Result<Membership, sqlx::Error> {
    let time = |name: &str| -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(name)?.map(from_micros))
    };
    let interval_type: String = row.try_get("interval_type")?;
    let status: String = row.try_get("status")?;
    let queue: Option<String> = row.try_get("charge_emitter_queue")?;
    let current_period = match (time("current_period_start")?, time("current_period_end")?) {
        (Some(start), Some(end)) => Some(Period { start, end }),
        _ => None,
    };
    Ok(Membership {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        customer_id: row.try_get("customer_id")?,
        customer_key: row.try_get("customer_key")?,
        membership_key: row.try_get("membership_key")?,
        order_id: row.try_get("order_id")?,
        order_description: row.try_get("order_description")?,
        subscription_name: row.try_get("subscription_name")?,
        metadata: row.try_get("metadata")?,
        webhook_url: row.try_get("webhook_url")?,
        return_to_website_link: row.try_get("return_to_website_link")?,
        end_date: time("end_date")?,
        currency: row.try_get("currency")?,
        total_amount: row.try_get("total_amount")?,
        price_per_unit: row.try_get("price_per_unit")?,
        quantity: row.try_get("quantity")?,
        interval_type: IntervalType::parse(&interval_type)
            .map_err(|e| decode_error(e.to_string()))?,
        interval_count: u32::try_from(row.try_get::<i64, _>("interval_count")?)
            .map_err(|e| decode_error(e.to_string()))?,
        charge_emitter_queue: queue
            .map(|q| serde_json::from_str(&q))
            .transpose()
            .map_err(|e| decode_error(e.to_string()))?,
        recurring_attempts: row.try_get("recurring_attempts")?,
        status: MembershipStatus::parse(&status)
            .ok_or_else(|| decode_error(format!("unknown status {status}")))?,
        current_period,
        credit_balance: row.try_get("credit_balance")?,
        dunning_failed_at: time("dunning_failed_at")?,
        dunning_retries: row.try_get("dunning_retries")?,
        next_action_at: time("next_action_at")?,
        version: row.try_get("version")?,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
        canceled_at: time("canceled_at")?,
    })
}

fn queue_json(queue: &Option<Vec<ChargeDirective>>) -> Result<Option<String>, sqlx::Error> {
    queue
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// [`COLUMNS`] as an insert returns them: unqualified, with an empty customer key (the key
/// lives on the customer; [`Insert`] fills in the one its request named).
static RETURNING: LazyLock<String> = LazyLock::new(|| {
    COLUMNS
        .replace("c.customer_key", "CAST('' AS TEXT) AS customer_key")
        .replace("m.", "")
});

/// The columns of a membership row that [`Insert`] binds, in order: merchant id, customer key,
/// the new fields, the expiry, the time, and whether a merchant on a test clock is allowed.
const INSERT_COLUMNS: usize = 19;

/// [`Insert`]'s statements.
static INSERT: Statements = Statements::new();

/// The insert of `rows` memberships: each finds its customer by key (no row when the customer
/// does not exist, or the merchant has a test clock and the row does not allow one). One row
/// takes its values from the parameters, which costs PostgreSQL less than a join with `VALUES`.
/// Its `WHERE` clause also keeps SQLite from reading `ON CONFLICT` as a join constraint.
fn insert_sql(rows: usize) -> String {
    let value = |column: usize| match rows {
        1 => format!("${column}"),
        _ => format!("v.column{column}"),
    };
    let from = match rows {
        1 => "FROM customers c WHERE c.merchant_id = $1 AND c.customer_key = $2 AND".to_owned(),
        rows => format!(
            "FROM (VALUES {}) AS v \
             JOIN customers c ON c.merchant_id = v.column1 AND c.customer_key = v.column2 WHERE",
            super::placeholders(rows, INSERT_COLUMNS, 1)
        ),
    };
    let fields = (3..=16).map(value).collect::<Vec<_>>().join(", ");
    format!(
        "INSERT INTO memberships (merchant_id, customer_id, membership_key, order_id, \
         order_description, subscription_name, metadata, webhook_url, end_date, currency, \
         total_amount, price_per_unit, quantity, interval_type, interval_count, \
         charge_emitter_queue, recurring_attempts, status, credit_balance, dunning_retries, \
         next_action_at, version, created_at, updated_at) \
         SELECT {merchant}, c.id, {fields}, 0, 'Incomplete', 0, 0, {expires}, 1, {now}, {now} \
         {from} ({any_clock} = 1 \
         OR NOT EXISTS (SELECT 1 FROM test_clocks t WHERE t.merchant_id = {merchant})) \
         ON CONFLICT (customer_id, order_id) DO NOTHING RETURNING {returning}",
        merchant = value(1),
        expires = value(17),
        now = value(18),
        any_clock = value(19),
        returning = *RETURNING
    )
}

/// A membership to insert, as [`Insert`] takes it.
#[derive(Debug)]
pub struct NewRow {
    /// Its fields.
    pub membership: NewMembership,
    /// The key of its customer, of the same merchant.
    pub customer_key: String,
    /// When it is created.
    pub at: CreatedAt,
    /// Which merchants it may be inserted for.
    pub condition: ClockCondition,
}

/// Inserts Incomplete memberships, many in one statement; answer `None` for a row whose
/// customer does not exist, that repeats an order id of its customer, or whose merchant has a
/// test clock when its [`ClockCondition`] excludes one.
#[derive(Debug)]
pub struct Insert;

impl Batch for Insert {
    type Request = NewRow;
    type Answer = Option<Membership>;

    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        _backend: Backend,
        rows: &'a [NewRow],
    ) -> BoxFuture<'a, Result<Vec<Option<Membership>>, sqlx::Error>> {
        Box::pin(async move {
            let mut query = sqlx::query(INSERT.get(rows.len(), insert_sql));
            for row in rows {
                let new = &row.membership;
                let any_clock = i64::from(row.condition == ClockCondition::Any);
                query = query
                    .bind(new.merchant_id)
                    .bind(row.customer_key.as_str())
                    .bind(new.membership_key.as_str())
                    .bind(new.order_id.as_str())
                    .bind(new.order_description.as_deref())
                    .bind(new.subscription_name.as_str())
                    .bind(new.metadata.as_deref())
                    .bind(new.webhook_url.as_str())
                    .bind(new.end_date.map(to_micros))
                    .bind(new.currency.as_str())
                    .bind(new.total_amount)
                    .bind(new.price_per_unit)
                    .bind(new.quantity)
                    .bind(new.cycle.interval_type.as_str())
                    .bind(i64::from(new.cycle.interval_count))
                    .bind(queue_json(&new.charge_emitter_queue)?)
                    .bind(to_micros(row.at.expires_at))
                    .bind(to_micros(row.at.now))
                    .bind(any_clock);
            }
            let mut inserted: HashMap<String, Membership> = HashMap::with_capacity(rows.len());
            for returned in query.fetch_all(pool).await? {
                let membership = decode(&returned)?;
                inserted.insert(membership.membership_key.clone(), membership);
            }
            Ok(rows
                .iter()
                .map(|row| {
                    let mut membership = inserted.remove(&row.membership.membership_key)?;
                    membership.customer_key.clone_from(&row.customer_key);
                    Some(membership)
                })
                .collect())
        })
    }
}

/// Stores a new Incomplete membership of the merchant's customer `customer_key`, in one
/// statement that also finds the customer (shared with concurrent creates, see
/// [`super::coalesce`]). `None` when the customer does not exist, already has a membership with
/// this order id (safe under concurrent identical creates), or — with
/// [`ClockCondition::WithoutTestClock`] — the merchant has a test clock.
pub async fn insert(
    store: &Store,
    membership: NewMembership,
    customer_key: &str,
    at: CreatedAt,
    condition: ClockCondition,
) -> Result<Option<Membership>, sqlx::Error> {
    let row = NewRow {
        membership,
        customer_key: customer_key.to_owned(),
        at,
        condition,
    };
    store.membership_inserts().run(row).await
}

/// The membership of the merchant's customer `customer_key` with this order id, if any.
pub async fn by_order<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_key: &str,
    order_id: &str,
) -> Result<Option<Membership>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE c.merchant_id = $1 AND c.customer_key = $2 \
         AND m.order_id = $3"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_key)
        .bind(order_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Stores a new Incomplete membership of the merchant's existing customer `customer_key`
/// unless the customer already has one with this order id, in which case that one is returned.
/// A new membership is one statement, an existing one a second read.
pub async fn create_or_get(
    store: &Store,
    new: NewMembership,
    customer_key: &str,
    at: CreatedAt,
) -> Result<(Membership, Created), sqlx::Error> {
    let (merchant_id, order_id) = (new.merchant_id, new.order_id.clone());
    if let Some(created) = insert(store, new, customer_key, at, ClockCondition::Any).await? {
        return Ok((created, Created::New));
    }
    let existing = by_order(store.writer(), merchant_id, customer_key, &order_id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    Ok((existing, Created::Existing))
}

/// The membership with this key, if it belongs to `merchant_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<Membership>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.membership_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The membership with this key, if it belongs to `merchant_id`, with its latest
/// [`RECENT_INVOICES`] invoices, newest first. Concurrent calls share a statement
/// ([`super::coalesce`]).
pub async fn get_with_invoices(
    store: &Store,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<(Membership, Vec<Invoice>)>, sqlx::Error> {
    store
        .membership_reads()
        .run((merchant_id, membership_key.to_owned()))
        .await
}

/// Reads memberships by merchant id and membership key with their latest invoices, many in one
/// statement on PostgreSQL and in two on SQLite.
#[derive(Debug)]
pub struct WithInvoicesByKey;

/// [`WithInvoicesByKey`] on PostgreSQL: a lateral join reads each membership's newest invoices
/// straight off `invoices_by_membership`, backwards.
static WITH_INVOICES_POSTGRES: Statements = Statements::new();

/// [`WithInvoicesByKey`] on SQLite, which has no lateral join. For one key, the CTE makes the
/// bound on invoice ids a subquery evaluated once (not per invoice row), and the join an index
/// range scan of `invoices_by_membership`; for several, the memberships alone, their invoices
/// by [`invoices::recent_many`].
static WITH_INVOICES_SQLITE: Statements = Statements::new();

/// The statement of [`WithInvoicesByKey`] for `n` keys on `backend`.
fn with_invoices_sql(backend: Backend, n: usize) -> String {
    let (keys, filter) = super::by_merchant_keys(n, "m", "membership_key");
    let invoices = &*invoices::JOINED_COLUMNS;
    match (backend, n) {
        (Backend::Postgres, _) => format!(
            "SELECT {COLUMNS}, {invoices} {FROM} {keys} LEFT JOIN LATERAL (SELECT * FROM invoices \
             WHERE membership_id = m.id ORDER BY id DESC LIMIT {RECENT_INVOICES}) i ON TRUE \
             {filter}"
        ),
        (Backend::Sqlite, 1) => format!(
            "WITH found AS (SELECT {COLUMNS} {FROM} {filter}) \
             SELECT found.*, {invoices} FROM found LEFT JOIN invoices i \
             ON i.membership_id = found.id AND i.id >= (SELECT MIN(id) FROM (SELECT id \
             FROM invoices WHERE membership_id = (SELECT id FROM found) ORDER BY id DESC \
             LIMIT {RECENT_INVOICES}) AS newest)"
        ),
        (Backend::Sqlite, _) => format!("SELECT {COLUMNS} {FROM} {keys}"),
    }
}

impl Batch for WithInvoicesByKey {
    type Request = (i64, String);
    type Answer = Option<(Membership, Vec<Invoice>)>;

    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        backend: Backend,
        keys: &'a [(i64, String)],
    ) -> BoxFuture<'a, Result<Vec<Self::Answer>, sqlx::Error>> {
        Box::pin(async move {
            let statements = match backend {
                Backend::Postgres => &WITH_INVOICES_POSTGRES,
                Backend::Sqlite => &WITH_INVOICES_SQLITE,
            };
            let sql = statements.get(keys.len(), |n| with_invoices_sql(backend, n));
            let joined = backend == Backend::Postgres || keys.len() == 1;
            let query = super::bind_merchant_keys(sqlx::query(sql), keys);
            let rows = query.fetch_all(pool).await?;
            let mut found: HashMap<(i64, String), (Membership, Vec<Invoice>)> =
                HashMap::with_capacity(keys.len());
            for row in &rows {
                let membership = decode(row)?;
                let key = (membership.merchant_id, membership.membership_key.clone());
                let (_, recent) = found.entry(key).or_insert_with(|| (membership, Vec::new()));
                if joined {
                    // Two requests for one key in a batch repeat its rows.
                    if let Some(invoice) = invoices::decode_joined(row)? {
                        if !recent.iter().any(|known| known.id == invoice.id) {
                            recent.push(invoice);
                        }
                    }
                }
            }
            if !joined && !found.is_empty() {
                let ids: Vec<i64> = found.values().map(|(m, _)| m.id).collect();
                let mut newest = invoices::recent_many(pool, &ids, RECENT_INVOICES).await?;
                for (membership, recent) in found.values_mut() {
                    *recent = newest.remove(&membership.id).unwrap_or_default();
                }
            }
            for (_, recent) in found.values_mut() {
                // Ordered here rather than by the database: a sort step on the joined rows
                // costs PostgreSQL a tenth of this statement's rate.
                recent.sort_unstable_by_key(|invoice| std::cmp::Reverse(invoice.id));
            }
            Ok(keys.iter().map(|key| found.get(key).cloned()).collect())
        })
    }
}

/// The customer's memberships, newest first.
pub async fn for_customer<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_id: i64,
) -> Result<Vec<Membership>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.customer_id = $2 ORDER BY m.id DESC"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_id)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// The membership with this internal id, if it belongs to `merchant_id`.
pub async fn by_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Membership>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Reads the membership with this key for change, locking its row until the transaction ends
/// (PostgreSQL; on SQLite the transaction already holds the database's write lock).
pub async fn lock(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<Membership>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m",
        Backend::Sqlite => "",
    };
    let sql =
        format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.membership_key = $2{lock}");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Writes back every changeable column of `m` if the row still has `m.version`, and bumps the
/// version. Returns `false` (and writes nothing) when the row changed since it was read.
pub async fn save(
    tx: &mut Tx,
    m: &mut Membership,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    save_many(tx, &mut [m], now).await
}

/// [`save`] for many memberships in one statement. Returns `false` when any row changed since
/// it was read; the caller must then roll back, as some rows may have been written.
pub async fn save_many(
    tx: &mut Tx,
    memberships: &mut [&mut Membership],
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    if memberships.is_empty() {
        return Ok(true);
    }
    const COLUMNS: usize = 21;
    let sql = format!(
        "UPDATE memberships SET subscription_name = v.column4, metadata = v.column5, \
         return_to_website_link = v.column6, end_date = v.column7, total_amount = v.column8, \
         price_per_unit = v.column9, quantity = v.column10, interval_type = v.column11, \
         interval_count = v.column12, recurring_attempts = v.column13, status = v.column14, \
         current_period_start = v.column15, current_period_end = v.column16, \
         credit_balance = v.column17, dunning_failed_at = v.column18, \
         dunning_retries = v.column19, next_action_at = v.column20, canceled_at = v.column21, \
         updated_at = $1, version = memberships.version + 1 \
         FROM (VALUES {}) AS v \
         WHERE memberships.id = v.column1 AND memberships.merchant_id = v.column2 \
         AND memberships.version = v.column3",
        super::placeholders(memberships.len(), COLUMNS, 2)
    );
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for m in memberships.iter() {
        query = query
            .bind(m.id)
            .bind(m.merchant_id)
            .bind(m.version)
            .bind(m.subscription_name.clone())
            .bind(m.metadata.clone())
            .bind(m.return_to_website_link.clone())
            .bind(m.end_date.map(to_micros))
            .bind(m.total_amount)
            .bind(m.price_per_unit)
            .bind(m.quantity)
            .bind(m.interval_type.as_str())
            .bind(i64::from(m.interval_count))
            .bind(m.recurring_attempts)
            .bind(m.status.as_str())
            .bind(m.current_period.map(|p| to_micros(p.start)))
            .bind(m.current_period.map(|p| to_micros(p.end)))
            .bind(m.credit_balance)
            .bind(m.dunning_failed_at.map(to_micros))
            .bind(m.dunning_retries)
            .bind(m.next_action_at.map(to_micros))
            .bind(m.canceled_at.map(to_micros));
    }
    let updated = query.execute(&mut **tx).await?.rows_affected();
    let all = usize::try_from(updated).is_ok_and(|n| n == memberships.len());
    if all {
        for m in memberships.iter_mut() {
            m.version += 1;
            m.updated_at = now;
        }
    }
    Ok(all)
}

/// Reads the memberships with these `(merchant id, id)` pairs for change, locking their rows
/// like [`lock`] (in id order, so two lockers never wait on each other in a cycle).
pub async fn lock_many(
    tx: &mut Tx,
    backend: Backend,
    ids: &[(i64, i64)],
) -> Result<Vec<Membership>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} {FROM} JOIN (VALUES {}) AS v \
         ON m.merchant_id = v.column1 AND m.id = v.column2 ORDER BY m.id{lock}",
        super::placeholders(ids.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode).collect()
}

/// Whether any membership of the merchant has an action due at `until`, claimable or not (its
/// row locked by another transaction, or a charge of it in flight).
pub async fn any_due<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    until: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let found: Option<i32> = sqlx::query_scalar(
        "SELECT 1 FROM memberships WHERE merchant_id = $1 AND next_action_at IS NOT NULL \
         AND next_action_at <= $2 LIMIT 1",
    )
    .bind(merchant_id)
    .bind(to_micros(until))
    .fetch_optional(executor)
    .await?;
    Ok(found.is_some())
}

/// The claims' condition that the membership has no charge attempt in flight: its next action
/// waits until the processor answered (one attempt in flight per membership, see
/// [`super::charges`]).
const NOTHING_IN_FLIGHT: &str = "NOT EXISTS (SELECT 1 FROM charges c \
     WHERE c.membership_id = m.id AND c.status = 'Pending')";

/// Claims the membership whose next action is earliest and due at `until`: of one merchant, or
/// (with `None`) of every merchant that runs on real time (no test clock). On PostgreSQL the row
/// is locked and rows locked by another process are skipped, so several `recur` processes share
/// the work without waiting on each other.
pub async fn claim_due(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: Option<i64>,
    until: DateTime<Utc>,
) -> Result<Option<Membership>, sqlx::Error> {
    let scope = match merchant_id {
        Some(_) => "m.merchant_id = $2",
        None => "$2 = 0 AND m.merchant_id NOT IN (SELECT t.merchant_id FROM test_clocks t)",
    };
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.next_action_at IS NOT NULL AND m.next_action_at <= $1 \
         AND {scope} AND {NOTHING_IN_FLIGHT} ORDER BY m.next_action_at, m.id LIMIT 1{lock}"
    );
    let row = sqlx::query(&sql)
        .bind(to_micros(until))
        .bind(merchant_id.unwrap_or(0))
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Claims up to `limit` Active memberships of merchants on real time whose period ended by
/// `until` and whose `endDate` has not come: the renewals the engine runs in batches. Locked
/// and skipping rows locked elsewhere on PostgreSQL, like [`claim_due`]. The test-clock
/// exclusion is a `NOT IN` filter rather than an anti-join so that PostgreSQL reads the batch
/// in `memberships_due` order even when most memberships are due at once, instead of sorting
/// them all for every batch.
pub async fn claim_due_renewals(
    tx: &mut Tx,
    backend: Backend,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Membership>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.next_action_at IS NOT NULL AND m.next_action_at <= $1 \
         AND m.status = 'Active' AND (m.end_date IS NULL OR m.end_date > $1) \
         AND m.merchant_id NOT IN (SELECT t.merchant_id FROM test_clocks t) \
         AND {NOTHING_IN_FLIGHT} ORDER BY m.next_action_at, m.id LIMIT $2{lock}"
    );
    let rows = sqlx::query(&sql)
        .bind(to_micros(until))
        .bind(limit)
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(decode).collect()
}
