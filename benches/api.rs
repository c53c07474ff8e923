//! API throughput and latency against the raw rate of the same database, in one run.
//!
//! `cargo bench --bench api -- [--seconds N] [--backend sqlite|postgres|both] [--clients 1,8,64]
//! [--stored N]`
//!
//! `--stored N` first fills the API database with N customers of the benchmark's merchant, each
//! with a card, an Active membership and its first invoice, to show whether a request's cost
//! grows with the rows already stored.
//!
//! For each backend it measures, at 1, 8 and 64 concurrent clients:
//! - the raw single-row rate of the database: one-row insert transactions and primary-key selects
//!   (SQLite: a plain loop over the same pool settings recur uses; PostgreSQL: `pgbench` with an
//!   equivalent script when it is installed, otherwise the same loop as for SQLite);
//! - recur's create-customer (all e-mails new, and a mix where every third e-mail is an existing
//!   customer's), get-customer, create-membership and get-membership requests over
//!   HTTP, end to end (get-customer also with a read API key in place of the access token), from a lean keep-alive client (`support/http.rs`, one connection per
//!   client, as `wrk` and `oha` work);
//! - the same client against `GET /healthz`, a route that does no work: the most requests per
//!   second loopback HTTP reaches on this machine, which bounds every API ratio from above; and
//!   against `GET /readyz`, which runs one trivial statement (`SELECT 1`): the ceiling of a
//!   request that reads, against which the reads' target is set;
//! - each operation's own store call made directly (`support/statements.rs`): the same
//!   statement through the same pools, without HTTP, authentication, validation or JSON;
//!
//! and prints requests per second, p50/p99 latency and the ratio API / raw, split into
//! statement / raw (what the row itself costs the database) and API / statement (what the
//! server adds), and the most a request that runs a statement of its own could reach: an empty
//! request and a raw statement, one after the other (`one_statement_limit`). A second table
//! splits each run's CPU time per operation between the load client, recur (which serves from a
//! runtime of its own) and the database (`support/cpu.rs`), against the raw run's, and gives the
//! ratio the CPU alone allows with and without recur's part. Before any of it, it times a
//! round trip between two threads (`support/handoff.rs`): the cost of the wake-ups that bound
//! the one-client rows. PostgreSQL needs
//! `RECUR_TEST_POSTGRES_URL` (an administrative URL, as for the tests). Absolute numbers depend on
//! the machine; the ratios are the result.

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
use serde_json::json;

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/args.rs"]
mod args;
#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/handoff.rs"]
mod handoff;
#[path = "support/http.rs"]
mod http;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/raw.rs"]
mod raw;
#[path = "support/report.rs"]
mod report;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/seed.rs"]
#[allow(dead_code)]
mod seed;
#[path = "support/statements.rs"]
mod statements;
#[path = "support/table.rs"]
mod table;

use args::Args;
use measure::{drive, Run, Sample};
use raw::{raw_loop, raw_postgres};
use scratch::ScratchDatabase;
use table::{
    auth_rows, cpu_row, readyz_rows, table_row, Row, AUTH_COLUMNS, COLUMNS, CPU_COLUMNS,
    READYZ_COLUMNS,
};

const CONCURRENCY: [usize; 3] = [1, 8, 64];

/// What one benchmark run measures.
#[derive(Clone, Debug)]
struct Plan {
    duration: Duration,
    clients: Vec<usize>,
    stored: i64,
}

/// The API's path prefix.
const BASE: &str = "/api/subscriptions/v1";

/// Logs in as the benchmark's merchant and returns its access token.
async fn access_token(addr: SocketAddr, user_name: &str, password: &str) -> String {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let body = json!({"userName": user_name, "password": password}).to_string();
    let request = http::request("POST", &format!("{BASE}/auth"), "", Some(body.as_bytes()));
    let response = connection.send(&request).await.expect("auth");
    created_key(response, 200, "accessToken")
}

/// Creates a read API key with `token` and returns its secret.
async fn read_api_key(addr: SocketAddr, token: &str) -> String {
    let mut connection = http::Connection::open(addr).await.expect("connect");
    let body = json!({"name": "bench", "scope": "read"}).to_string();
    let request = http::request(
        "POST",
        &format!("{BASE}/api-keys"),
        token,
        Some(body.as_bytes()),
    );
    let response = connection.send(&request).await.expect("create API key");
    created_key(response, 201, "secret")
}

/// The string field `field` of a response that must have `status`.
fn created_key(response: http::Response<'_>, status: u16, field: &str) -> String {
    expect_status(&response, status, field);
    let record: serde_json::Value = serde_json::from_slice(response.body).expect("JSON body");
    record[field].as_str().expect("key").to_string()
}

/// Panics unless the response has `status`; keeps nothing.
fn expect_status(response: &http::Response<'_>, status: u16, what: &str) -> Option<String> {
    assert_eq!(
        response.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(response.body)
    );
    None
}

/// Where and how hard one measurement drives the server.
struct Load {
    addr: SocketAddr,
    concurrency: usize,
    duration: Duration,
}

/// Runs `load.concurrency` clients for `load.duration`, each on a keep-alive connection of its own: the
/// n-th request of the run is `request(n)`, and `keep` checks each response and may keep a string
/// of it (a created key). Returns the latencies and every kept string.
async fn drive_http<R, K>(load: &Load, request: R, keep: K) -> (Sample, Vec<String>)
where
    R: Fn(u64) -> Vec<u8> + Send + Sync + 'static,
    K: Fn(http::Response<'_>) -> Option<String> + Send + Sync + 'static,
{
    let (request, keep) = (Arc::new(request), Arc::new(keep));
    let counter = Arc::new(AtomicU64::new(0));
    let mut connections = Vec::with_capacity(load.concurrency);
    for _ in 0..load.concurrency {
        connections.push(http::Connection::open(load.addr).await.expect("connect"));
    }
    let started = Instant::now();
    let deadline = started + load.duration;
    let ((latencies, kept, elapsed), cost) = cpu::measure(async {
        let tasks: Vec<_> = connections
            .into_iter()
            .map(|mut connection| {
                let (request, keep, counter) = (request.clone(), keep.clone(), counter.clone());
                tokio::spawn(async move {
                    let (mut latencies, mut kept) = (Vec::new(), Vec::new());
                    while Instant::now() < deadline {
                        let bytes = request(counter.fetch_add(1, Ordering::Relaxed));
                        let t = Instant::now();
                        let response = connection.send(&bytes).await.expect("request");
                        latencies.push(t.elapsed());
                        kept.extend(keep(response));
                    }
                    (latencies, kept)
                })
            })
            .collect();
        let (mut latencies, mut kept) = (Vec::new(), Vec::new());
        for task in tasks {
            let (l, k) = task.await.expect("bench task");
            latencies.extend(l);
            kept.extend(k);
        }
        (latencies, kept, started.elapsed())
    })
    .await;
    let sample = Sample {
        latencies,
        elapsed,
        cost,
    };
    (sample, kept)
}

/// Create-customer requests whose n-th body has the e-mail `{prefix}-{email(n)}@example.com`:
/// with [`std::convert::identity`] each one new, with [`statements::repeating`] every third one
/// an e-mail stored before (answered 200 with the existing customer, an idempotent request the
/// interface documents make normal). Returns the latencies and the keys answered.
async fn create_customers(
    load: &Load,
    token: String,
    processor_key: String,
    prefix: String,
    email: fn(u64) -> u64,
) -> (Sample, Vec<String>) {
    drive_http(
        load,
        move |n| {
            let body = json!({
                "processorKey": processor_key, "firstName": "Bench", "lastName": "Mark",
                "email": format!("{prefix}-{}@example.com", email(n)),
                "phone": "+4915112345678", "countryCode": "DE"
            });
            http::request(
                "POST",
                &format!("{BASE}/customer"),
                &token,
                Some(body.to_string().as_bytes()),
            )
        },
        |response| {
            let status = if response.status == 200 { 200 } else { 201 };
            Some(created_key(response, status, "customerKey"))
        },
    )
    .await
}

/// Get-customer requests for `customers` in turn, sent with the bearer credential `auth`.
async fn get_customers(load: &Load, auth: String, customers: Arc<Vec<String>>) -> Sample {
    let (sample, _) = drive_http(
        load,
        move |n| {
            let key = &customers[(n as usize) % customers.len()];
            http::request("GET", &format!("{BASE}/customer/{key}"), &auth, None)
        },
        |response| expect_status(&response, 200, "get-customer"),
    )
    .await;
    sample
}

/// Fills the database with `count` customers of `merchant_id`, each with a card and an Active
/// membership with its paid first invoice (one statement per table).
async fn seed_stored(url: &str, merchant_id: i64, processor_key: &str, count: i64) {
    if count == 0 {
        return;
    }
    let store = Store::connect(url).await.expect("connect");
    let now = chrono::Utc::now();
    let start = now.timestamp_micros();
    let end = (now + chrono::TimeDelta::days(30)).timestamp_micros();
    let started = Instant::now();
    seed::customers(
        &store,
        merchant_id,
        processor_key,
        "cstmr_seed",
        count,
        start,
    )
    .await;
    seed::cards(&store, merchant_id, "cstmr_seed", "sbx_tok_seed", start).await;
    seed::memberships(&store, merchant_id, "cstmr_seed", start, end).await;
    eprintln!(
        "{:?}: {count} customers with memberships stored in {:?}",
        store.backend(),
        started.elapsed()
    );
    store.close().await;
}

async fn bench_backend(backend: Backend, plan: &Plan) -> Vec<Row> {
    let duration = plan.duration;
    let raw_db = ScratchDatabase::create(backend, "raw").await;
    let raw_url = raw_db.url.clone();
    let api_dir = tempfile::tempdir().expect("temp dir");
    let api_db = ScratchDatabase::create(backend, "api").await;
    let api_url = api_db.url.clone();
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("RECUR_LISTEN", "127.0.0.1:0".into());
    env.insert("RECUR_DATA_DIR", api_dir.path().display().to_string());
    env.insert("RECUR_DEMO_MERCHANT", "false".into());
    env.insert("RECUR_DATABASE_URL", api_url.clone());
    env.insert("RECUR_LOG", "warn".into());
    let config = Config::from_sources(None, |k| env.get(k).cloned()).expect("config");
    // recur serves from a runtime of its own, as `recur serve` runs in a process of its own, so
    // that its threads' CPU time is told apart from the load client's.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name(cpu::SERVER_THREAD)
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
    seed_stored(
        &api_url,
        merchant.merchant_id,
        &merchant.processor_key,
        plan.stored,
    )
    .await;
    let token = access_token(server.addr, &merchant.user_name, &merchant.password).await;
    let api_key = read_api_key(server.addr, &token).await;
    let addr = server.addr;
    // The statements run from the client's runtime, through pools of its own with recur's
    // settings: a connection is driven by the runtime that opened it.
    let statement_store = Store::connect(&api_url).await.expect("connect");
    let subject = |tag: String| statements::Subject {
        store: statement_store.clone(),
        merchant_id: merchant.merchant_id,
        processor_key: merchant.processor_key.clone(),
        tag,
    };
    let run = |sample: Sample| Some(Run::of(&sample));
    let mut rows = Vec::new();
    for concurrency in plan.clients.iter().copied() {
        let subject = subject(format!("{concurrency}"));
        let (raw_insert, raw_select) = match backend {
            Backend::Sqlite => raw_loop(&raw_url, concurrency, duration).await,
            Backend::Postgres => raw_postgres(&raw_url, concurrency, duration).await,
        };
        let load = Load {
            addr,
            concurrency,
            duration,
        };
        let (creates, customers) = create_customers(
            &load,
            token.clone(),
            merchant.processor_key.clone(),
            format!("bench-{concurrency}"),
            std::convert::identity,
        )
        .await;
        let customers = Arc::new(customers);
        let statement_creates = drive(
            concurrency,
            duration,
            statements::create_customer(subject.clone(), std::convert::identity),
        )
        .await;
        let (repeating_creates, _) = create_customers(
            &load,
            token.clone(),
            merchant.processor_key.clone(),
            format!("bench-repeat-{concurrency}"),
            statements::repeating,
        )
        .await;
        let statement_repeating_creates = drive(
            concurrency,
            duration,
            statements::create_customer(
                statements::Subject {
                    tag: format!("repeat-{concurrency}"),
                    ..subject.clone()
                },
                statements::repeating,
            ),
        )
        .await;
        let gets = get_customers(&load, token.clone(), customers.clone()).await;
        // The same reads with a read API key in place of the access token.
        let key_gets = get_customers(&load, api_key.clone(), customers.clone()).await;
        let statement_gets = run(drive(
            concurrency,
            duration,
            statements::get_customer(subject.clone(), customers.clone()),
        )
        .await);
        let (t, keys) = (token.clone(), customers.clone());
        let (membership_creates, membership_keys) = drive_http(
            &load,
            move |n| {
                let body = json!({
                    "customerKey": keys[(n as usize) % keys.len()],
                    "subscriptionName": "Bench plan",
                    "webhookUrl": "https://merchant.example/hooks",
                    "productInfo": {"orderId": format!("bench-{concurrency}-{n}")},
                    "pricingInfo": {"currency": "EUR", "totalAmount": "29.97", "pricePerUnit": 9.99, "quantity": 3},
                    "billingCycle": {"intervalType": "Monthly", "intervalCount": 1}
                });
                http::request("POST", &format!("{BASE}/membership"), &t, Some(body.to_string().as_bytes()))
            },
            |response| Some(created_key(response, 201, "membershipKey")),
        )
        .await;
        let statement_membership_creates = drive(
            concurrency,
            duration,
            statements::create_membership(subject.clone(), customers),
        )
        .await;
        let membership_keys = Arc::new(membership_keys);
        let (t, keys) = (token.clone(), membership_keys.clone());
        let (membership_gets, _) = drive_http(
            &load,
            move |n| {
                let key = &keys[(n as usize) % keys.len()];
                http::request("GET", &format!("{BASE}/membership/{key}"), &t, None)
            },
            |response| expect_status(&response, 200, "get-membership"),
        )
        .await;
        let statement_membership_gets = drive(
            concurrency,
            duration,
            statements::get_membership(subject.clone(), membership_keys),
        )
        .await;
        // The ceiling of any request on this machine: the same client and headers against a
        // route that does no work (no token check, no database).
        let t = token.clone();
        let (empty, _) = drive_http(
            &load,
            move |_| http::request("GET", "/healthz", &t, None),
            |response| expect_status(&response, 200, "healthz"),
        )
        .await;
        // The ceiling of a request that runs a statement: the same against `GET /readyz`
        // (`SELECT 1`, no token check), the reference of the reads' target.
        let t = token.clone();
        let (ready, _) = drive_http(
            &load,
            move |_| http::request("GET", "/readyz", &t, None),
            |response| expect_status(&response, 200, "readyz"),
        )
        .await;
        let ceiling = empty.rate();
        for (operation, sample, raw, statement) in [
            (
                "create-membership (write)",
                membership_creates,
                raw_insert,
                run(statement_membership_creates),
            ),
            (
                table::GET_MEMBERSHIP,
                membership_gets,
                raw_select,
                run(statement_membership_gets),
            ),
            (
                "create-customer (write)",
                creates,
                raw_insert,
                run(statement_creates),
            ),
            (
                table::REPEATING_CREATE_CUSTOMER,
                repeating_creates,
                raw_insert,
                run(statement_repeating_creates),
            ),
            (table::GET_CUSTOMER, gets, raw_select, statement_gets),
            (
                table::KEY_GET_CUSTOMER,
                key_gets,
                raw_select,
                statement_gets,
            ),
            ("ceiling: GET /healthz", empty, raw_select, None),
            (table::READYZ, ready, raw_select, None),
        ] {
            rows.push(Row {
                backend,
                stored: plan.stored,
                operation,
                concurrency,
                sample,
                raw,
                statement,
                ceiling,
            });
        }
    }
    server.abort();
    server.state.store.close().await;
    statement_store.close().await;
    server_runtime.shutdown_background();
    raw_db.remove().await;
    api_db.remove().await;
    rows
}

fn main() {
    let args = Args::from_env();
    let seconds: u64 = args.parsed("--seconds", 5);
    let plan = Plan {
        duration: Duration::from_secs(seconds),
        clients: args
            .value("--clients")
            .map(|list| {
                list.split(',')
                    .filter_map(|c| c.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_else(|| CONCURRENCY.to_vec()),
        stored: args.parsed("--stored", 0),
    };
    // Timed first, on an idle machine, as in a one-client run.
    let handoff = handoff::round_trip();
    let rows = report::per_backend(args.backends(), |backend| bench_backend(backend, &plan));
    report::print_table(
        &format!("recur API vs raw database, {seconds} s per measurement"),
        &COLUMNS,
        rows.iter().map(table_row),
    );
    report::print_table(
        "reads against GET /readyz (one trivial statement) at the same concurrency",
        &READYZ_COLUMNS,
        readyz_rows(&rows),
    );
    report::print_table(
        "get-customer with an access token and with an API key",
        &AUTH_COLUMNS,
        auth_rows(&rows),
    );
    report::print_table(
        "CPU per operation by part (µs), and what it bounds",
        &CPU_COLUMNS,
        rows.iter().filter_map(cpu_row),
    );
    match handoff {
        Some(round_trip) => println!(
            "\nA round trip between two threads (one byte each way over a Unix socket pair, two \
             wake-ups) took {:.1} µs on this machine. With one client a raw statement is two \
             wake-ups; a request that runs a statement of its own is at least four.",
            round_trip.as_secs_f64() * 1e6
        ),
        None => println!("\nThe thread round trip could not be timed (no Unix socket pair)."),
    }
}
