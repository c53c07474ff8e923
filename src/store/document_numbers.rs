//! The `document_counters` table: the last number handed out per merchant, series (invoices,
//! credit notes) and year (DESIGN §9). Numbers are taken inside the transaction that uses them;
//! the upsert's row lock holds other takers of the same merchant, series and year until it
//! commits (or rolls back, returning the numbers), so a sequence has no gaps and no repeats
//! across requests and processes.

use std::collections::HashMap;

use recur_domain::numbering::Series;
use sqlx::Row;

use super::Tx;

/// Numbers handed out to one merchant for one year.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// The first of the numbers taken; the others follow it.
    pub first: i64,
    /// The merchant's invoice prefix when set (`merchant_settings.invoice_prefix`).
    pub invoice_prefix: Option<String>,
}

/// Takes `count` consecutive numbers of `series` for each `(merchant id, year, count)` in one
/// statement, by `(merchant id, year)`. Rows are locked in `(merchant id, year)` order, so two
/// transactions taking numbers of several merchants never wait on each other in a cycle.
pub async fn take(
    tx: &mut Tx,
    series: Series,
    wanted: &[(i64, i32, i64)],
) -> Result<HashMap<(i64, i32), Taken>, sqlx::Error> {
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let mut wanted = wanted.to_vec();
    wanted.sort_unstable();
    let sql = format!(
        "INSERT INTO document_counters (merchant_id, series, year, last_value) VALUES {} \
         ON CONFLICT (merchant_id, series, year) \
         DO UPDATE SET last_value = document_counters.last_value + excluded.last_value \
         RETURNING merchant_id, year, last_value, \
         (SELECT s.invoice_prefix FROM merchant_settings s \
          WHERE s.merchant_id = document_counters.merchant_id) AS invoice_prefix",
        super::placeholders(wanted.len(), 4, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for (merchant_id, year, count) in &wanted {
        query = query
            .bind(*merchant_id)
            .bind(series.as_str())
            .bind(i64::from(*year))
            .bind(*count);
    }
    let counts: HashMap<(i64, i32), i64> = wanted
        .iter()
        .map(|(merchant_id, year, count)| ((*merchant_id, *year), *count))
        .collect();
    let mut taken = HashMap::with_capacity(wanted.len());
    for row in query.fetch_all(&mut **tx).await? {
        let merchant_id: i64 = row.try_get("merchant_id")?;
        let year = i32::try_from(row.try_get::<i64, _>("year")?)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        let last: i64 = row.try_get("last_value")?;
        let count = counts.get(&(merchant_id, year)).copied().unwrap_or(0);
        taken.insert(
            (merchant_id, year),
            Taken {
                first: last - count + 1,
                invoice_prefix: row.try_get("invoice_prefix")?,
            },
        );
    }
    Ok(taken)
}
