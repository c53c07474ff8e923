//! Bulk seeding for the benchmarks: rows made with one `INSERT … SELECT` per table on either
//! engine, so a million stored rows take seconds, not the API's hours. Shared by the benchmark
//! binaries through `#[path]`.

use recur::store::{Backend, Store};

/// Rows counting `n` from 1 to the bigint bound at `$param`, on either engine.
fn series(backend: Backend, param: usize) -> String {
    match backend {
        Backend::Postgres => {
            format!("SELECT g AS n FROM generate_series(1, CAST(${param} AS BIGINT)) g")
        }
        Backend::Sqlite => format!(
            "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${param}) \
             SELECT n FROM s"
        ),
    }
}

/// Stores `count` customers of `merchant_id`, keyed `{prefix}{n}` and e-mailed
/// `{prefix}{n}@example.com`.
pub async fn customers(
    store: &Store,
    merchant_id: i64,
    processor_key: &str,
    prefix: &str,
    count: i64,
    now: i64,
) {
    let sql = format!(
        "INSERT INTO customers (merchant_id, customer_key, processor_key, first_name, last_name, \
         email, email_identity, phone, country_code, tax_ids, first_name_search, \
         last_name_search, created_at, updated_at) \
         SELECT $1, $4 || n, $2, 'Seed', 'Row', $4 || n || '@example.com', \
         $4 || n || '@example.com', '+4915112345678', 'DE', '[]', 'seed', 'row', $3, $3 \
         FROM ({}) seq",
        series(store.backend(), 5)
    );
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(processor_key)
        .bind(now)
        .bind(prefix)
        .bind(count)
        .execute(store.pool())
        .await
        .expect("seed customers");
}

/// Gives every customer of `merchant_id` keyed `{prefix}…` an attached card with the sandbox
/// `token` (a Visa ending 4242).
pub async fn cards(store: &Store, merchant_id: i64, prefix: &str, token: &str, now: i64) {
    sqlx::query(
        "INSERT INTO payment_methods (merchant_id, customer_id, payment_method_key, \
         processor_token, brand, bin, last4, fingerprint, created_at, attached_at) \
         SELECT merchant_id, id, 'pm_' || customer_key, $3, 'Visa', '424242', '4242', 'seed', \
         $4, $4 FROM customers WHERE merchant_id = $1 AND customer_key LIKE $2",
    )
    .bind(merchant_id)
    .bind(format!("{prefix}%"))
    .bind(token)
    .bind(now)
    .execute(store.pool())
    .await
    .expect("seed cards");
}

/// Gives every customer of `merchant_id` keyed `{prefix}…` an Active monthly membership of
/// EUR 29.97 (3 × 9.99) whose period runs from `start` to `end` (its next action), with its
/// paid first invoice.
pub async fn memberships(store: &Store, merchant_id: i64, prefix: &str, start: i64, end: i64) {
    sqlx::query(
        "INSERT INTO memberships (merchant_id, customer_id, membership_key, order_id, \
         subscription_name, webhook_url, currency, total_amount, price_per_unit, quantity, \
         interval_type, interval_count, recurring_attempts, status, current_period_start, \
         current_period_end, credit_balance, dunning_retries, next_action_at, version, \
         created_at, updated_at) \
         SELECT merchant_id, id, 'mmbrshp_' || customer_key, 'order-' || customer_key, \
         'Gold plan', 'https://merchant.example/hooks', 'EUR', 2997, 999, 3, 'Monthly', 1, 0, \
         'Active', $3, $4, 0, 0, $4, 1, $3, $3 \
         FROM customers WHERE merchant_id = $1 AND customer_key LIKE $2",
    )
    .bind(merchant_id)
    .bind(format!("{prefix}%"))
    .bind(start)
    .bind(end)
    .execute(store.pool())
    .await
    .expect("seed memberships");
    sqlx::query(
        "INSERT INTO invoices (merchant_id, membership_id, invoice_key, billing_key, kind, \
         status, currency, period_start, period_end, subtotal, credit_applied, amount_due, \
         amount_paid, lines, created_at, paid_at) \
         SELECT merchant_id, id, 'in_' || membership_key, 'first:1', 'first', 'Paid', 'EUR', \
         $3, $4, 2997, 0, 2997, 2997, '[]', $3, $3 \
         FROM memberships WHERE merchant_id = $1 AND membership_key LIKE $2",
    )
    .bind(merchant_id)
    .bind(format!("mmbrshp_{prefix}%"))
    .bind(start)
    .bind(end)
    .execute(store.pool())
    .await
    .expect("seed first invoices");
    if store.backend() == Backend::Postgres {
        for table in ["customers", "payment_methods", "memberships", "invoices"] {
            sqlx::query(&format!("ANALYZE {table}"))
                .execute(store.pool())
                .await
                .expect("analyze");
        }
    }
}

/// Stores `count` attempts in the log of `merchant_id`'s webhook endpoint `endpoint_id`, all of
/// one test delivery: `GET /webhook-endpoints/{id}/deliveries` pages through them.
pub async fn endpoint_attempts(
    store: &Store,
    merchant_id: i64,
    endpoint_id: i64,
    count: i64,
    now: i64,
) {
    let delivery: i64 = sqlx::query_scalar(
        "INSERT INTO endpoint_deliveries (merchant_id, endpoint_id, action_id, action, payload, \
         status, attempts, round_attempts, created_at) \
         VALUES ($1, $2, 'seed-action', 'WEBHOOK_TEST', '{}', 'Undeliverable', 7, 7, $3) \
         RETURNING id",
    )
    .bind(merchant_id)
    .bind(endpoint_id)
    .bind(now)
    .fetch_one(store.pool())
    .await
    .expect("seed delivery");
    let sql = format!(
        "INSERT INTO endpoint_attempts (merchant_id, endpoint_id, delivery_id, attempt, \
         started_at, status_code, latency_ms) \
         SELECT $1, $2, $3, n, $4, 500, 12 FROM ({}) seq",
        series(store.backend(), 5)
    );
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(endpoint_id)
        .bind(delivery)
        .bind(now)
        .bind(count)
        .execute(store.pool())
        .await
        .expect("seed endpoint attempts");
    if store.backend() == Backend::Postgres {
        sqlx::query("ANALYZE endpoint_attempts")
            .execute(store.pool())
            .await
            .expect("analyze");
    }
}

/// Stores `count` active products of `merchant_id`, keyed `prod_bench{n}`.
pub async fn products(store: &Store, merchant_id: i64, count: i64, now: i64) {
    let sql = format!(
        "INSERT INTO products (merchant_id, product_key, name, description, active, created_at, \
         updated_at) SELECT $1, 'prod_bench' || n, 'Product ' || n, NULL, 1, $2, $2 FROM ({}) seq",
        series(store.backend(), 3)
    );
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(now)
        .bind(count)
        .execute(store.pool())
        .await
        .expect("seed products");
    analyze(store, "products").await;
}

/// Stores `count` active monthly EUR prices of `merchant_id`, one of each of its oldest `count`
/// products keyed `prod_bench…` ([`products`]).
pub async fn prices(store: &Store, merchant_id: i64, count: i64, now: i64) {
    sqlx::query(
        "INSERT INTO prices (merchant_id, product_id, price_key, currency, unit_amount, \
         interval_type, interval_count, trial_days, active, created_at) \
         SELECT merchant_id, id, 'price_' || product_key, 'EUR', 999, 'Monthly', 1, NULL, 1, $2 \
         FROM (SELECT merchant_id, id, product_key FROM products \
         WHERE merchant_id = $1 AND product_key LIKE 'prod_bench%' ORDER BY id LIMIT $3) p",
    )
    .bind(merchant_id)
    .bind(now)
    .bind(count)
    .execute(store.pool())
    .await
    .expect("seed prices");
    analyze(store, "prices").await;
}

/// Stores `count` active coupons of `merchant_id`, 10 % off once, coded `BENCH{n}`.
pub async fn coupons(store: &Store, merchant_id: i64, count: i64, now: i64) {
    let sql = format!(
        "INSERT INTO coupons (merchant_id, coupon_key, code, percent_off, duration, active, \
         created_at) SELECT $1, 'cpn_bench' || n, 'BENCH' || n, '10', 'once', 1, $2 FROM ({}) seq",
        series(store.backend(), 3)
    );
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(now)
        .bind(count)
        .execute(store.pool())
        .await
        .expect("seed coupons");
    analyze(store, "coupons").await;
}

/// `ANALYZE table` on PostgreSQL, after a bulk insert (SQLite is never analysed).
async fn analyze(store: &Store, table: &str) {
    if store.backend() == Backend::Postgres {
        sqlx::query(&format!("ANALYZE {table}"))
            .execute(store.pool())
            .await
            .expect("analyze");
    }
}
