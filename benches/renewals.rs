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
//! PostgreSQL needs `RECUR_TEST_POSTGRES_URL`, as the tests do.

use std::time::{Duration, Instant};

use chrono::Utc;
use recur::billing::engine;
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

use args::Args;
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

/// Builds recur on `url` with one sandbox merchant and `n` memberships due a minute ago, each
/// with its customer and saved sandbox card.
async fn seeded(url: &str, dir: &std::path::Path, n: usize) -> AppState {
    let (state, merchant) = state::with_merchant(url, dir, &[]).await;
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
    state
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

async fn bench_backend(backend: Backend, n: usize) -> Vec<String> {
    let mut rows = Vec::new();
    for workers in [1usize, 4] {
        let dir = tempfile::tempdir().expect("temp dir");
        let raw_db = ScratchDatabase::create(backend, &format!("raw{workers}")).await;
        let raw = raw_insert_rate(&raw_db.url, n, workers).await;
        raw_db.remove().await;
        let engine_db = ScratchDatabase::create(backend, &format!("engine{workers}")).await;
        let state = seeded(&engine_db.url, dir.path(), n).await;
        let rate = renewal_rate(&state, n, workers).await;
        state.store.close().await;
        engine_db.remove().await;
        rows.push(format!(
            "| {backend:?} | {n} | {workers} | {rate:.0} | {raw:.0} | {:.0}% |",
            100.0 * rate / raw
        ));
    }
    rows
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.parsed("--memberships", 2000);
    let rows = report::per_backend(args.backends(), |backend| bench_backend(backend, n));
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
        rows,
    );
}
