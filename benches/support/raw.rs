//! The raw single-row rate of the database the API benchmark compares with: a loop over recur's
//! own pools, or `pgbench` for PostgreSQL when it is installed.

use std::time::Duration;

use recur::store::Store;

use super::cpu;
use super::measure::{drive, Run};

/// Raw single-row insert transactions and primary-key selects through the same pools as recur
/// (writes through the writer pool).
pub async fn raw_loop(url: &str, concurrency: usize, duration: Duration) -> (Run, Run) {
    let store = Store::connect(url).await.expect("connect");
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_raw (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        .execute(store.pool())
        .await
        .expect("create table");
    let run = format!("{}", chrono::Utc::now().timestamp_micros());
    let writer = store.clone();
    let prefix = run.clone();
    let inserts = drive(concurrency, duration, move |n| {
        let store = writer.clone();
        let key = format!("{prefix}-{n}");
        async move {
            // One statement in its own transaction, like pgbench's script.
            sqlx::query("INSERT INTO bench_raw (k, v) VALUES ($1, $2)")
                .bind(key)
                .bind("value")
                .execute(store.writer())
                .await
                .expect("insert");
        }
    })
    .await;
    let written = inserts.latencies.len() as u64;
    let reader = store.clone();
    let selects = drive(concurrency, duration, move |n| {
        let store = reader.clone();
        let key = format!("{run}-{}", n % written.max(1));
        async move {
            let _: Option<String> = sqlx::query_scalar("SELECT v FROM bench_raw WHERE k = $1")
                .bind(key)
                .fetch_optional(store.pool())
                .await
                .expect("select");
        }
    })
    .await;
    store.close().await;
    (Run::of(&inserts), Run::of(&selects))
}

/// A pgbench run of a one-statement script, prepared once per connection (`-M prepared`) as sqlx
/// prepares recur's statements: the same protocol, so the database's limit for it rather than
/// its parse-every-time rate. `None` when pgbench is missing or fails.
async fn pgbench(url: &str, script: &str, concurrency: usize, seconds: u64) -> Option<Run> {
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("script.sql");
    std::fs::write(&path, script).ok()?;
    let mut command = std::process::Command::new("pgbench");
    command
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            &concurrency.to_string(),
            "-j",
            "2",
            "-T",
            &seconds.to_string(),
            "-f",
        ])
        .arg(&path)
        .arg(url);
    // Waited for here, so that its CPU time counts as the client's.
    let (out, cost) = cpu::measure(async { command.output() }).await;
    let text = String::from_utf8(out.ok()?.stdout).ok()?;
    let number = |prefix: &str| -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    };
    Some(Run {
        rate: number("tps = ")?,
        operations: number("number of transactions actually processed: ")? as u64,
        cost,
    })
}

/// Raw rates for PostgreSQL: pgbench when installed, else the sqlx loop.
pub async fn raw_postgres(url: &str, concurrency: usize, duration: Duration) -> (Run, Run) {
    let store = Store::connect(url).await.expect("connect");
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bench_pgbench (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)",
    )
    .execute(store.pool())
    .await
    .expect("create table");
    sqlx::query("INSERT INTO bench_pgbench (v) SELECT 'value' FROM generate_series(1, 100000)")
        .execute(store.pool())
        .await
        .expect("fill table");
    store.close().await;
    let seconds = duration.as_secs().max(1);
    let insert = pgbench(
        url,
        "INSERT INTO bench_pgbench (v) VALUES ('value');\n",
        concurrency,
        seconds,
    )
    .await;
    let select = pgbench(
        url,
        "\\set id random(1, 100000)\nSELECT v FROM bench_pgbench WHERE id = :id;\n",
        concurrency,
        seconds,
    )
    .await;
    match (insert, select) {
        (Some(insert), Some(select)) => (insert, select),
        _ => raw_loop(url, concurrency, duration).await,
    }
}
