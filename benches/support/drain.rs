//! Timing a delivery worker until its outbox is empty, for the delivery benchmarks. Shared by
//! the benchmark binaries through `#[path]`.

use std::future::Future;
use std::time::{Duration, Instant};

use recur::store::Store;

/// Rows per second `worker` (a delivery loop of `recur serve`) takes to empty `table` (an outbox:
/// `events` or `emails`) of its `n` pending rows. The worker is stopped afterwards, and the
/// function asserts that exactly `n` rows ended in `done` (`Delivered`, `Sent`).
pub async fn rate_until_drained(
    store: &Store,
    table: &str,
    done: &str,
    n: usize,
    worker: impl Future<Output = ()> + Send + 'static,
) -> f64 {
    let started = Instant::now();
    let worker = tokio::spawn(worker);
    until_no_pending(store, table).await;
    let rate = n as f64 / started.elapsed().as_secs_f64();
    worker.abort();
    let finished: i64 =
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE status = $1"))
            .bind(done)
            .fetch_one(store.pool())
            .await
            .expect("count");
    assert_eq!(finished as usize, n, "every row of {table} {done} once");
    rate
}

/// Waits until `table` has no `Pending` row, checking every 5 ms through its partial due index,
/// whose size is the work left, so the check costs the database the same whatever the table
/// holds.
async fn until_no_pending(store: &Store, table: &str) {
    let sql = format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE status = 'Pending' LIMIT 1) AS p"
    );
    loop {
        let pending: i64 = sqlx::query_scalar(&sql)
            .fetch_one(store.pool())
            .await
            .expect("pending");
        if pending == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
