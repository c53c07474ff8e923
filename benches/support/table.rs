//! The API benchmark's printed tables: rates and ratios per measurement, and where its CPU went.

use recur::store::Backend;

use super::measure::{Run, Sample};

pub struct Row {
    pub backend: Backend,
    pub stored: i64,
    pub operation: &'static str,
    pub concurrency: usize,
    pub sample: Sample,
    pub raw: Run,
    /// The operation's own store call, without HTTP (none for the ceiling).
    pub statement: Option<Run>,
    /// The rate of the empty request (`GET /healthz`) at the same concurrency in the same run.
    pub ceiling: f64,
}

/// The columns of [`table_row`].
pub const COLUMNS: [&str; 13] = [
    "backend",
    "stored customers",
    "operation",
    "clients",
    "req/s",
    "p50 ms",
    "p99 ms",
    "raw/s",
    "API / raw",
    "statement/s",
    "statement / raw",
    "API / statement",
    "limit: one statement per request",
];

/// The most of the raw rate a request that runs a statement of its own can reach: it costs at
/// least an empty request and a raw statement, one after the other (in latency with one client,
/// in CPU where the runs keep the cores busy), so its rate is at most `1 / (1 / ceiling + 1 /
/// raw)`. Statements shared by concurrent requests (`store::coalesce`) cost the database less
/// than one raw statement per request and can pass it.
fn one_statement_limit(ceiling: f64, raw: f64) -> f64 {
    ceiling / (ceiling + raw)
}

/// One measurement as a row of the printed table.
pub fn table_row(row: &Row) -> String {
    // The ceiling's own row has no statement, and no limit but itself.
    let (statement, statement_raw, api_statement, limit) = match row.statement.map(|s| s.rate) {
        Some(rate) => (
            format!("{rate:.0}"),
            format!("{:.0}%", 100.0 * rate / row.raw.rate),
            format!("{:.0}%", 100.0 * row.sample.rate() / rate),
            format!(
                "{:.0}%",
                100.0 * one_statement_limit(row.ceiling, row.raw.rate)
            ),
        ),
        None => ("–".into(), "–".into(), "–".into(), "–".into()),
    };
    format!(
        "| {:?} | {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0}% | {statement} | {statement_raw} | {api_statement} | {limit} |",
        row.backend,
        row.stored,
        row.operation,
        row.concurrency,
        row.sample.rate(),
        row.sample.percentile(0.50).as_secs_f64() * 1000.0,
        row.sample.percentile(0.99).as_secs_f64() * 1000.0,
        row.raw.rate,
        100.0 * row.sample.rate() / row.raw.rate,
    )
}

/// The operation of the create-customer rows where every third e-mail is an existing customer's.
pub const REPEATING_CREATE_CUSTOMER: &str = "create-customer, 1/3 repeated e-mail (write)";
/// The operation of the get-customer rows sent with an access token.
pub const GET_CUSTOMER: &str = "get-customer (read)";
/// The operation of the get-customer rows sent with an API key.
pub const KEY_GET_CUSTOMER: &str = "get-customer, API key (read)";

/// The operation of the rows of `GET /readyz`: a request that runs one trivial statement.
pub const READYZ: &str = "ceiling with a statement: GET /readyz";
/// The operation of the get-membership rows.
pub const GET_MEMBERSHIP: &str = "get-membership (read)";

/// The columns of [`readyz_rows`].
pub const READYZ_COLUMNS: [&str; 6] = [
    "backend",
    "clients",
    "GET /readyz req/s",
    "get-customer / readyz",
    "get-customer, API key / readyz",
    "get-membership / readyz",
];

/// Each read against `GET /readyz` of the same backend and concurrency: the target's ratio.
pub fn readyz_rows(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|row| row.operation == READYZ)
        .map(|ready| {
            let ratio = |operation: &str| {
                rows.iter()
                    .find(|row| {
                        row.operation == operation
                            && row.backend == ready.backend
                            && row.concurrency == ready.concurrency
                    })
                    .map_or("–".into(), |row| {
                        format!("{:.0}%", 100.0 * row.sample.rate() / ready.sample.rate())
                    })
            };
            format!(
                "| {:?} | {} | {:.0} | {} | {} | {} |",
                ready.backend,
                ready.concurrency,
                ready.sample.rate(),
                ratio(GET_CUSTOMER),
                ratio(KEY_GET_CUSTOMER),
                ratio(GET_MEMBERSHIP),
            )
        })
        .collect()
}

/// The columns of [`auth_rows`].
pub const AUTH_COLUMNS: [&str; 9] = [
    "backend",
    "clients",
    "token req/s",
    "API key req/s",
    "key / token",
    "token p50 ms",
    "API key p50 ms",
    "token p99 ms",
    "API key p99 ms",
];

/// Each get-customer measurement with an access token beside the same with an API key, of one
/// backend and concurrency.
pub fn auth_rows(rows: &[Row]) -> Vec<String> {
    let millis = |sample: &Sample, p: f64| sample.percentile(p).as_secs_f64() * 1000.0;
    rows.iter()
        .filter(|row| row.operation == GET_CUSTOMER)
        .filter_map(|token| {
            let key = rows.iter().find(|row| {
                row.operation == KEY_GET_CUSTOMER
                    && row.backend == token.backend
                    && row.concurrency == token.concurrency
            })?;
            let (t, k) = (&token.sample, &key.sample);
            Some(format!(
                "| {:?} | {} | {:.0} | {:.0} | {:.0}% | {:.2} | {:.2} | {:.2} | {:.2} |",
                token.backend,
                token.concurrency,
                t.rate(),
                k.rate(),
                100.0 * k.rate() / t.rate(),
                millis(t, 0.50),
                millis(k, 0.50),
                millis(t, 0.99),
                millis(k, 0.99),
            ))
        })
        .collect()
}

/// The columns of [`cpu_row`].
pub const CPU_COLUMNS: [&str; 13] = [
    "backend",
    "operation",
    "clients",
    "busy: API / raw",
    "API: client µs",
    "API: recur µs",
    "statement alone: recur µs",
    "API: database µs",
    "raw: client µs",
    "raw: database µs",
    "API / raw",
    "CPU: raw / API",
    "CPU: raw / API without recur",
];

/// Where one measurement's CPU went, per operation, against the raw run's; `None` without
/// `/proc`. On cores the runs keep busy, a rate is the cores' time over the CPU an operation
/// costs, so `raw / API` of the CPU follows the measured ratio, and the same without recur's part
/// is the most any server could reach with this client and this database.
pub fn cpu_row(row: &Row) -> Option<String> {
    let (api, raw) = (row.sample.cost?, row.raw.cost?);
    let per_request = api
        .cpu
        .per_operation_micros(row.sample.latencies.len() as u64);
    let per_raw = raw.cpu.per_operation_micros(row.raw.operations);
    // recur's idle runtime (its workers poll now and then) is no part of the raw run.
    let raw_total = per_raw.client + per_raw.database;
    // The statement runs from the client's runtime: its client part is recur's store code and
    // the database driver.
    let statement = row
        .statement
        .and_then(|run| Some(run.cost?.cpu.per_operation_micros(run.operations).client))
        .map_or("–".into(), |micros| format!("{micros:.1}"));
    Some(format!(
        "| {:?} | {} | {} | {:.0}% / {:.0}% | {:.1} | {:.1} | {statement} | {:.1} | {:.1} | {:.1} | {:.0}% | {:.0}% | {:.0}% |",
        row.backend,
        row.operation,
        row.concurrency,
        api.busy_percent(),
        raw.busy_percent(),
        per_request.client,
        per_request.server,
        per_request.database,
        per_raw.client,
        per_raw.database,
        100.0 * row.sample.rate() / row.raw.rate,
        100.0 * raw_total / per_request.total(),
        100.0 * raw_total / (per_request.client + per_request.database),
    ))
}
