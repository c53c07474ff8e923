//! The dashboard's overview costs the same at 10 k and at 1 M memberships when what grows is the
//! history: each size holds the same 1,000 renewing memberships (Active, EUR 29.97 a month,
//! paid in the last 30 days) beside `size − 1,000` Canceled ones paid a year ago. The overview's
//! reads (`pages::dashboard::overview::read`: MRR, counts by status, undeliverable events, the
//! last 30 days' revenue) are timed at every size, and the ratio of the largest size to the
//! smallest printed: flat is 1.0.
//!
//! `cargo bench --bench overview -- [--sizes 10000,1000000] [--seconds N] [--backend sqlite|postgres]`
//!
//! Seeding is `support/seed.rs` (customers, memberships with their paid first invoices, in bulk),
//! then two `UPDATE`s: all but the newest 1,000 memberships Canceled, their invoices a year old.
//! The counts by status stop at 10,000 (`store::overview::COUNT_CAP`), so the Canceled count
//! reads at most that many index entries at any size. PostgreSQL needs
//! `RECUR_TEST_POSTGRES_URL`, as the tests do.

use std::time::{Duration, Instant};

use recur::pages::dashboard::overview;
use recur::state::AppState;
use recur::store::{to_micros, Backend};

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

/// Renewing memberships at every size.
const RENEWING: i64 = 1_000;

/// Rounds in which the sizes take turns, so the shared machine's load weighs on each alike.
const ROUNDS: u32 = 20;

/// recur on a database of its own holding `size` memberships of one merchant.
struct Subject {
    db: ScratchDatabase,
    state: AppState,
    merchant_id: i64,
}

impl Subject {
    async fn seeded(backend: Backend, size: i64, dir: &std::path::Path) -> Self {
        let db = ScratchDatabase::create(backend, &format!("overview{size}")).await;
        let (state, merchant) = state::with_merchant(&db.url, dir, &[]).await;
        let id = merchant.merchant_id;
        let now = chrono::Utc::now();
        let year_ago = to_micros(now - chrono::Duration::days(365));
        let started = Instant::now();
        seed::customers(
            &state.store,
            id,
            &merchant.processor_key,
            "bench",
            size,
            year_ago,
        )
        .await;
        let month = to_micros(now + chrono::Duration::days(20));
        seed::memberships(&state.store, id, "bench", year_ago, month).await;
        let pool = state.store.pool();
        let newest: i64 = sqlx::query_scalar(
            "SELECT id FROM memberships WHERE merchant_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2",
        )
        .bind(id)
        .bind(RENEWING - 1)
        .fetch_one(pool)
        .await
        .expect("the 1,000th-newest membership");
        sqlx::query(
            "UPDATE memberships SET status = 'Canceled' WHERE merchant_id = $1 AND id < $2",
        )
        .bind(id)
        .bind(newest)
        .execute(pool)
        .await
        .expect("history canceled");
        sqlx::query(
            "UPDATE invoices SET paid_at = $3 WHERE merchant_id = $1 AND membership_id >= $2",
        )
        .bind(id)
        .bind(newest)
        .bind(to_micros(now - chrono::Duration::days(3)))
        .execute(pool)
        .await
        .expect("recent payments");
        if backend == Backend::Postgres {
            for table in ["memberships", "invoices"] {
                sqlx::query(&format!("ANALYZE {table}"))
                    .execute(pool)
                    .await
                    .expect("analyze");
            }
        }
        eprintln!(
            "{backend:?}: {size} memberships stored in {:?}",
            started.elapsed()
        );
        Self {
            db,
            state,
            merchant_id: id,
        }
    }

    /// Latencies of the overview's reads, one after the other for `duration`, after a warm-up.
    async fn latencies(&self, duration: Duration) -> Vec<Duration> {
        let warm_up = 3;
        let mut samples = Vec::new();
        let deadline = Instant::now() + duration;
        while samples.len() < warm_up || Instant::now() < deadline {
            let started = Instant::now();
            let figures = overview::read(&self.state, self.merchant_id, chrono::Utc::now())
                .await
                .expect("overview");
            samples.push(started.elapsed());
            assert_eq!(figures.mrr.get("EUR"), Some(&(2997 * RENEWING)));
            let paid: i64 = figures.revenue.by_currency["EUR"].iter().sum();
            assert_eq!(paid, 2997 * RENEWING, "only the recent payments");
        }
        samples.split_off(warm_up)
    }
}

async fn bench_backend(backend: Backend, sizes: &[i64], duration: Duration) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut subjects = Vec::new();
    for &size in sizes {
        let data = dir.path().join(size.to_string());
        subjects.push(Subject::seeded(backend, size, &data).await);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); subjects.len()];
    for _ in 0..ROUNDS {
        for (subject, samples) in subjects.iter().zip(samples.iter_mut()) {
            samples.extend(subject.latencies(duration / ROUNDS).await);
        }
    }
    let figures: Vec<(Duration, Duration)> = samples
        .into_iter()
        .map(|mut s| {
            s.sort_unstable();
            (s[s.len() / 4], s[s.len() / 2])
        })
        .collect();
    let columns: Vec<String> = figures
        .iter()
        .map(|(p25, p50)| format!("{} / {}", p25.as_micros(), p50.as_micros()))
        .collect();
    let (first, last) = (figures[0], figures[figures.len() - 1]);
    let ratio = |pick: fn((Duration, Duration)) -> Duration| {
        pick(last).as_secs_f64() / pick(first).as_secs_f64()
    };
    let row = format!(
        "| {backend:?} | overview reads | {} | {:.2} | {:.2} |",
        columns.join(" | "),
        ratio(|(p25, _)| p25),
        ratio(|(_, p50)| p50)
    );
    for subject in subjects {
        subject.state.store.close().await;
        subject.db.remove().await;
    }
    vec![row]
}

fn main() {
    let args = Args::from_env();
    let sizes: Vec<i64> = args
        .value("--sizes")
        .unwrap_or_else(|| "10000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("a size"))
        .collect();
    let duration = Duration::from_secs(args.parsed("--seconds", 5));
    let rows = report::per_backend(args.backends(), |backend| {
        let sizes = sizes.clone();
        async move { bench_backend(backend, &sizes, duration).await }
    });
    let mut columns = vec!["backend", "reads"];
    let labels: Vec<String> = sizes.iter().map(|s| format!("{s}: p25 / p50 µs")).collect();
    columns.extend(labels.iter().map(String::as_str));
    columns.extend(["ratio p25", "ratio p50"]);
    report::print_table("Dashboard overview at each size of history", &columns, rows);
}
