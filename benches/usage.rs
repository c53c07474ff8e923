//! Usage-event ingestion against the raw database's insert rate of the same rows, in one run.
//!
//! `cargo bench --bench usage -- [--seconds N] [--backend sqlite|postgres|both] [--clients 8]
//! [--stored N]`
//!
//! For each backend:
//! - **raw**: `--clients` tasks insert rows of `usage_events`' shape (same columns, same primary
//!   key) into a table of their own, 1,000 rows a statement, through the pools recur uses: the
//!   database's rate for these rows;
//! - **recur**: as many HTTP clients (`support/http.rs`, one keep-alive connection each) post
//!   `POST /usage-events` requests of 1,000 events each, every client for a membership of its own
//!   with a metered price, every transaction id new: validation, the event rows, the period
//!   totals under their locks and the answer, end to end;
//! - **reads**: the time of `GET /membership/{key}/usage` for a membership whose period then
//!   holds every event one client sent, and for one with a single event: an invoice reads the
//!   same totals, so this is what invoicing a period costs by the number of its events.
//!
//! `--stored N` first fills `usage_events` with N rows of another membership, to show whether
//! ingesting costs more with many events stored. PostgreSQL needs `RECUR_TEST_POSTGRES_URL`.
//! Absolute numbers depend on the machine; the ratios are the result.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use recur::app;
use recur::config::Config;
use recur::merchants;
use recur::store::merchants::Mode;
use recur::store::{Backend, Store};
use serde_json::{json, Value};

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/args.rs"]
mod args;
#[path = "support/http.rs"]
mod http;
#[path = "support/report.rs"]
mod report;
#[path = "support/scratch.rs"]
mod scratch;

use args::Args;
use scratch::ScratchDatabase;

/// Events in one request, and rows in one raw statement.
const BATCH: usize = 1000;
/// The API's path prefix.
const BASE: &str = "/api/subscriptions/v1";

/// What one run measures.
struct Plan {
    duration: Duration,
    clients: usize,
    stored: i64,
}

/// One backend's figures.
struct Row {
    backend: Backend,
    stored: i64,
    clients: usize,
    api: f64,
    raw: f64,
    read_many: Duration,
    read_few: Duration,
    events_in_period: u64,
}

/// `usage_events`' columns and key, for the raw table.
fn raw_table(backend: Backend) -> String {
    let rowid = match backend {
        Backend::Sqlite => " WITHOUT ROWID",
        Backend::Postgres => "",
    };
    format!(
        "CREATE TABLE raw_usage (merchant_id BIGINT NOT NULL, transaction_id TEXT NOT NULL, \
         membership_id BIGINT NOT NULL, meter_id BIGINT NOT NULL, period_start BIGINT NOT NULL, \
         occurred_at BIGINT NOT NULL, value TEXT, received_at BIGINT NOT NULL, \
         PRIMARY KEY (merchant_id, transaction_id)){rowid}"
    )
}

/// The raw rate: `clients` tasks inserting 1,000-row statements for `duration`; rows per second.
async fn raw_rate(backend: Backend, clients: usize, duration: Duration) -> f64 {
    let db = ScratchDatabase::create(backend, "usage_raw").await;
    let store = Store::connect(&db.url).await.expect("connect");
    sqlx::query(&raw_table(backend))
        .execute(store.writer())
        .await
        .expect("create table");
    let sql = recur::store::for_backend(
        format!(
            "INSERT INTO raw_usage (merchant_id, transaction_id, membership_id, meter_id, \
             period_start, occurred_at, value, received_at) VALUES {}",
            recur::store::placeholders(BATCH, 8, 1)
        ),
        backend,
    );
    let sql: Arc<str> = sql.into();
    let counter = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (store, sql, counter) = (store.clone(), sql.clone(), counter.clone());
            tokio::spawn(async move {
                let mut rows = 0u64;
                while Instant::now() < deadline {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    let mut query = sqlx::query(&sql);
                    for i in 0..BATCH {
                        query = query
                            .bind(1_i64)
                            .bind(format!("raw-{n}-{i}"))
                            .bind(1_i64)
                            .bind(1_i64)
                            .bind(0_i64)
                            .bind(0_i64)
                            .bind(Option::<String>::None)
                            .bind(0_i64);
                    }
                    query.execute(store.writer()).await.expect("raw insert");
                    rows += BATCH as u64;
                }
                rows
            })
        })
        .collect();
    let mut rows = 0;
    for task in tasks {
        rows += task.await.expect("raw task");
    }
    let rate = rows as f64 / started.elapsed().as_secs_f64();
    store.close().await;
    db.remove().await;
    rate
}

/// Sends one JSON request and returns its status and body.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let bytes = body.map(|b| b.to_string().into_bytes());
    let request = http::request(method, &format!("{BASE}{path}"), token, bytes.as_deref());
    let response = connection.send(&request).await.expect("request");
    let value = serde_json::from_slice(response.body).unwrap_or(Value::Null);
    (response.status, value)
}

/// Sends a request that must answer `status`; returns the body.
async fn expect(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: &str,
    body: Value,
    status: u16,
) -> Value {
    let (got, value) = send(addr, method, path, token, Some(body)).await;
    assert_eq!(got, status, "{method} {path}: {value}");
    value
}

/// `clients` Active memberships carrying a metered price of one count meter; their keys.
async fn metered_memberships(
    addr: SocketAddr,
    token: &str,
    processor_key: &str,
    clients: usize,
) -> Vec<String> {
    let meter = expect(
        addr,
        "POST",
        "/meters",
        token,
        json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        201,
    )
    .await;
    let product = expect(
        addr,
        "POST",
        "/products",
        token,
        json!({"name": "Usage"}),
        201,
    )
    .await;
    let price = expect(
        addr,
        "POST",
        "/prices",
        token,
        json!({"productId": product["productId"], "currency": "EUR", "intervalType": "Monthly",
            "meterId": meter["meterId"], "unitAmount": "0.001"}),
        201,
    )
    .await;
    let mut keys = Vec::with_capacity(clients);
    for i in 0..clients {
        let customer = expect(addr, "POST", "/customer", token,
            json!({"processorKey": processor_key, "firstName": "Bench", "lastName": "Usage", "email": format!("usage-{i}@example.com"),
                "phone": "+4915112345678", "countryCode": "DE"}), 201).await;
        let customer = customer["customerKey"].clone();
        expect(
            addr,
            "POST",
            "/test-helpers/payment-method",
            token,
            json!({"customerKey": customer, "cardNumber": "4242424242424242"}),
            201,
        )
        .await;
        let m = expect(
            addr,
            "POST",
            "/membership",
            token,
            json!({"customerKey": customer, "subscriptionName": "Usage",
                "webhookUrl": "https://merchant.example/hooks",
                "productInfo": {"orderId": format!("usage-{i}")},
                "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                "billingCycle": {"intervalType": "Monthly"},
                "meteredPriceIds": [price["priceId"]]}),
            201,
        )
        .await;
        let key = m["membershipKey"].as_str().expect("key").to_string();
        let (status, paid) = send(
            addr,
            "POST",
            &format!("/test-helpers/membership/{key}/pay"),
            token,
            None,
        )
        .await;
        assert_eq!(status, 200, "pay: {paid}");
        keys.push(key);
    }
    keys
}

/// Fills `usage_events` with `n` rows of a membership id no membership has, in one statement.
async fn seed_stored(url: &str, backend: Backend, merchant_id: i64, n: i64) {
    if n == 0 {
        return;
    }
    let store = Store::connect(url).await.expect("connect");
    let series = match backend {
        Backend::Postgres => "SELECT g AS i FROM generate_series(1, $2) AS g".to_string(),
        Backend::Sqlite => "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s \
             WHERE i < $2) SELECT i FROM s"
            .to_string(),
    };
    let sql = format!(
        "INSERT INTO usage_events (merchant_id, transaction_id, membership_id, meter_id, \
         period_start, occurred_at, value, received_at) \
         SELECT $1, 'stored-' || CAST(i AS TEXT), -1, -1, 0, 0, NULL, 0 FROM ({series}) AS q"
    );
    let started = Instant::now();
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(n)
        .execute(store.writer())
        .await
        .expect("seed events");
    eprintln!(
        "stored {n} events in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    store.close().await;
}

/// `clients` HTTP clients posting 1,000-event requests for `duration`, client `c` for
/// `keys[c]`; events per second taken.
async fn ingest_rate(
    addr: SocketAddr,
    token: &str,
    keys: &[String],
    duration: Duration,
) -> (f64, u64) {
    let mut connections = Vec::with_capacity(keys.len());
    for _ in keys {
        connections.push(http::Connection::open(addr).await.expect("connect"));
    }
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = connections
        .into_iter()
        .zip(keys.iter().cloned())
        .enumerate()
        .map(|(c, (mut connection, key))| {
            let token = token.to_string();
            tokio::spawn(async move {
                let (mut accepted, mut n) = (0u64, 0u64);
                while Instant::now() < deadline {
                    let events: Vec<Value> = (0..BATCH)
                        .map(|i| {
                            json!({"transactionId": format!("c{c}-{n}-{i}"),
                            "membershipKey": key, "code": "calls"})
                        })
                        .collect();
                    let body = json!({ "events": events }).to_string();
                    let request = http::request(
                        "POST",
                        &format!("{BASE}/usage-events"),
                        &token,
                        Some(body.as_bytes()),
                    );
                    let response = connection.send(&request).await.expect("request");
                    assert_eq!(
                        response.status,
                        202,
                        "{}",
                        String::from_utf8_lossy(response.body)
                    );
                    accepted += BATCH as u64;
                    n += 1;
                }
                accepted
            })
        })
        .collect();
    let mut accepted = 0;
    for task in tasks {
        accepted += task.await.expect("client");
    }
    (
        accepted as f64 / started.elapsed().as_secs_f64(),
        accepted / keys.len() as u64,
    )
}

/// The median time of 200 `GET /membership/{key}/usage`.
async fn usage_read(addr: SocketAddr, token: &str, key: &str) -> Duration {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let request = http::request(
        "GET",
        &format!("{BASE}/membership/{key}/usage"),
        token,
        None,
    );
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        let t = Instant::now();
        let response = connection.send(&request).await.expect("usage");
        assert_eq!(response.status, 200);
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

async fn bench_backend(backend: Backend, plan: &Plan) -> Vec<Row> {
    let raw = raw_rate(backend, plan.clients, plan.duration).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = ScratchDatabase::create(backend, "usage_api").await;
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("RECUR_LISTEN", "127.0.0.1:0".into());
    env.insert("RECUR_DATA_DIR", dir.path().display().to_string());
    env.insert("RECUR_DEMO_MERCHANT", "false".into());
    env.insert("RECUR_DATABASE_URL", db.url.clone());
    env.insert("RECUR_LOG", "warn".into());
    let config = Config::from_sources(None, |k| env.get(k).cloned()).expect("config");
    // recur serves from a runtime of its own, as `recur serve` runs in a process of its own.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("server runtime");
    let handle = server_runtime.handle().clone();
    let server = tokio::task::spawn_blocking(move || handle.block_on(app::start(config)))
        .await
        .expect("server start")
        .expect("server");
    let merchant = merchants::create(&server.state, "Bench", Mode::Sandbox)
        .await
        .expect("merchant");
    let addr = server.addr;
    let auth = json!({"userName": merchant.user_name, "password": merchant.password});
    let token = expect(addr, "POST", "/auth", "", auth, 200).await["accessToken"]
        .as_str()
        .expect("token")
        .to_string();
    let mut keys =
        metered_memberships(addr, &token, &merchant.processor_key, plan.clients + 1).await;
    let few = keys.pop().expect("a membership for one event");
    seed_stored(&db.url, backend, merchant.merchant_id, plan.stored).await;
    expect(
        addr,
        "POST",
        "/usage-events",
        &token,
        json!({"events": [{"transactionId": "one", "membershipKey": few, "code": "calls"}]}),
        202,
    )
    .await;
    let (api, per_client) = ingest_rate(addr, &token, &keys, plan.duration).await;
    let read_many = usage_read(addr, &token, &keys[0]).await;
    let read_few = usage_read(addr, &token, &few).await;
    server.abort();
    server.state.store.close().await;
    server_runtime.shutdown_background();
    db.remove().await;
    vec![Row {
        backend,
        stored: plan.stored,
        clients: plan.clients,
        api,
        raw,
        read_many,
        read_few,
        events_in_period: per_client,
    }]
}

fn main() {
    let args = Args::from_env();
    let seconds: u64 = args.parsed("--seconds", 5);
    let plan = Plan {
        duration: Duration::from_secs(seconds),
        clients: args.parsed("--clients", 8),
        stored: args.parsed("--stored", 0),
    };
    let rows = report::per_backend(args.backends(), |backend| bench_backend(backend, &plan));
    report::print_table(
        &format!("usage events over HTTP in requests of {BATCH} vs raw {BATCH}-row inserts, {seconds} s each"),
        &["backend", "events stored before", "clients", "recur events/s", "raw rows/s",
            "recur / raw", "usage read p50, period of N events", "usage read p50, 1 event"],
        rows.iter().map(|r| {
            format!(
                "| {:?} | {} | {} | {:.0} | {:.0} | {:.0}% | {:.2} ms (N = {}) | {:.2} ms |",
                r.backend,
                r.stored,
                r.clients,
                r.api,
                r.raw,
                100.0 * r.api / r.raw,
                r.read_many.as_secs_f64() * 1e3,
                r.events_in_period,
                r.read_few.as_secs_f64() * 1e3,
            )
        }),
    );
}
