//! A page of a list costs the same at 10 k and at 1 M rows: `GET /customers`, a webhook
//! endpoint's attempt log, `GET /products`, `GET /prices` and `GET /coupons`, each list request
//! timed at every size, and the ratio of the largest size to the smallest.
//!
//! `cargo bench --bench lists -- [--sizes 10000,1000000] [--seconds N] [--backend sqlite|postgres]
//! [--lists customers,attempts,products,prices,coupons]`
//!
//! For each backend and each size it starts recur on a scratch database of its own with one
//! sandbox merchant and stores, for the lists asked for (every one by default), as many rows as
//! the size says, the few that filters look for through the API and the rest in bulk (one
//! `INSERT … SELECT` per table, `support/seed.rs`; then `ANALYZE` on PostgreSQL):
//!
//! - customers: 40 named Quinn Quayle through the API, the rest `Seed Row`,
//!   `bench{n}@example.com`;
//! - attempts: a webhook endpoint registered through the API, whose attempt log gets the rows;
//! - products: one through the API, the rest in bulk; prices: 40 of that product through the
//!   API, the rest one of each bulk product; coupons: all in bulk.
//!
//! It then times these requests from one keep-alive client (`support/http.rs`) for N seconds (5
//! by default) each per size, in twenty rounds in which the sizes take turns (the machine's load,
//! shared with other work, then weighs on every size alike):
//!
//! - customers: the first page, `?limit=20`; a deep page: the cursor after the 41st-oldest
//!   customer (minted with the server's key, as the server mints it: walking to it would take
//!   50,000 requests at 1 M); `?email=` of one customer, in capitals; `?q=quay`: a prefix that
//!   matches the same 40 customers at every size; `?q=bench77`: a prefix that matches 1.1 % of the
//!   customers at every size, so its matches grow with the table (`docs/api.md`, Lists: a
//!   prefix costs its matches);
//! - the endpoint's attempt log, `GET /webhook-endpoints/{id}/deliveries?limit=20`, first page
//!   and the page after its 41st-oldest attempt;
//! - products: the first page, the page after the 41st-oldest product, `?active=true`;
//! - prices: the first page, the page after the 41st-oldest price, `?productId=` of the product
//!   holding 40 prices at every size, and that with `&active=true`;
//! - coupons: the first page and the page after the 41st-oldest coupon.
//!
//! It prints the lower quartile and the median latency at each size, and their ratios largest /
//! smallest: flat is 1.0. The machine is shared: the upper half of the latencies holds waits for
//! a core taken by other processes, which come and go, so the median of one run may land in
//! either of two modes; the lower quartile is the request's own work, steady from run to run.
//! The databases of all sizes exist at once, so that their turns can alternate.
//! PostgreSQL needs `RECUR_TEST_POSTGRES_URL`, as the tests do.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use recur::http::client_address::PeerAddress;
use recur::http::pagination::{seal, ListScope};
use recur::merchants::MerchantCredentials;
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

/// Customers named Quinn Quayle, stored first: `q=quay` matches them at every size; and the
/// prices of the one product made through the API, which `?productId=` lists at every size.
const NAMED: i64 = 40;

/// A list a run can time (`--lists`; every one when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Customers,
    Attempts,
    Products,
    Prices,
    Coupons,
}

impl List {
    const ALL: [List; 5] = [
        List::Customers,
        List::Attempts,
        List::Products,
        List::Prices,
        List::Coupons,
    ];

    /// Its name in `--lists`.
    fn name(self) -> &'static str {
        match self {
            List::Customers => "customers",
            List::Attempts => "attempts",
            List::Products => "products",
            List::Prices => "prices",
            List::Coupons => "coupons",
        }
    }
}

/// One list request: its label and path.
struct Case {
    label: &'static str,
    path: String,
}

/// `{BASE}/{list}?{query}` for each `(label, query)`.
fn list_cases(list: &str, queries: Vec<(&'static str, String)>) -> Vec<Case> {
    queries
        .into_iter()
        .map(|(label, query)| Case {
            label,
            path: format!("{BASE}/{list}?{query}"),
        })
        .collect()
}

/// The cursor after row `id` of `list` (unfiltered), as the server mints it.
fn cursor(state: &AppState, list: &str, merchant_id: i64, id: i64) -> String {
    seal(&state.keys, &ListScope::new(list, merchant_id, &[]), id)
}

/// The id of the merchant's 41st-oldest row of `table`: a deep page holds the 20 before it.
async fn deep_after(state: &AppState, table: &str, merchant_id: i64) -> i64 {
    let sql =
        format!("SELECT id FROM {table} WHERE merchant_id = $1 ORDER BY id LIMIT 1 OFFSET 40");
    sqlx::query_scalar(&sql)
        .bind(merchant_id)
        .fetch_one(state.store.pool())
        .await
        .expect("41st-oldest row")
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

/// recur on a database of its own holding `size` rows of each list asked for, of one merchant,
/// served.
struct Subject {
    db: ScratchDatabase,
    state: AppState,
    addr: SocketAddr,
    token: String,
    merchant: MerchantCredentials,
    cases: Vec<Case>,
}

impl Subject {
    /// Starts recur on a scratch database and stores `size` rows of each of `lists`.
    async fn seeded(backend: Backend, size: i64, dir: &std::path::Path, lists: &[List]) -> Self {
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
        let mut subject = Self {
            db,
            state,
            addr,
            token,
            merchant,
            cases: Vec::new(),
        };
        for list in lists {
            let started = Instant::now();
            let cases = match list {
                List::Customers => subject.customers(size).await,
                List::Attempts => subject.endpoint_with_attempts(size).await,
                List::Products => subject.products(size).await,
                List::Prices => subject.prices(size).await,
                List::Coupons => subject.coupons(size).await,
            };
            eprintln!(
                "{backend:?}: {size} {} stored in {:?}",
                list.name(),
                started.elapsed()
            );
            subject.cases.extend(cases);
        }
        subject
    }

    /// `POST {BASE}/{path}` with `body` through the API (expects 201): the answer.
    async fn create(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let body = body.to_string();
        let path = format!("{BASE}/{path}");
        let request = http::request("POST", &path, &self.token, Some(body.as_bytes()));
        call(self.addr, &request, 201).await
    }

    fn merchant_id(&self) -> i64 {
        self.merchant.merchant_id
    }

    /// Stores `size` customers: the 40 named ones through the API, then the rest in one
    /// statement.
    async fn customers(&self, size: i64) -> Vec<Case> {
        for n in 1..=NAMED {
            let body = json!({
                "processorKey": self.merchant.processor_key, "firstName": "Quinn",
                "lastName": "Quayle", "email": format!("quinn-{n}@shop.example"),
                "phone": "+4915112345678", "countryCode": "DE"
            });
            self.create("customer", body).await;
        }
        seed::customers(
            &self.state.store,
            self.merchant_id(),
            &self.merchant.processor_key,
            "bench",
            size - NAMED,
            to_micros(chrono::Utc::now()),
        )
        .await;
        if self.state.store.backend() == Backend::Postgres {
            sqlx::query("ANALYZE customers")
                .execute(self.state.store.pool())
                .await
                .expect("analyze");
        }
        let deep = deep_after(&self.state, "customers", self.merchant_id()).await;
        let cursor = cursor(&self.state, "customers", self.merchant_id(), deep);
        list_cases(
            "customers",
            vec![
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
            ],
        )
    }

    /// Registers a webhook endpoint through the API and stores `size` attempts in its log.
    async fn endpoint_with_attempts(&self, size: i64) -> Vec<Case> {
        let body = json!({"url": "https://merchant.example/endpoint"});
        let created = self.create("webhook-endpoints", body).await;
        let key = created["endpointId"].as_str().expect("endpoint id");
        let pool = self.state.store.pool();
        let id: i64 =
            sqlx::query_scalar("SELECT id FROM webhook_endpoints WHERE endpoint_key = $1")
                .bind(key)
                .fetch_one(pool)
                .await
                .expect("endpoint row");
        let now = to_micros(chrono::Utc::now());
        seed::endpoint_attempts(&self.state.store, self.merchant_id(), id, size, now).await;
        let deep: i64 = sqlx::query_scalar(
            "SELECT id FROM endpoint_attempts WHERE endpoint_id = $1 ORDER BY id LIMIT 1 OFFSET 40",
        )
        .bind(id)
        .fetch_one(pool)
        .await
        .expect("41st-oldest attempt");
        let scope = ListScope::new(
            "endpoint-deliveries",
            self.merchant_id(),
            &[("endpoint", Some(key))],
        );
        let cursor = seal(&self.state.keys, &scope, deep);
        list_cases(
            &format!("webhook-endpoints/{key}/deliveries"),
            vec![
                ("attempt log, first page", "limit=20".into()),
                (
                    "attempt log, deep page",
                    format!("limit=20&cursor={cursor}"),
                ),
            ],
        )
    }

    /// The product made through the API, which the 40 prices `?productId=` finds belong to.
    async fn named_product(&self) -> String {
        let key: Option<String> = sqlx::query_scalar(
            "SELECT product_key FROM products WHERE merchant_id = $1 AND name = 'Named'",
        )
        .bind(self.merchant_id())
        .fetch_optional(self.state.store.pool())
        .await
        .expect("named product");
        match key {
            Some(key) => key,
            None => self.create("products", json!({"name": "Named"})).await["productId"]
                .as_str()
                .expect("product id")
                .to_string(),
        }
    }

    /// Stores `size` products: one through the API, the rest in one statement.
    async fn products(&self, size: i64) -> Vec<Case> {
        self.named_product().await;
        let now = to_micros(chrono::Utc::now());
        seed::products(&self.state.store, self.merchant_id(), size - 1, now).await;
        let deep = deep_after(&self.state, "products", self.merchant_id()).await;
        let cursor = cursor(&self.state, "products", self.merchant_id(), deep);
        list_cases(
            "products",
            vec![
                ("products: first page", "limit=20".into()),
                ("products: deep page", format!("limit=20&cursor={cursor}")),
                ("products: active=true", "limit=20&active=true".into()),
            ],
        )
    }

    /// Stores `size` prices: 40 of the named product through the API, the rest one of each
    /// bulk product (stored here unless `products` stored them).
    async fn prices(&self, size: i64) -> Vec<Case> {
        let product = self.named_product().await;
        for n in 1..=NAMED {
            let body = json!({"productId": product, "currency": "EUR",
                "unitAmount": format!("{n}.99"), "intervalType": "Monthly"});
            self.create("prices", body).await;
        }
        let merchant_id = self.merchant_id();
        let now = to_micros(chrono::Utc::now());
        let stored: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM products WHERE merchant_id = $1")
                .bind(merchant_id)
                .fetch_one(self.state.store.pool())
                .await
                .expect("count products");
        if stored < size - NAMED + 1 {
            seed::products(&self.state.store, merchant_id, size - NAMED, now).await;
        }
        seed::prices(&self.state.store, merchant_id, size - NAMED, now).await;
        let deep = deep_after(&self.state, "prices", merchant_id).await;
        let cursor = cursor(&self.state, "prices", merchant_id, deep);
        list_cases(
            "prices",
            vec![
                ("prices: first page", "limit=20".into()),
                ("prices: deep page", format!("limit=20&cursor={cursor}")),
                (
                    "prices: productId= (40 prices)",
                    format!("limit=20&productId={product}"),
                ),
                (
                    "prices: productId=&active=true",
                    format!("limit=20&productId={product}&active=true"),
                ),
            ],
        )
    }

    /// Stores `size` coupons in one statement.
    async fn coupons(&self, size: i64) -> Vec<Case> {
        let now = to_micros(chrono::Utc::now());
        seed::coupons(&self.state.store, self.merchant_id(), size, now).await;
        let deep = deep_after(&self.state, "coupons", self.merchant_id()).await;
        let cursor = cursor(&self.state, "coupons", self.merchant_id(), deep);
        list_cases(
            "coupons",
            vec![
                ("coupons: first page", "limit=20".into()),
                ("coupons: deep page", format!("limit=20&cursor={cursor}")),
            ],
        )
    }
}

/// Rounds of a measurement: the sizes take turns, so a change in the machine's load (shared by
/// other work) falls on every size alike.
const ROUNDS: u32 = 20;

async fn bench_backend(
    backend: Backend,
    sizes: &[i64],
    lists: &[List],
    duration: Duration,
) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut subjects = Vec::new();
    for &size in sizes {
        let data = dir.path().join(size.to_string());
        subjects.push(Subject::seeded(backend, size, &data, lists).await);
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
        .filter(|&size| size > 2 * NAMED)
        .collect();
    sizes.sort_unstable();
    assert!(!sizes.is_empty(), "--sizes: row counts above {}", 2 * NAMED);
    let lists: Vec<List> = match args.value("--lists") {
        None => List::ALL.to_vec(),
        Some(names) => names
            .split(',')
            .map(|name| {
                let name = name.trim();
                *List::ALL
                    .iter()
                    .find(|list| list.name() == name)
                    .unwrap_or_else(|| panic!("--lists: {name} is none of customers, attempts, products, prices, coupons"))
            })
            .collect(),
    };
    let duration = Duration::from_secs(args.parsed("--seconds", 5));
    let rows = report::per_backend(args.backends(), |backend| {
        let (sizes, lists) = (sizes.clone(), lists.clone());
        async move { bench_backend(backend, &sizes, &lists, duration).await }
    });
    let mut columns = vec!["backend", "request"];
    let headers: Vec<String> = sizes
        .iter()
        .map(|size| format!("{size} rows: p25 / p50 µs"))
        .collect();
    columns.extend(headers.iter().map(String::as_str));
    columns.extend(["ratio largest / smallest, p25", "ratio, p50"]);
    report::print_table(
        "Lists: latency of one client (lower quartile / median) by rows stored",
        &columns,
        rows,
    );
}
