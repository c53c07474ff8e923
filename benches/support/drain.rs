//! Waiting for an outbox to empty, for the delivery benchmarks. Shared by the benchmark
//! binaries through `#[path]`.

use std::time::Duration;

use recur::store::Store;

/// Waits until `table` (an outbox: `events` or `emails`) has no `Pending` row, checking every
/// 5 ms through its partial due index, whose size is the work left, so the check costs the
/// database the same whatever the table holds.
pub async fn until_no_pending(store: &Store, table: &str) {
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
