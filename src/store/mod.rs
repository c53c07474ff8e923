//! Persistence: one schema on SQLite (embedded default) or PostgreSQL (production).
//!
//! Queries are written once in the SQL both engines share (`$N` placeholders, `ON CONFLICT`,
//! `RETURNING`) and run through `sqlx::Any`. Each table has its own module; every query on
//! tenant data takes the merchant id, so no query can cross merchants.

pub mod api_keys;
pub mod cashier_sessions;
pub mod cashier_transactions;
pub mod charges;
pub mod checkout_sessions;
pub mod coalesce;
pub mod coupons;
pub mod credit_notes;
pub mod customers;
pub mod dashboard_sessions;
pub mod deliveries;
pub mod document_numbers;
pub mod emails;
pub mod endpoint_deliveries;
pub mod events;
pub mod idempotency;
pub mod invoices;
pub mod keyset;
pub mod memberships;
pub mod merchant_settings;
pub mod merchants;
pub mod meters;
pub mod outbox;
pub mod overview;
pub mod params;
pub mod payment_methods;
pub mod pool;
pub mod prices;
pub mod processors;
pub mod products;
pub mod refunds;
pub mod sandbox;
pub mod sepa_accounts;
pub mod sepa_batches;
pub mod sepa_debits;
pub mod sepa_mandates;
pub mod stripe_accounts;
pub mod stripe_customers;
pub mod stripe_events;
pub mod tax_parties;
pub mod tax_rates;
pub mod test_clocks;
pub mod transaction_ids;
pub mod usage;
pub mod webhook_endpoints;

pub use params::{for_backend, placeholders};

use anyhow::Context;
use chrono::{DateTime, Utc};
use sqlx::any::AnyConnectOptions;
use sqlx::{Any, ConnectOptions, Connection, Executor};

use coalesce::Coalescer;

pub use pool::{Pool, PoolConnection, Tx};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Which engine is behind the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite file.
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The engine behind `conn`.
    pub fn of(conn: &sqlx::AnyConnection) -> Self {
        if conn.backend_name().eq_ignore_ascii_case("postgresql") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// A pool of database connections.
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
    writer: Pool,
    backend: Backend,
    customer_reads: Coalescer<customers::ByKey>,
    customer_inserts: Coalescer<customers::Insert>,
    membership_reads: Coalescer<memberships::WithInvoicesByKey>,
    membership_inserts: Coalescer<memberships::Insert>,
}

impl Store {
    /// Connects to `url` (`sqlite://…` or `postgres://…`).
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            Backend::Postgres
        };
        let options: AnyConnectOptions = url
            .parse()
            .with_context(|| "RECUR_DATABASE_URL is not a valid database URL")?;
        let options = options.disable_statement_logging();
        if backend == Backend::Sqlite {
            // WAL needs an exclusive lock that the busy timeout cannot wait for: set it once,
            // on a single connection, before the pool opens its own.
            let mut conn = sqlx::AnyConnection::connect_with(&options)
                .await
                .with_context(|| format!("opening {}", redact(url)))?;
            conn.execute("PRAGMA journal_mode = WAL").await?;
            conn.close().await?;
        }
        let connecting = || format!("connecting to {}", redact(url));
        let readers = match backend {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        };
        let pool = Pool::connect(options.clone(), backend, readers)
            .await
            .with_context(connecting)?;
        let writer = match backend {
            // SQLite has one writer at a time: writers queue for this pool's one connection,
            // first come first served, instead of sleeping on the busy timeout in turn.
            Backend::Sqlite => Pool::connect(options, backend, 1)
                .await
                .with_context(connecting)?,
            Backend::Postgres => pool.clone(),
        };
        Ok(Self {
            customer_reads: Coalescer::new(customers::ByKey, pool.clone(), backend),
            customer_inserts: Coalescer::new(customers::Insert, writer.clone(), backend),
            membership_reads: Coalescer::new(memberships::WithInvoicesByKey, pool.clone(), backend),
            membership_inserts: Coalescer::new(memberships::Insert, writer.clone(), backend),
            pool,
            writer,
            backend,
        })
    }

    /// Applies pending migrations.
    ///
    /// SQLite changes a table's constraints only by rebuilding it, and dropping a table that
    /// others reference fails while foreign keys are enforced (a migration runs inside a
    /// transaction, where the enforcement cannot be switched). So SQLite migrations run with
    /// enforcement off, as SQLite's own procedure for schema changes does, and every reference is
    /// checked before it is switched back on.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        let mut conn = self.writer.acquire().await?;
        match self.backend {
            Backend::Postgres => POSTGRES_MIGRATIONS
                .run(&mut *conn)
                .await
                .context("applying migrations"),
            Backend::Sqlite => {
                conn.execute("PRAGMA foreign_keys = OFF").await?;
                let applied = SQLITE_MIGRATIONS.run(&mut *conn).await;
                let broken = sqlx::query("PRAGMA foreign_key_check")
                    .fetch_all(&mut *conn)
                    .await;
                conn.execute("PRAGMA foreign_keys = ON").await?;
                applied.context("applying migrations")?;
                anyhow::ensure!(
                    broken?.is_empty(),
                    "the migrations left rows that reference missing rows"
                );
                Ok(())
            }
        }
    }

    /// The engine behind this store.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool, for read queries.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Customers read by key, concurrent reads sharing a statement.
    pub fn customer_reads(&self) -> &Coalescer<customers::ByKey> {
        &self.customer_reads
    }

    /// Memberships with their latest invoices read by key, concurrent reads sharing a
    /// statement.
    pub fn membership_reads(&self) -> &Coalescer<memberships::WithInvoicesByKey> {
        &self.membership_reads
    }

    /// New customers inserted, concurrent inserts sharing a statement.
    pub fn customer_inserts(&self) -> &Coalescer<customers::Insert> {
        &self.customer_inserts
    }

    /// New memberships inserted, concurrent inserts sharing a statement.
    pub fn membership_inserts(&self) -> &Coalescer<memberships::Insert> {
        &self.membership_inserts
    }

    /// The pool for writes: on SQLite a single connection, on PostgreSQL the one pool.
    pub fn writer(&self) -> &Pool {
        &self.writer
    }

    /// Starts a write transaction on the writer pool. On SQLite it also takes the write lock up
    /// front (`BEGIN IMMEDIATE`), so another process's writer cannot fail it on a lock upgrade.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.writer.begin(Some("BEGIN IMMEDIATE")).await,
            Backend::Postgres => self.writer.begin(None).await,
        }
    }

    /// Closes both pools.
    pub async fn close(&self) {
        self.pool.close().await;
        self.writer.close().await;
    }

    /// Round-trips a trivial query: the database is reachable.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map(|_| ())
    }
}

/// A UTC instant as stored: Unix microseconds.
pub fn to_micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// A stored Unix-microsecond value as a UTC instant.
pub fn from_micros(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or_default()
}

/// How a statement finds the rows of `n` requests by `(merchant id, key)`, tenant-scoped: what
/// follows its `FROM` and what makes its `WHERE` clause, on `table` (a name or an alias) and its
/// `key_column`, with the pairs bound from `$1` by [`bind_merchant_keys`]. One pair is a plain
/// filter, which costs PostgreSQL less than a join with `VALUES`; several are that join.
pub fn by_merchant_keys(n: usize, table: &str, key_column: &str) -> (String, String) {
    match n {
        1 => (
            String::new(),
            format!("WHERE {table}.merchant_id = $1 AND {table}.{key_column} = $2"),
        ),
        n => (
            format!(
                "JOIN (VALUES {}) AS v \
                 ON {table}.merchant_id = v.column1 AND {table}.{key_column} = v.column2",
                placeholders(n, 2, 1)
            ),
            String::new(),
        ),
    }
}

/// Binds `(merchant id, key)` pairs in order, for a statement built with [`by_merchant_keys`].
pub fn bind_merchant_keys<'q>(
    mut query: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>,
    keys: &'q [(i64, String)],
) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>> {
    for (merchant_id, key) in keys {
        query = query.bind(*merchant_id).bind(key.as_str());
    }
    query
}

/// A `columns` list (`"a, b"`) qualified by `table` (`"t.a, t.b"`), each renamed
/// `<alias_prefix><column>` when an alias prefix is given (`"t.a AS t_a, t.b AS t_b"`): for
/// statements in which another table's columns have the same names.
pub fn qualified(columns: &str, table: &str, alias_prefix: Option<&str>) -> String {
    columns
        .split(',')
        .map(str::trim)
        .map(|column| match alias_prefix {
            Some(prefix) => format!("{table}.{column} AS {prefix}{column}"),
            None => format!("{table}.{column}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows of `table` (its `columns`) whose `(merchant_id, id)` is one of `ids`, in one
/// query: how a batch reads its rows, tenant-scoped like every single-row read.
pub async fn rows_by_ids<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    table: &str,
    columns: &str,
    ids: &[(i64, i64)],
) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {columns} FROM {table} JOIN (VALUES {}) AS v \
         ON {table}.merchant_id = v.column1 AND {table}.id = v.column2",
        placeholders(ids.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    query.fetch_all(executor).await
}

/// The rows of `select` (a statement up to its `WHERE`) whose `column` is one of `ids`, ordered
/// by `order`, in one query: how a page's records read what belongs to their rows (ids read
/// under the merchant), whatever the page's size.
pub async fn rows_with_ids<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    select: &str,
    column: &str,
    ids: &[i64],
    order: &str,
) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "{select} WHERE {column} IN (SELECT column1 FROM (VALUES {}) AS v) ORDER BY {order}",
        placeholders(ids.len(), 1, 1)
    );
    let mut query = sqlx::query(&sql);
    for id in ids {
        query = query.bind(*id);
    }
    query.fetch_all(executor).await
}

/// Holds `merchant_id`'s row until the transaction ends (PostgreSQL; SQLite's write transaction
/// holds the whole database already), so that a count-then-insert under a per-merchant cap is
/// never passed by a concurrent one.
pub async fn lock_merchant(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
) -> Result<(), sqlx::Error> {
    if backend == Backend::Postgres {
        sqlx::query("SELECT id FROM merchants WHERE id = $1 FOR UPDATE")
            .bind(merchant_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Runs `attempt` again (up to five more times) while it fails on a unique constraint: for an
/// insert that picks its key under a lock a concurrent one may pick too.
pub async fn retry_unique<T, F, Fut>(mut attempt: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    let mut attempts = 0;
    loop {
        match attempt().await {
            Err(error) if is_unique_violation(&error) && attempts < 5 => attempts += 1,
            answer => return answer,
        }
    }
}

/// Whether `error` is a unique-constraint violation.
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|e| e.is_unique_violation())
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_password() {
        assert_eq!(
            redact("postgres://u:secret@localhost/db"),
            "postgres://u:***@localhost/db"
        );
        assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
    }

    #[test]
    fn qualified_columns_carry_their_table_and_alias() {
        assert_eq!(
            qualified("id, kind", "charges", None),
            "charges.id, charges.kind"
        );
        assert_eq!(
            qualified("id, kind", "i", Some("i_")),
            "i.id AS i_id, i.kind AS i_kind"
        );
    }

    #[test]
    fn one_merchant_key_is_a_filter_and_several_a_join() {
        assert_eq!(
            by_merchant_keys(1, "m", "membership_key"),
            (
                String::new(),
                "WHERE m.merchant_id = $1 AND m.membership_key = $2".to_owned()
            )
        );
        assert_eq!(
            by_merchant_keys(2, "m", "membership_key"),
            (
                "JOIN (VALUES ($1, $2), ($3, $4)) AS v \
                 ON m.merchant_id = v.column1 AND m.membership_key = v.column2"
                    .to_owned(),
                String::new()
            )
        );
    }

    #[test]
    fn micros_round_trip() {
        let at = DateTime::from_timestamp_micros(1_700_000_000_123_456).unwrap();
        assert_eq!(from_micros(to_micros(at)), at);
    }
}
