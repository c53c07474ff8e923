//! A page of `GET /customers` costs the same at 10 k and at 1 M customers, and a page of a webhook
//! endpoint's attempt log the same at 10 k and 1 M attempts: each list request timed at every
//! size, and the ratio of the largest size to the smallest.
//!
//! `cargo bench --bench lists -- [--sizes 10000,1000000] [--seconds N] [--backend sqlite|postgres]`
//!
//! For each backend and each size it starts recur on a scratch database of its own with one
//! sandbox merchant, stores 40 customers named Quinn Quayle through the API and the rest in bulk
//! (one `INSERT … SELECT`, `support/seed.rs`: `Seed Row`, `bench{n}@example.com`; then `ANALYZE`
//! on PostgreSQL), and registers a webhook endpoint through the API whose attempt log gets as
//! many rows in bulk (`endpoint_attempts`). It then times these requests from one keep-alive client (`support/http.rs`)
//! for N seconds (5 by default) each per size, in twenty rounds in which the sizes take turns
//! (the machine's load, shared with other work, then weighs on every size alike):
//!
//! - the first page, `?limit=20`;
//! - a deep page: the cursor after the 41st-oldest customer (minted with the server's key, as the
//!   server mints it: walking to it would take 50,000 requests at 1 M);
//! - `?email=` of one customer, in capitals;
//! - `?q=quay`: a prefix that matches the same 40 customers at every size;
//! - `?q=bench77`: a prefix that matches 1.1 % of the customers at every size, so its matches grow
//!   with the table (`docs/design.md`, Lists: a prefix costs its matches);
//! - the endpoint's attempt log, `GET /webhook-endpoints/{id}/deliveries?limit=20`, first page
//!   and the page after its 41st-oldest attempt.
//!
//! It prints the lower quartile and the median latency at each size, and their ratios largest /
//! smallest: flat is 1.0. The machine is shared: the upper half of the latencies holds waits for
//! a core taken by other processes, which come and go, so the median of one run may land in
//! either of two modes; the lower quartile is the request's own work, steady from run to run.
//! The databases of all sizes exist at once, so that their turns can alternate.
//! PostgreSQL needs `RECUR_TEST_POSTGRES_URL`, as the tests do.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use recur::api::client_address::PeerAddress;
use recur::api::pagination::{seal, ListScope};
use recur::state::AppState;
use recur::store::{to_micros, Backend};
use serde_json::json;

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
#[path = "support/seed.rs"]
#[allow(dead_code)]
mod seed;
#[path = "support/state.rs"]
mod state;

use args::Args;
use scratch::ScratchDatabase;

/// The API's path prefix.
const BASE: &str = "/api/subscriptions/v1";

/// Customers named Quinn Quayle, stored first: `q=quay` matches them at every size.
const NAMED: i64 = 40;

/// One list request: its label and path.
struct Case {
    label: &'static str,
    path: String,
}

/// The requests timed at one size; the deep pages' cursors depend on the stored rows.
fn cases(state: &AppState, merchant_id: i64, deep_after: i64, endpoint: &Endpoint) -> Vec<Case> {
    let cursor = seal(
        &state.keys,
        &ListScope::new("customers", merchant_id, &[]),
        deep_after,
    );
    [
        ("first page, limit=20", "limit=20".to_string()),
        (
            "deep page (41st-oldest cursor)",
            format!("limit=20&cursor={cursor}"),
        ),
        (
            "email= (exact, capitals)",
            "email=BENCH1%40EXAMPLE.COM".into(),
        ),
        ("q= matching 40", "q=quay".into()),
        ("q= matching 1.1 %", "q=bench77".into()),
    ]
    .into_iter()
    .map(|(label, query)| Case {
        label,
        path: format!("{BASE}/customers?{query}"),
    })
    .chain(endpoint_cases(state, merchant_id, endpoint))
    .collect()
}

/// A webhook endpoint whose attempt log is timed: its id and the row its deep page follows.
struct Endpoint {
    key: String,
    deep_after: i64,
}

/// The attempt-log requests timed at one size.
fn endpoint_cases(state: &AppState, merchant_id: i64, endpoint: &Endpoint) -> Vec<Case> {
    let scope = ListScope::new(
        "endpoint-deliveries",
        merchant_id,
        &[("endpoint", Some(&endpoint.key))],
    );
    let cursor = seal(&state.keys, &scope, endpoint.deep_after);
    let path = format!("{BASE}/webhook-endpoints/{}/deliveries", endpoint.key);
    vec![
        Case {
            label: "attempt log, first page",
            path: format!("{path}?limit=20"),
        },
        Case {
            label: "attempt log, deep page",
            path: format!("{path}?limit=20&cursor={cursor}"),
        },
    ]
}

/// Latencies of `path`, requested one after the other on one connection for `duration`, after
/// a warm-up. Each answer must be a page with records.
async fn latencies(addr: SocketAddr, token: &str, path: &str, duration: Duration) -> Vec<Duration> {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let request = http::request("GET", path, token, None);
    let mut latencies = Vec::new();
    let warm_up = 10;
    let deadline = Instant::now() + duration;
    while latencies.len() < warm_up || Instant::now() < deadline {
        let started = Instant::now();
        let response = connection.send(&request).await.expect("request");
        let elapsed = started.elapsed();
        assert_eq!(
            response.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(response.body)
        );
        let page: serde_json::Value = serde_json::from_slice(response.body).expect("JSON page");
        assert!(!page["data"].as_array().expect("data").is_empty(), "{path}");
        latencies.push(elapsed);
    }
    latencies.split_off(warm_up)
}

/// The lower quartile and the median of `samples`.
fn quartile_and_median(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort_unstable();
    (samples[samples.len() / 4], samples[samples.len() / 2])
}

/// Serves recur's API for `state` on a port of its own.
async fn serve(state: &AppState) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = recur::api::router(state.clone(), recur::pages::router(state))
        .into_make_service_with_connect_info::<PeerAddress>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Answers `request` on a fresh connection; the JSON body of the status expected.
async fn call(addr: SocketAddr, request: &[u8], status: u16) -> serde_json::Value {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let response = connection.send(request).await.expect("request");
    assert_eq!(
        response.status,
        status,
        "{}",
        String::from_utf8_lossy(response.body)
    );
    serde_json::from_slice(response.body).expect("JSON body")
}

/// recur on a database of its own holding `size` customers of one merchant, served.
struct Subject {
    db: ScratchDatabase,
    state: AppState,
    addr: SocketAddr,
    token: String,
    cases: Vec<Case>,
}

impl Subject {
    /// Starts recur on a scratch database and stores `size` customers: the 40 named ones through
    /// the API, then the rest in one statement.
    async fn seeded(backend: Backend, size: i64, dir: &std::path::Path) -> Self {
        let db = ScratchDatabase::create(backend, &format!("lists{size}")).await;
        let (state, merchant) = state::with_merchant(&db.url, dir, &[]).await;
        let addr = serve(&state).await;
        let login =
            json!({"userName": merchant.user_name, "password": merchant.password}).to_string();
        let auth = http::request("POST", &format!("{BASE}/auth"), "", Some(login.as_bytes()));
        let token = call(addr, &auth, 200).await["accessToken"]
            .as_str()
            .expect("token")
            .to_string();
        for n in 1..=NAMED {
            let body = json!({
                "processorKey": merchant.processor_key, "firstName": "Quinn",
                "lastName": "Quayle", "email": format!("quinn-{n}@shop.example"),
                "phone": "+4915112345678", "countryCode": "DE"
            })
            .to_string();
            let path = format!("{BASE}/customer");
            call(
                addr,
                &http::request("POST", &path, &token, Some(body.as_bytes())),
                201,
            )
            .await;
        }
        let started = Instant::now();
        seed::customers(
            &state.store,
            merchant.merchant_id,
            &merchant.processor_key,
            "bench",
            size - NAMED,
            to_micros(chrono::Utc::now()),
        )
        .await;
        if backend == Backend::Postgres {
            sqlx::query("ANALYZE customers")
                .execute(state.store.pool())
                .await
                .expect("analyze");
        }
        eprintln!(
            "{backend:?}: {size} customers stored in {:?}",
            started.elapsed()
        );
        // The cursor after the 41st-oldest customer: the deep page holds the 20 before it.
        let deep_after: i64 = sqlx::query_scalar(
            "SELECT id FROM customers WHERE merchant_id = $1 ORDER BY id LIMIT 1 OFFSET 40",
        )
        .bind(merchant.merchant_id)
        .fetch_one(state.store.pool())
        .await
        .expect("41st-oldest customer");
        let endpoint =
            Self::endpoint_with_attempts(&state, addr, &token, merchant.merchant_id, size).await;
        let cases = cases(&state, merchant.merchant_id, deep_after, &endpoint);
        Self {
            db,
            state,
            addr,
            token,
            cases,
        }
    }
}

impl Subject {
    /// Registers a webhook endpoint through the API and stores `size` attempts in its log.
    async fn endpoint_with_attempts(
        state: &AppState,
        addr: SocketAddr,
        token: &str,
        merchant_id: i64,
        size: i64,
    ) -> Endpoint {
        let body = json!({"url": "https://merchant.example/endpoint"}).to_string();
        let path = format!("{BASE}/webhook-endpoints");
        let created = call(
            addr,
            &http::request("POST", &path, token, Some(body.as_bytes())),
            201,
        )
        .await;
        let key = created["endpointId"]
            .as_str()
            .expect("endpoint id")
            .to_string();
        let id: i64 =
            sqlx::query_scalar("SELECT id FROM webhook_endpoints WHERE endpoint_key = $1")
                .bind(&key)
                .fetch_one(state.store.pool())
                .await
                .expect("endpoint row");
        seed::endpoint_attempts(
            &state.store,
            merchant_id,
            id,
            size,
            to_micros(chrono::Utc::now()),
        )
        .await;
        let deep_after: i64 = sqlx::query_scalar(
            "SELECT id FROM endpoint_attempts WHERE endpoint_id = $1 ORDER BY id LIMIT 1 OFFSET 40",
        )
        .bind(id)
        .fetch_one(state.store.pool())
        .await
        .expect("41st-oldest attempt");
        Endpoint { key, deep_after }
    }
}

/// Rounds of a measurement: the sizes take turns, so a change in the machine's load (shared by
/// other work) falls on every size alike.
const ROUNDS: u32 = 20;

async fn bench_backend(backend: Backend, sizes: &[i64], duration: Duration) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut subjects = Vec::new();
    for &size in sizes {
        let data = dir.path().join(size.to_string());
        subjects.push(Subject::seeded(backend, size, &data).await);
    }
    let labels: Vec<&str> = subjects[0].cases.iter().map(|case| case.label).collect();
    let mut rows = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); subjects.len()];
        for _ in 0..ROUNDS {
            for (subject, samples) in subjects.iter().zip(samples.iter_mut()) {
                let path = &subject.cases[i].path;
                let turn = duration / ROUNDS;
                samples.extend(latencies(subject.addr, &subject.token, path, turn).await);
            }
        }
        let figures: Vec<(Duration, Duration)> =
            samples.into_iter().map(quartile_and_median).collect();
        let columns: Vec<String> = figures
            .iter()
            .map(|(p25, p50)| format!("{} / {}", p25.as_micros(), p50.as_micros()))
            .collect();
        let (first, last) = (figures[0], figures[figures.len() - 1]);
        let ratio = |pick: fn((Duration, Duration)) -> Duration| {
            pick(last).as_secs_f64() / pick(first).as_secs_f64()
        };
        rows.push(format!(
            "| {backend:?} | {label} | {} | {:.2} | {:.2} |",
            columns.join(" | "),
            ratio(|(p25, _)| p25),
            ratio(|(_, p50)| p50)
        ));
    }
    for subject in subjects {
        subject.state.store.close().await;
        subject.db.remove().await;
    }
    rows
}

fn main() {
    let args = Args::from_env();
    let mut sizes: Vec<i64> = args
        .value("--sizes")
        .unwrap_or_else(|| "10000,1000000".into())
        .split(',')
        .filter_map(|size| size.trim().parse().ok())
        .filter(|&size| size > NAMED)
        .collect();
    sizes.sort_unstable();
    assert!(!sizes.is_empty(), "--sizes: customer counts above {NAMED}");
    let duration = Duration::from_secs(args.parsed("--seconds", 5));
    let rows = report::per_backend(args.backends(), |backend| {
        let sizes = sizes.clone();
        async move { bench_backend(backend, &sizes, duration).await }
    });
    let mut columns = vec!["backend", "request"];
    let headers: Vec<String> = sizes
        .iter()
        .map(|size| format!("{size} customers: p25 / p50 µs"))
        .collect();
    columns.extend(headers.iter().map(String::as_str));
    columns.extend(["ratio largest / smallest, p25", "ratio, p50"]);
    report::print_table(
        "GET /customers: latency of one client (lower quartile / median) by customers stored",
        &columns,
        rows,
    );
}
