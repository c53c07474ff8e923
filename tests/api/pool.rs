//! The connection pool (`store::pool`): it skips sqlx's ping on every release, so these check
//! what that ping used to guarantee. A transaction dropped without commit is rolled back before
//! the connection serves anyone else; a query cancelled mid-flight leaves nothing behind for the
//! next caller; a connection the server ended is replaced after one failed statement; and, as
//! sqlx's pool did, a server that refuses connections is waited for.

use std::time::Duration;

use recur::store::{Backend as StoreBackend, Pool};
use sqlx::any::AnyConnectOptions;

use crate::backend_matrix;
use crate::harness::{fresh_postgres_database, Backend};

/// A one-connection pool on a fresh database, so that every use reuses the same connection.
async fn single_connection_pool(backend: Backend) -> (Pool, Option<tempfile::TempDir>) {
    sqlx::any::install_default_drivers();
    let (url, dir, store_backend) = match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = format!("sqlite://{}/pool.sqlite3?mode=rwc", dir.path().display());
            (url, Some(dir), StoreBackend::Sqlite)
        }
        Backend::Postgres => (
            fresh_postgres_database().await,
            None,
            StoreBackend::Postgres,
        ),
    };
    let options: AnyConnectOptions = url.parse().expect("database URL");
    let pool = Pool::connect(options, store_backend, 1)
        .await
        .expect("pool connects");
    sqlx::query("CREATE TABLE items (k TEXT PRIMARY KEY)")
        .execute(&pool)
        .await
        .expect("create table");
    (pool, dir)
}

async fn items(pool: &Pool) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM items")
        .fetch_one(pool)
        .await
        .expect("count items")
}

backend_matrix!(
    dropped_transactions_roll_back_before_reuse,
    |backend| async move {
        let (pool, _dir) = single_connection_pool(backend).await;
        let mut tx = pool.begin(None).await.expect("begin");
        sqlx::query("INSERT INTO items (k) VALUES ('dropped')")
            .execute(&mut *tx)
            .await
            .expect("insert");
        drop(tx);
        assert_eq!(
            items(&pool).await,
            0,
            "the dropped transaction's row is gone"
        );
        let mut tx = pool
            .begin(None)
            .await
            .expect("begin again on the same connection");
        sqlx::query("INSERT INTO items (k) VALUES ('kept')")
            .execute(&mut *tx)
            .await
            .expect("insert");
        tx.commit().await.expect("commit");
        assert_eq!(items(&pool).await, 1);
    }
);

backend_matrix!(
    cancelled_queries_leave_nothing_behind,
    |backend| async move {
        let (pool, _dir) = single_connection_pool(backend).await;
        let slow = match backend {
            Backend::Postgres => "SELECT 1 FROM pg_sleep(5)",
            Backend::Sqlite => {
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000) \
             SELECT COUNT(*) FROM c"
            }
        };
        let cancelled = tokio::time::timeout(
            Duration::from_millis(100),
            sqlx::query_scalar::<_, i64>(slow).fetch_one(&pool),
        )
        .await;
        assert!(cancelled.is_err(), "the slow query was cancelled");
        let answer: i64 = sqlx::query_scalar("SELECT 2")
            .fetch_one(&pool)
            .await
            .expect("the connection serves the next query");
        assert_eq!(answer, 2, "the next caller sees its own result");
    }
);

/// PostgreSQL ends a connection (an administrator, a failover): one statement fails, the pool
/// notices and the next statement runs on a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_ended_are_replaced() {
    let (pool, _) = single_connection_pool(Backend::Postgres).await;
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&pool)
        .await
        .expect("backend pid");
    let admin = recur::store::Store::connect(
        &std::env::var("RECUR_TEST_POSTGRES_URL").expect("RECUR_TEST_POSTGRES_URL"),
    )
    .await
    .expect("admin connection");
    let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(admin.pool())
        .await
        .expect("terminate");
    assert!(ended);
    admin.close().await;
    let mut failures = 0;
    let new_pid = loop {
        match sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()")
            .fetch_one(&pool)
            .await
        {
            Ok(new_pid) => break new_pid,
            Err(_) => failures += 1,
        }
        assert!(failures <= 1, "more than one statement failed");
    };
    assert_ne!(new_pid, pid, "a new connection serves the pool");
}

/// PostgreSQL is not listening yet (a restart, a failover): the pool keeps connecting, as sqlx's
/// did, and the caller gets its connection once the server is back, not a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_are_retried_until_the_server_listens() {
    sqlx::any::install_default_drivers();
    let database = fresh_postgres_database().await;
    let real: url::Url = database.parse().expect("database URL");
    let real_addr = format!(
        "{}:{}",
        real.host_str().expect("host"),
        real.port().unwrap_or(5432)
    );
    // A port nothing listens on yet: connecting to it is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("address")
        .port();
    let mut proxied = real.clone();
    proxied.set_port(Some(port)).expect("port");
    proxied.set_host(Some("127.0.0.1")).expect("host");
    let refused = tokio::net::TcpStream::connect(("127.0.0.1", port)).await;
    assert!(refused.is_err(), "nothing listens on the port yet");
    // The server "comes back" a moment later: a proxy to PostgreSQL starts listening there.
    let proxy = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("proxy binds");
        loop {
            let (mut inbound, _) = listener.accept().await.expect("accept");
            let real_addr = real_addr.clone();
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(real_addr)
                    .await
                    .expect("proxy connects");
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    let options: AnyConnectOptions = proxied.as_str().parse().expect("proxied URL");
    let pool = Pool::connect(options, StoreBackend::Postgres, 1)
        .await
        .expect("the pool waits for the server instead of failing");
    let answer: i64 = sqlx::query_scalar("SELECT 1::BIGINT")
        .fetch_one(&pool)
        .await
        .expect("query through the proxy");
    assert_eq!(answer, 1);
    pool.close().await;
    proxy.abort();
}
