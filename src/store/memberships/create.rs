//! Creating memberships: one statement inserts a membership and finds its customer, shared by
//! concurrent creates ([`crate::store::coalesce`]).

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use recur_domain::calendar::BillingCycle;
use recur_domain::coupon::Discount;
use recur_domain::membership::ChargeDirective;
use recur_domain::schedule::incomplete_expires_at;
use recur_domain::tax::TaxRate;
use recur_domain::usage::MeteredTerm;
use sqlx::{Any, Executor};

use super::{
    decode, discount_json, metered_json, queue_json, rates_json, Membership, COLUMNS, FROM,
};
use crate::store::coalesce::{Batch, Statements};
use crate::store::customers::Created;
use crate::store::{to_micros, Backend, Pool, Store, Tx};

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
    /// The tax rates it bills with (`taxRateIds`), checked and in order.
    pub tax_rates: Vec<TaxRate>,
    /// The catalog price its terms were copied from (`priceId`).
    pub price_key: Option<String>,
    /// `trialDays` (given, or the price's).
    pub trial_days: Option<u32>,
    /// The coupon it was created with (`couponCode`), redeemed.
    pub discount: Option<Discount>,
    /// The metered prices it carries (`meteredPriceIds`), as they were when given.
    pub metered: Vec<MeteredTerm>,
}

/// When a membership is created: the merchant's time and the deadline of its first payment.
#[derive(Debug, Clone, Copy)]
pub struct CreatedAt {
    /// The merchant's current time (its test clock's, if it has one).
    pub now: DateTime<Utc>,
    /// When the membership expires unless paid (Incomplete → Expired).
    pub expires_at: DateTime<Utc>,
}

impl CreatedAt {
    /// A membership created at the merchant's time `now`: that time, and when it expires if it
    /// is still Incomplete then.
    pub fn new(now: DateTime<Utc>) -> Self {
        CreatedAt {
            now,
            expires_at: incomplete_expires_at(now).unwrap_or(now),
        }
    }
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

/// [`COLUMNS`] as an insert returns them: unqualified, with an empty customer key (the key
/// lives on the customer; [`Insert`] fills in the one its request named).
static RETURNING: LazyLock<String> = LazyLock::new(|| {
    COLUMNS
        .replace("c.customer_key", "CAST('' AS TEXT) AS customer_key")
        .replace("m.", "")
});

/// The columns of a membership row that [`Insert`] binds, in order: merchant id, customer key,
/// the new fields, the expiry, the time, whether a merchant on a test clock is allowed, the
/// tax rates, the catalog price, the trial, the discount and the metered prices.
const INSERT_COLUMNS: usize = 24;

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
            crate::store::placeholders(rows, INSERT_COLUMNS, 1)
        ),
    };
    let fields = (3..=16).map(value).collect::<Vec<_>>().join(", ");
    format!(
        "INSERT INTO memberships (merchant_id, customer_id, membership_key, order_id, \
         order_description, subscription_name, metadata, webhook_url, end_date, currency, \
         total_amount, price_per_unit, quantity, interval_type, interval_count, \
         charge_emitter_queue, recurring_attempts, status, credit_balance, dunning_retries, \
         next_action_at, version, created_at, updated_at, tax_rates, price_key, trial_days, \
         discount, metered_prices) \
         SELECT {merchant}, c.id, {fields}, 0, 'Incomplete', 0, 0, {expires}, 1, {now}, {now}, \
         {tax_rates}, {price_key}, {trial_days}, {discount}, {metered} \
         {from} ({any_clock} = 1 \
         OR NOT EXISTS (SELECT 1 FROM test_clocks t WHERE t.merchant_id = {merchant})) \
         ON CONFLICT (customer_id, order_id) DO NOTHING RETURNING {returning}",
        merchant = value(1),
        expires = value(17),
        now = value(18),
        any_clock = value(19),
        tax_rates = value(20),
        price_key = value(21),
        trial_days = value(22),
        discount = value(23),
        metered = value(24),
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
        backend: Backend,
        rows: &'a [NewRow],
    ) -> BoxFuture<'a, Result<Vec<Option<Membership>>, sqlx::Error>> {
        Box::pin(async move {
            let mut query = sqlx::query(INSERT.get(backend, rows.len(), insert_sql));
            for row in rows {
                query = bind_row(query, row)?;
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

/// Binds `row`'s values to the insert, in [`insert_sql`]'s order.
fn bind_row<'q>(
    query: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>,
    row: &'q NewRow,
) -> Result<sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>, sqlx::Error> {
    let new = &row.membership;
    let any_clock = i64::from(row.condition == ClockCondition::Any);
    Ok(query
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
        .bind(any_clock)
        .bind(rates_json(&new.tax_rates)?)
        .bind(new.price_key.as_deref())
        .bind(new.trial_days.map(i64::from))
        .bind(discount_json(new.discount.as_ref())?)
        .bind(metered_json(&new.metered)?))
}

/// [`insert`] in the caller's transaction (a membership created with something else the
/// transaction writes, such as a coupon's redemption), unshared.
pub async fn insert_in(tx: &mut Tx, row: &NewRow) -> Result<Option<Membership>, sqlx::Error> {
    let backend = crate::store::Backend::of(tx);
    let query = bind_row(sqlx::query(INSERT.get(backend, 1, insert_sql)), row)?;
    let Some(returned) = query.fetch_optional(&mut **tx).await? else {
        return Ok(None);
    };
    let mut membership = decode(&returned)?;
    membership.customer_key.clone_from(&row.customer_key);
    Ok(Some(membership))
}

/// Stores a new Incomplete membership of the merchant's customer `customer_key`, in one
/// statement that also finds the customer (shared with concurrent creates, see
/// [`crate::store::coalesce`]). `None` when the customer does not exist, already has a
/// membership with this order id (safe under concurrent identical creates), or — with
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
