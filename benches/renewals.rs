//! Renewals the billing engine completes per second, against the raw single-row insert rate of
//! the same database, in one run.
//!
//! `cargo bench --bench renewals -- [--memberships N] [--backend sqlite|postgres|both]`
//!
//! For each backend it seeds N Active memberships whose period ended a minute ago (customer,
//! saved sandbox card, membership, paid first invoice; in bulk), then runs the engine's
//! real-time pass until all are renewed: each renewal is an invoice, a charge attempt through the
//! sandbox processor, the answer, a transaction event and a rendered receipt e-mail, in the
//! engine's batches (three transactions per batch), and the run checks one of each per
//! membership. It does so
//! with 1 and with 4 concurrent workers (on PostgreSQL, workers skip each other's rows; SQLite
//! serialises writers). The raw rate is one-row insert transactions on the same pool settings.
//!
//! A second table times a sandbox merchant's test-clock advance over the same N due memberships
//! (`services::sandbox`'s advance, as `POST /test-clock/advance` runs it): it renews them all at
//! the time they were due and delivers their webhook events before it returns, to a local HTTPS
//! receiver (tests/api/receivers.rs) and to an address that refuses connections, each beside the
//! engine's own one-worker rate measured in the same run.
//! PostgreSQL needs `RECUR_TEST_POSTGRES_URL`, as the tests do.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use recur::billing::{engine, test_clock};
use recur::state::AppState;
use recur::store::{to_micros, Backend, Store};
use recur_domain::card::CardNumber;

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/args.rs"]
mod args;
#[path = "support/report.rs"]
mod report;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/seed.rs"]
#[allow(dead_code)]
mod seed;
#[path = "support/state.rs"]
mod state;

#[path = "../tests/api/receivers.rs"]
#[allow(dead_code)]
mod receivers;

use args::Args;
use receivers::WebhookReceiver;
use scratch::ScratchDatabase;

/// One-row insert transactions per second, `n` of them, from `workers` tasks.
async fn raw_insert_rate(url: &str, n: usize, workers: usize) -> f64 {
    let store = Store::connect(url).await.expect("connect");
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_raw (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        .execute(store.pool())
        .await
        .expect("create table");
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (w..n).step_by(workers) {
                    // One statement in its own transaction, like pgbench's script.
                    sqlx::query("INSERT INTO bench_raw (k, v) VALUES ($1, $2)")
                        .bind(format!("{workers}-{i}"))
                        .bind("value")
                        .execute(store.writer())
                        .await
                        .expect("insert");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    store.close().await;
    rate
}

/// recur with its merchant and the time its `n` memberships fell due.
struct Seeded {
    state: AppState,
    merchant_id: i64,
    due: DateTime<Utc>,
}

/// Builds recur on `url` (with `settings`) with one sandbox merchant and `n` memberships due a
/// minute ago, each with its customer and saved sandbox card.
async fn seeded(url: &str, dir: &std::path::Path, n: usize, settings: &[(&str, String)]) -> Seeded {
    let (state, merchant) = state::with_merchant(url, dir, settings).await;
    let card = CardNumber::parse("4242424242424242").expect("test card");
    let token = state
        .processor
        .tokenize(merchant.merchant_id, &card)
        .await
        .expect("token");
    let due = Utc::now() - chrono::TimeDelta::minutes(1);
    let start = due - chrono::TimeDelta::days(30);
    let started = Instant::now();
    let store = &state.store;
    let id = merchant.merchant_id;
    let count = i64::try_from(n).expect("count");
    seed::customers(
        store,
        id,
        &merchant.processor_key,
        "bench",
        count,
        to_micros(start),
    )
    .await;
    seed::cards(store, id, "bench", &token, to_micros(start)).await;
    seed::memberships(store, id, "bench", to_micros(start), to_micros(due)).await;
    eprintln!(
        "{:?}: {n} due memberships stored in {:?}",
        store.backend(),
        started.elapsed()
    );
    Seeded {
        state,
        merchant_id: id,
        due,
    }
}

/// Renewals per second with `workers` concurrent engine passes.
async fn renewal_rate(state: &AppState, n: usize, workers: usize) -> f64 {
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let state = state.clone();
            tokio::spawn(async move {
                loop {
                    match engine::tick(&state, 1000).await {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(error) => {
                            // A worker that lost a race on SQLite's lock retries.
                            eprintln!("pass failed, retrying: {error}");
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("worker");
    }
    let elapsed = started.elapsed();
    // End to end: a paid invoice, an approved charge, a transaction event and a receipt per
    // membership, each exactly once.
    for (what, sql) in [
        (
            "paid renewal invoices",
            "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal' AND status = 'Paid'",
        ),
        (
            "approved renewal charges",
            "SELECT COUNT(*) FROM charges WHERE kind = 'renewal' AND status = 'Success'",
        ),
        (
            "transaction events",
            "SELECT COUNT(*) FROM events WHERE action = 'TRANSACTION_DATA_UPDATE'",
        ),
        (
            "receipts",
            "SELECT COUNT(*) FROM emails WHERE kind = 'receipt'",
        ),
    ] {
        let rows: i64 = sqlx::query_scalar(sql)
            .fetch_one(state.store.pool())
            .await
            .expect("count");
        assert_eq!(rows as usize, n, "{what}: one per membership");
    }
    n as f64 / elapsed.as_secs_f64()
}

/// Puts the merchant's memberships on a test clock that stands a minute before they fall due,
/// sends their webhooks to `webhook_url`, and times the advance to a day after: renewals per
/// second, and how many webhook events it delivered (attempted, for an unreachable URL).
async fn advance_rate(seeded: &Seeded, n: usize, webhook_url: &str) -> (f64, i64) {
    let store = &seeded.state.store;
    sqlx::query("UPDATE memberships SET webhook_url = $1 WHERE merchant_id = $2")
        .bind(webhook_url)
        .bind(seeded.merchant_id)
        .execute(store.pool())
        .await
        .expect("webhook URL");
    sqlx::query("INSERT INTO test_clocks (merchant_id, now) VALUES ($1, $2)")
        .bind(seeded.merchant_id)
        .bind(to_micros(seeded.due - TimeDelta::minutes(1)))
        .execute(store.pool())
        .await
        .expect("test clock");
    let started = Instant::now();
    let to = seeded.due + TimeDelta::days(1);
    let state = &seeded.state;
    test_clock::advance(&state.platform, &state.webhooks, seeded.merchant_id, to)
        .await
        .expect("advance");
    let elapsed = started.elapsed();
    let renewed: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal' AND status = 'Paid'",
    )
    .fetch_one(store.pool())
    .await
    .expect("count");
    assert_eq!(
        renewed as usize, n,
        "paid renewal invoices: one per membership"
    );
    let attempted: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE attempts > 0")
        .fetch_one(store.pool())
        .await
        .expect("count");
    (n as f64 / elapsed.as_secs_f64(), attempted)
}

/// The engine's rows: one and four workers against the raw insert rate.
async fn engine_rows(backend: Backend, n: usize) -> (Vec<String>, f64) {
    let mut rows = Vec::new();
    let mut one_worker = 0.0;
    for workers in [1usize, 4] {
        let dir = tempfile::tempdir().expect("temp dir");
        let raw_db = ScratchDatabase::create(backend, &format!("raw{workers}")).await;
        let raw = raw_insert_rate(&raw_db.url, n, workers).await;
        raw_db.remove().await;
        let engine_db = ScratchDatabase::create(backend, &format!("engine{workers}")).await;
        let seeded = seeded(&engine_db.url, dir.path(), n, &[]).await;
        let rate = renewal_rate(&seeded.state, n, workers).await;
        seeded.state.store.close().await;
        engine_db.remove().await;
        if workers == 1 {
            one_worker = rate;
        }
        rows.push(format!(
            "| {backend:?} | {n} | {workers} | {rate:.0} | {raw:.0} | {:.0}% |",
            100.0 * rate / raw
        ));
    }
    (rows, one_worker)
}

/// The test clock's rows: an advance with a receiver that answers, and with one that refuses
/// connections, against the engine's one-worker rate.
async fn test_clock_rows(backend: Backend, n: usize, engine: f64) -> Vec<String> {
    let receiver = WebhookReceiver::start().await;
    let refusing = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let refused_url = format!("https://{}/hooks", refusing.local_addr().expect("address"));
    drop(refusing);
    let mut rows = Vec::new();
    for (endpoint, url) in [
        ("local receiver", receiver.url.clone()),
        ("refuses connections", refused_url),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = ScratchDatabase::create(backend, "clock").await;
        let seeded = seeded(&db.url, dir.path(), n, &receiver.settings()).await;
        let (rate, attempted) = advance_rate(&seeded, n, &url).await;
        seeded.state.store.close().await;
        db.remove().await;
        rows.push(format!(
            "| {backend:?} | {n} | {endpoint} | {rate:.0} | {attempted} | {engine:.0} | {:.0}% |",
            100.0 * rate / engine
        ));
    }
    rows
}

async fn bench_backend(backend: Backend, n: usize) -> Vec<(String, bool)> {
    let (engine, one_worker) = engine_rows(backend, n).await;
    let clock = test_clock_rows(backend, n, one_worker).await;
    engine
        .into_iter()
        .map(|row| (row, true))
        .chain(clock.into_iter().map(|row| (row, false)))
        .collect()
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.parsed("--memberships", 2000);
    let rows = report::per_backend(args.backends(), |backend| bench_backend(backend, n));
    let (engine, clock): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, engine)| *engine);
    report::print_table(
        "renewals completed by the billing engine vs raw one-row insert transactions",
        &[
            "backend",
            "memberships",
            "workers",
            "renewals/s",
            "raw inserts/s",
            "renewals / raw",
        ],
        engine.into_iter().map(|(row, _)| row),
    );
    report::print_table(
        "a test-clock advance over the due memberships, webhooks delivered, vs the engine (one worker)",
        &[
            "backend",
            "memberships",
            "webhook endpoint",
            "advance renewals/s",
            "events attempted",
            "engine renewals/s",
            "advance / engine",
        ],
        clock.into_iter().map(|(row, _)| row),
    );
}
