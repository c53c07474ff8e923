//! The `customers` table. Every query is scoped by merchant id.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;

use super::coalesce::{Batch, Statements};
use super::keyset::{self, Filters, Value, Window};
use super::{from_micros, to_micros, Pool, Store, Tx};

/// A tax id of a customer, kept as given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaxId {
    /// Kind of id (`eu_vat`, `us_ein`, …): not validated, as the spec gives no rule.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id itself.
    pub value: String,
}

/// The fields a customer is created with, already validated and normalised.
#[derive(Debug, Clone)]
pub struct NewCustomer {
    /// Processor key (lowercase UUID) of the merchant.
    pub processor_key: String,
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// E-mail as given.
    pub email: String,
    /// E-mail as compared (lowercase).
    pub email_identity: String,
    /// E.164 phone.
    pub phone: String,
    /// ISO 3166-1 alpha-2, uppercase.
    pub country_code: String,
    /// Optional address line 1.
    pub address1: Option<String>,
    /// Optional address line 2.
    pub address2: Option<String>,
    /// Optional city.
    pub city: Option<String>,
    /// Optional state or region.
    pub state: Option<String>,
    /// Optional postal code.
    pub zip_code: Option<String>,
    /// Tax ids.
    pub tax_ids: Vec<TaxId>,
}

/// A stored customer.
#[derive(Debug, Clone)]
pub struct Customer {
    /// Internal id.
    pub id: i64,
    /// Public key, `cstmr_…`.
    pub customer_key: String,
    /// Everything it was created with (phone as last updated).
    pub fields: NewCustomer,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Whether a create made a new row or found the existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// A new customer was stored.
    New,
    /// A customer with that e-mail already existed; it is returned unchanged.
    Existing,
}

const COLUMNS: &str =
    "id, customer_key, processor_key, first_name, last_name, email, email_identity, \
                       phone, country_code, address1, address2, city, state, zip_code, tax_ids, \
                       created_at, updated_at";

fn decode(row: &sqlx::any::AnyRow) -> Result<Customer, sqlx::Error> {
    use sqlx::Row;
    let tax_ids: String = row.try_get("tax_ids")?;
    Ok(Customer {
        id: row.try_get("id")?,
        customer_key: row.try_get("customer_key")?,
        fields: NewCustomer {
            processor_key: row.try_get("processor_key")?,
            first_name: row.try_get("first_name")?,
            last_name: row.try_get("last_name")?,
            email: row.try_get("email")?,
            email_identity: row.try_get("email_identity")?,
            phone: row.try_get("phone")?,
            country_code: row.try_get("country_code")?,
            address1: row.try_get("address1")?,
            address2: row.try_get("address2")?,
            city: row.try_get("city")?,
            state: row.try_get("state")?,
            zip_code: row.try_get("zip_code")?,
            tax_ids: serde_json::from_str(&tax_ids)
                .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        },
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

/// Stores `customer` for `merchant_id` unless one with the same e-mail identity exists, in which
/// case the existing one is returned. Safe under concurrent identical creates: the unique
/// constraint decides, and the loser gets the winner's row from the same statement. New or
/// existing, a create is one statement (shared with concurrent creates, see [`super::coalesce`]).
pub async fn create_or_get(
    store: &Store,
    merchant_id: i64,
    customer_key: String,
    customer: NewCustomer,
    now: DateTime<Utc>,
) -> Result<(Customer, Created), sqlx::Error> {
    let row = NewRow {
        merchant_id,
        customer_key,
        customer,
        now,
    };
    store.customer_inserts().run(row).await
}

/// A customer to insert, as [`Insert`] takes it.
#[derive(Debug)]
pub struct NewRow {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Its fresh key.
    pub customer_key: String,
    /// Its fields.
    pub customer: NewCustomer,
    /// Creation time.
    pub now: DateTime<Utc>,
}

/// Inserts customers, many in one statement; a customer whose merchant already has one with
/// its e-mail identity is not inserted, and its answer is the existing customer.
///
/// The existing row comes back through the conflict clause itself (`DO UPDATE` of the e-mail
/// identity to the value it holds, which changes nothing), so the unique index finds it: no
/// second read, and no query plan to choose. A separate read by merchant and e-mail could be
/// planned, while the table had no statistics yet, over a list index that starts with
/// `merchant_id` and then filter every customer of the merchant.
#[derive(Debug)]
pub struct Insert;

/// [`Insert`]'s statements.
static INSERT: Statements = Statements::new();

/// The columns of a customer row that [`Insert`] binds, in order.
const INSERT_COLUMNS: usize = 18;

impl Batch for Insert {
    type Request = NewRow;
    type Answer = (Customer, Created);

    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        backend: super::Backend,
        rows: &'a [NewRow],
    ) -> BoxFuture<'a, Result<Vec<(Customer, Created)>, sqlx::Error>> {
        Box::pin(async move {
            // A statement may update a row once, so of concurrent creates of one e-mail only the
            // first goes in; the others are holes (no merchant), which the statement skips, and
            // get the first one's answer.
            let mut seen = std::collections::HashSet::with_capacity(rows.len());
            let holes: Vec<bool> = rows
                .iter()
                .map(|row| !seen.insert((row.merchant_id, row.customer.email_identity.as_str())))
                .collect();
            let sql = INSERT.get(backend, rows.len(), |n| {
                // One row as a plain `VALUES`, which costs PostgreSQL less than a select from one.
                let rows = match n {
                    1 => "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
                          $15, $16, $17, $18, $18)"
                        .to_owned(),
                    n => format!(
                        "SELECT v.*, v.column18 FROM (VALUES {}) AS v \
                         WHERE v.column1 IS NOT NULL",
                        super::placeholders(n, INSERT_COLUMNS, 1)
                    ),
                };
                format!(
                    "INSERT INTO customers (merchant_id, customer_key, processor_key, \
                     first_name, last_name, email, email_identity, phone, country_code, address1, \
                     address2, city, state, zip_code, tax_ids, first_name_search, \
                     last_name_search, created_at, updated_at) {rows} \
                     ON CONFLICT (merchant_id, email_identity) \
                     DO UPDATE SET email_identity = excluded.email_identity \
                     RETURNING merchant_id, {COLUMNS}"
                )
            });
            let mut query = sqlx::query(sql);
            for (
                NewRow {
                    merchant_id,
                    customer_key,
                    customer,
                    now,
                },
                hole,
            ) in rows.iter().zip(&holes)
            {
                let tax_ids = serde_json::to_string(&customer.tax_ids)
                    .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
                query = query
                    .bind((!hole).then_some(*merchant_id))
                    .bind(customer_key.as_str())
                    .bind(customer.processor_key.as_str())
                    .bind(customer.first_name.as_str())
                    .bind(customer.last_name.as_str())
                    .bind(customer.email.as_str())
                    .bind(customer.email_identity.as_str())
                    .bind(customer.phone.as_str())
                    .bind(customer.country_code.as_str())
                    .bind(customer.address1.as_deref())
                    .bind(customer.address2.as_deref())
                    .bind(customer.city.as_deref())
                    .bind(customer.state.as_deref())
                    .bind(customer.zip_code.as_deref())
                    .bind(tax_ids)
                    .bind(search_key(&customer.first_name))
                    .bind(search_key(&customer.last_name))
                    .bind(to_micros(*now));
            }
            let mut stored: HashMap<(i64, String), Customer> = HashMap::with_capacity(rows.len());
            for row in query.fetch_all(pool).await? {
                use sqlx::Row;
                let customer = decode(&row)?;
                let identity = customer.fields.email_identity.clone();
                stored.insert((row.try_get("merchant_id")?, identity), customer);
            }
            rows.iter()
                .map(|row| {
                    let key = (row.merchant_id, row.customer.email_identity.clone());
                    let customer = stored.get(&key).cloned().ok_or(sqlx::Error::RowNotFound)?;
                    let created = if customer.customer_key == row.customer_key {
                        Created::New
                    } else {
                        Created::Existing
                    };
                    Ok((customer, created))
                })
                .collect()
        })
    }
}

/// The customer with this key, if it belongs to `merchant_id`. Concurrent calls share a
/// statement ([`super::coalesce`]).
pub async fn get(
    store: &Store,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Option<Customer>, sqlx::Error> {
    store
        .customer_reads()
        .run((merchant_id, customer_key.to_owned()))
        .await
}

/// Reads customers by merchant id and customer key, many in one statement.
#[derive(Debug)]
pub struct ByKey;

/// [`ByKey`]'s statements.
static BY_KEY: Statements = Statements::new();

impl Batch for ByKey {
    type Request = (i64, String);
    type Answer = Option<Customer>;

    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        backend: super::Backend,
        keys: &'a [(i64, String)],
    ) -> BoxFuture<'a, Result<Vec<Option<Customer>>, sqlx::Error>> {
        Box::pin(async move {
            let sql = BY_KEY.get(backend, keys.len(), |n| {
                let (join, filter) = super::by_merchant_keys(n, "customers", "customer_key");
                format!("SELECT {COLUMNS}, merchant_id FROM customers {join} {filter}")
            });
            let query = super::bind_merchant_keys(sqlx::query(sql), keys);
            let mut found = HashMap::with_capacity(keys.len());
            for row in query.fetch_all(pool).await? {
                let merchant_id: i64 = sqlx::Row::try_get(&row, "merchant_id")?;
                let customer = decode(&row)?;
                found.insert((merchant_id, customer.customer_key.clone()), customer);
            }
            Ok(keys.iter().map(|key| found.get(key).cloned()).collect())
        })
    }
}

/// [`get`] together with the merchant's test-clock time (`None` without a test clock), in one
/// statement; `None` when there is no such customer.
pub async fn get_with_test_clock(
    store: &Store,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Option<(Customer, Option<DateTime<Utc>>)>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, (SELECT t.now FROM test_clocks t WHERE t.merchant_id = $1) \
         AS test_clock_now FROM customers WHERE merchant_id = $1 AND customer_key = $2"
    );
    let Some(row) = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_key)
        .fetch_optional(store.pool())
        .await?
    else {
        return Ok(None);
    };
    let clock: Option<i64> = sqlx::Row::try_get(&row, "test_clock_now")?;
    Ok(Some((decode(&row)?, clock.map(from_micros))))
}

/// Sets the phone of the customer with this key, if it belongs to `merchant_id`, and returns the
/// updated customer.
pub async fn update_phone(
    tx: &mut Tx,
    merchant_id: i64,
    customer_key: &str,
    phone: &str,
    now: DateTime<Utc>,
) -> Result<Option<Customer>, sqlx::Error> {
    let sql = format!(
        "UPDATE customers SET phone = $1, updated_at = $2 \
         WHERE merchant_id = $3 AND customer_key = $4 RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(phone)
        .bind(to_micros(now))
        .bind(merchant_id)
        .bind(customer_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The customer with this internal id, if it belongs to `merchant_id`.
pub async fn by_id<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Customer>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM customers WHERE merchant_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The customers with these `(merchant id, id)` pairs, by id.
pub async fn by_ids<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<HashMap<i64, Customer>, sqlx::Error> {
    let rows = super::rows_by_ids(executor, "customers", COLUMNS, ids).await?;
    rows.iter()
        .map(|row| decode(row).map(|customer| (customer.id, customer)))
        .collect()
}

/// How many characters of a text its search key keeps ([`search_key`]).
pub const SEARCH_KEY_CHARS: usize = 100;

/// The key a name is found under by prefix (`first_name_search`, `last_name_search`), and the
/// key of a prefix searched for: lowercased as e-mail identities are (Unicode case folding, in
/// recur rather than the database, so both databases compare alike), cut to its first
/// [`SEARCH_KEY_CHARS`] characters so that an index entry stays small however long the name.
pub fn search_key(text: &str) -> String {
    text.to_lowercase().chars().take(SEARCH_KEY_CHARS).collect()
}

/// What a list of customers keeps (all of the merchant's when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only the customer with this e-mail identity (`validation::email_identity`).
    pub email_identity: Option<String>,
    /// Only customers whose e-mail identity, first-name or last-name key starts with this key
    /// ([`search_key`]).
    pub prefix: Option<String>,
}

/// A page of the merchant's customers that `filter` keeps, newest first ([`keyset`]). A prefix
/// reads the three key indexes over the range of keys that start with it, every customer it
/// matches, keeps the page's ids of them (newest first, each once), and then reads those rows:
/// its cost follows how many customers the prefix matches, not how many there are.
pub async fn page<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
    filter: &Filter,
    window: Window,
) -> Result<Vec<Customer>, sqlx::Error> {
    let mut filters = Filters::default();
    if let Some(identity) = &filter.email_identity {
        filters.and(vec![Value::Text(identity.clone())], |p| {
            format!("c.email_identity = {}", p[0])
        });
    }
    if let Some(prefix) = &filter.prefix {
        let end = keyset::prefix_end(prefix);
        let mut values = vec![Value::Text(prefix.clone())];
        values.extend(end.map(Value::Text));
        filters.and(values, |p| {
            let branch = |column: &str| {
                let below = p
                    .get(1)
                    .map(|end| format!(" AND s.{column} < {end}"))
                    .unwrap_or_default();
                format!(
                    "SELECT s.id FROM customers s WHERE s.merchant_id = $1 \
                     AND s.{column} >= {}{below}",
                    p[0]
                )
            };
            // The window's own bound and size ($2, $3) cut the matches to the page's ids, so
            // that no planner walks the merchant's customers to meet them.
            format!(
                "c.id IN (SELECT u.id FROM ({} UNION {} UNION {}) AS u \
                 WHERE u.id < $2 ORDER BY u.id DESC LIMIT $3)",
                branch("email_identity"),
                branch("first_name_search"),
                branch("last_name_search")
            )
        });
    }
    let select = format!("SELECT {COLUMNS} FROM customers c");
    let rows = keyset::page(executor, &select, "c", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}
