//! The read of a membership with its latest invoices, as the API answers it: many keys in one
//! statement, shared by concurrent reads ([`crate::store::coalesce`]).

use std::collections::HashMap;

use futures_util::future::BoxFuture;

use super::{decode, Membership, COLUMNS, FROM};
use crate::store::coalesce::{Batch, Statements};
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::{Backend, Pool, Store};

/// The membership with this key, if it belongs to `merchant_id`, with its latest
/// [`RECENT_INVOICES`] invoices, newest first. Concurrent calls share a statement
/// ([`crate::store::coalesce`]).
pub async fn get_with_invoices(
    store: &Store,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<(Membership, Vec<Invoice>)>, sqlx::Error> {
    store
        .membership_reads()
        .run((merchant_id, membership_key.to_owned()))
        .await
}

/// Reads memberships by merchant id and membership key with their latest invoices, many in one
/// statement on PostgreSQL and in two on SQLite.
#[derive(Debug)]
pub struct WithInvoicesByKey;

/// [`WithInvoicesByKey`]'s statements.
static WITH_INVOICES: Statements = Statements::new();

/// The statement of [`WithInvoicesByKey`] for `n` keys on `backend`. On PostgreSQL a lateral
/// join reads each membership's newest invoices straight off `invoices_by_membership`,
/// backwards. SQLite has no lateral join: for one key, the CTE makes the bound on invoice ids a
/// subquery evaluated once (not per invoice row), and the join an index range scan of
/// `invoices_by_membership`; for several, the memberships alone, their invoices by
/// [`invoices::recent_many`].
fn with_invoices_sql(backend: Backend, n: usize) -> String {
    let (keys, filter) = crate::store::by_merchant_keys(n, "m", "membership_key");
    let invoices = &*invoices::JOINED_COLUMNS;
    match (backend, n) {
        (Backend::Postgres, _) => format!(
            "SELECT {COLUMNS}, {invoices} {FROM} {keys} LEFT JOIN LATERAL (SELECT * FROM invoices \
             WHERE membership_id = m.id ORDER BY id DESC LIMIT {RECENT_INVOICES}) i ON TRUE \
             {filter}"
        ),
        (Backend::Sqlite, 1) => format!(
            "WITH found AS (SELECT {COLUMNS} {FROM} {filter}) \
             SELECT found.*, {invoices} FROM found LEFT JOIN invoices i \
             ON i.membership_id = found.id AND i.id >= (SELECT MIN(id) FROM (SELECT id \
             FROM invoices WHERE membership_id = (SELECT id FROM found) ORDER BY id DESC \
             LIMIT {RECENT_INVOICES}) AS newest)"
        ),
        (Backend::Sqlite, _) => format!("SELECT {COLUMNS} {FROM} {keys}"),
    }
}

impl Batch for WithInvoicesByKey {
    type Request = (i64, String);
    type Answer = Option<(Membership, Vec<Invoice>)>;

    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        backend: Backend,
        keys: &'a [(i64, String)],
    ) -> BoxFuture<'a, Result<Vec<Self::Answer>, sqlx::Error>> {
        Box::pin(async move {
            let sql = WITH_INVOICES.get(backend, keys.len(), |n| with_invoices_sql(backend, n));
            let joined = backend == Backend::Postgres || keys.len() == 1;
            let query = crate::store::bind_merchant_keys(sqlx::query(sql), keys);
            let rows = query.fetch_all(pool).await?;
            let mut found: HashMap<(i64, String), (Membership, Vec<Invoice>)> =
                HashMap::with_capacity(keys.len());
            for row in &rows {
                let membership = decode(row)?;
                let key = (membership.merchant_id, membership.membership_key.clone());
                let (_, recent) = found.entry(key).or_insert_with(|| (membership, Vec::new()));
                if joined {
                    // Two requests for one key in a batch repeat its rows.
                    if let Some(invoice) = invoices::decode_joined(row)? {
                        if !recent.iter().any(|known| known.id == invoice.id) {
                            recent.push(invoice);
                        }
                    }
                }
            }
            if !joined && !found.is_empty() {
                let ids: Vec<i64> = found.values().map(|(m, _)| m.id).collect();
                let mut newest = invoices::recent_many(pool, &ids, RECENT_INVOICES).await?;
                for (membership, recent) in found.values_mut() {
                    *recent = newest.remove(&membership.id).unwrap_or_default();
                }
            }
            for (_, recent) in found.values_mut() {
                // Ordered here rather than by the database: a sort step on the joined rows
                // costs PostgreSQL a tenth of this statement's rate.
                recent.sort_unstable_by_key(|invoice| std::cmp::Reverse(invoice.id));
            }
            Ok(keys.iter().map(|key| found.get(key).cloned()).collect())
        })
    }
}
