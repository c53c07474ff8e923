//! The connection pool: deadpool holding sqlx connections, checked only when they may need it.
//!
//! sqlx's own pool pings every connection it takes back, in a task of its own: a `Sync` round
//! trip to PostgreSQL, a hand-off to the connection's thread and back on SQLite. That doubled the
//! round trips of every one-statement request. This pool checks a connection when it is handed
//! out, and only if its last use did not run to completion (a cancelled request, an error, a
//! transaction dropped without commit: the ping also flushes the queued `ROLLBACK`) or it sat
//! idle for [`IDLE_BEFORE_PING`] (across a database restart, say). A connection whose check fails
//! is discarded and replaced.

use std::borrow::Cow;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use deadpool::managed::{self, Metrics, Object, PoolError, RecycleError, RecycleResult};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::TryStreamExt;
use sqlx::any::{AnyConnectOptions, AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo};
use sqlx::{
    Any, AnyConnection, ConnectOptions, Connection, Database, Describe, Either, Execute, Executor,
    TransactionManager,
};
use sqlx_core::ext::async_stream::TryAsyncStream;

use super::Backend;

/// How long a pooled connection may sit unused before it is pinged on its next checkout.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);
/// How long a caller waits for a free connection before the request fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// A pool of database connections; cheap to clone.
#[derive(Clone)]
pub struct Pool {
    inner: managed::Pool<Manager>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.inner.status();
        f.debug_struct("Pool")
            .field("size", &status.size)
            .field("available", &status.available)
            .finish()
    }
}

/// A connection as the pool keeps it.
struct Conn {
    raw: AnyConnection,
    /// Whether its last use ran to completion without an error.
    clean: bool,
    /// When its last use ended.
    last_used: Instant,
}

/// Opens connections and decides whether a returning one needs a check.
struct Manager {
    options: AnyConnectOptions,
    backend: Backend,
}

impl managed::Manager for Manager {
    type Type = Conn;
    type Error = sqlx::Error;

    /// Connects, trying again while the server refuses connections or is starting up (as
    /// sqlx's pool does), with a doubling pause of at most two seconds; the pool's creation
    /// time-out ([`ACQUIRE_TIMEOUT`]) bounds the whole wait.
    async fn create(&self) -> Result<Conn, sqlx::Error> {
        let mut pause = Duration::from_millis(10);
        let mut raw = loop {
            match self.options.connect().await {
                Ok(raw) => break raw,
                Err(error) if is_transient(&error) => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                Err(error) => return Err(error),
            }
        };
        if self.backend == Backend::Sqlite {
            raw.execute("PRAGMA synchronous = NORMAL").await?;
            raw.execute("PRAGMA foreign_keys = ON").await?;
            raw.execute("PRAGMA busy_timeout = 10000").await?;
        }
        Ok(Conn {
            raw,
            clean: true,
            last_used: Instant::now(),
        })
    }

    async fn recycle(&self, conn: &mut Conn, _: &Metrics) -> RecycleResult<sqlx::Error> {
        if !conn.clean || conn.last_used.elapsed() >= IDLE_BEFORE_PING {
            conn.raw.ping().await.map_err(RecycleError::Backend)?;
        }
        Ok(())
    }
}

impl Pool {
    /// A pool of up to `max` connections to `options`; opens one at once, so that a wrong URL or
    /// an unreachable server fails here.
    pub async fn connect(
        options: AnyConnectOptions,
        backend: Backend,
        max: usize,
    ) -> Result<Self, sqlx::Error> {
        let inner = managed::Pool::builder(Manager { options, backend })
            .max_size(max)
            .wait_timeout(Some(ACQUIRE_TIMEOUT))
            .create_timeout(Some(ACQUIRE_TIMEOUT))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|e| sqlx::Error::Configuration(e.to_string().into()))?;
        let pool = Self { inner };
        drop(pool.get().await?);
        Ok(pool)
    }

    /// A connection for several statements. It is checked on its next checkout, since the pool
    /// cannot tell whether its holder finished with it cleanly.
    pub async fn acquire(&self) -> Result<PoolConnection, sqlx::Error> {
        self.checkout().await.map(PoolConnection)
    }

    /// Starts a transaction with `BEGIN`, or with `statement` (SQLite's `BEGIN IMMEDIATE`).
    pub async fn begin(&self, statement: Option<&'static str>) -> Result<Tx, sqlx::Error> {
        let mut conn = self.checkout().await?;
        <Any as Database>::TransactionManager::begin(&mut conn.raw, statement.map(Cow::Borrowed))
            .await?;
        Ok(Tx { conn, open: true })
    }

    /// Closes the idle connections (politely, so the server sees a goodbye) and refuses new
    /// checkouts; connections in use are closed when they come back.
    pub async fn close(&self) {
        let idle = self.inner.retain(|_, _| false).removed;
        self.inner.close();
        for conn in idle {
            let _ = conn.raw.close().await;
        }
    }

    /// A connection, as the pool holds it.
    async fn get(&self) -> Result<Object<Manager>, sqlx::Error> {
        self.inner.get().await.map_err(|e| match e {
            PoolError::Backend(e) => e,
            PoolError::Timeout(_) => sqlx::Error::PoolTimedOut,
            PoolError::Closed => sqlx::Error::PoolClosed,
            other => sqlx::Error::Configuration(other.to_string().into()),
        })
    }

    /// A connection marked as in use until [`finished`] says otherwise.
    async fn checkout(&self) -> Result<Object<Manager>, sqlx::Error> {
        let mut conn = self.get().await?;
        conn.clean = false;
        Ok(conn)
    }

    /// Runs `op` on a checked-out connection and records how that use ended.
    async fn on_connection<T>(
        &self,
        op: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let mut conn = self.checkout().await?;
        let result = op(&mut conn.raw).await;
        finished(&mut conn, &result);
        result
    }
}

/// A connection error worth another try: refused (the server is not listening yet) or one the
/// database marks as passing while it starts up or frees connection slots.
fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(e) => e.kind() == std::io::ErrorKind::ConnectionRefused,
        sqlx::Error::Database(e) => e.is_transient_in_connect_phase(),
        _ => false,
    }
}

/// Records the end of a use: clean only when it succeeded.
fn finished<T>(conn: &mut Conn, result: &Result<T, sqlx::Error>) {
    conn.clean = result.is_ok();
    conn.last_used = Instant::now();
}

/// A connection out of the pool; dereferences to the sqlx connection.
pub struct PoolConnection(Object<Manager>);

impl Deref for PoolConnection {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.0.raw
    }
}

impl DerefMut for PoolConnection {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.0.raw
    }
}

/// A write transaction: everything one request changes commits or rolls back together. Dropped
/// without [`Tx::commit`], it rolls back.
pub struct Tx {
    conn: Object<Manager>,
    open: bool,
}

/// How a transaction ends: sqlx's commit or rollback.
type End = fn(&mut AnyConnection) -> BoxFuture<'_, Result<(), sqlx::Error>>;

impl Tx {
    /// Commits the transaction.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.end(<Any as Database>::TransactionManager::commit)
            .await
    }

    /// Rolls the transaction back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.end(<Any as Database>::TransactionManager::rollback)
            .await
    }

    async fn end(mut self, how: End) -> Result<(), sqlx::Error> {
        let result = how(&mut self.conn.raw).await;
        self.open = false;
        finished(&mut self.conn, &result);
        result
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if self.open {
            // Queued, sent before the connection's next use: the check on checkout flushes it.
            <Any as Database>::TransactionManager::start_rollback(&mut self.conn.raw);
        }
    }
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn.raw
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn.raw
    }
}

impl<'p> Executor<'p> for &Pool {
    type Database = Any;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, sqlx::Error>>
    where
        'p: 'e,
        E: 'q + Execute<'q, Any>,
    {
        let pool = self.clone();
        Box::pin(TryAsyncStream::new(move |yielder| async move {
            pool.on_connection(async |raw| {
                let mut stream = raw.fetch_many(query);
                while let Some(item) = stream.try_next().await? {
                    yielder.r#yield(item).await;
                }
                Ok(())
            })
            .await
        }))
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<AnyRow>, sqlx::Error>>
    where
        'p: 'e,
        E: 'q + Execute<'q, Any>,
    {
        let pool = self.clone();
        Box::pin(async move {
            pool.on_connection(async |raw| raw.fetch_optional(query).await)
                .await
        })
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [AnyTypeInfo],
    ) -> BoxFuture<'e, Result<AnyStatement<'q>, sqlx::Error>>
    where
        'p: 'e,
    {
        let pool = self.clone();
        Box::pin(async move {
            pool.on_connection(async |raw| raw.prepare_with(sql, parameters).await)
                .await
        })
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Any>, sqlx::Error>>
    where
        'p: 'e,
    {
        let pool = self.clone();
        Box::pin(async move {
            pool.on_connection(async |raw| raw.describe(sql).await)
                .await
        })
    }
}
