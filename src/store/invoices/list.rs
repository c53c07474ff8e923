//! The merchant's invoices a page at a time, newest first, by status, membership or customer
//! ([`keyset`]).

use sqlx::{Any, Executor, Row};

use super::{decode, InvoiceStatus, COLUMNS};
use crate::store::keyset::{self, Filters, Value, Window};

/// An invoice as a list shows it: with the keys of its membership and customer.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The invoice.
    pub invoice: super::Invoice,
    /// Its membership's key.
    pub membership_key: String,
    /// Its customer's key.
    pub customer_key: String,
}

/// What a list of invoices keeps (all of the merchant's when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only invoices in this status (index `invoices_by_status`).
    pub status: Option<InvoiceStatus>,
    /// Only the invoices of the merchant's membership with this key (index
    /// `invoices_by_membership`); none for a key the merchant does not have.
    pub membership_key: Option<String>,
    /// Only the invoices of the memberships of the merchant's customer with this key: the
    /// customer's invoices are read by membership and sorted.
    pub customer_key: Option<String>,
}

/// A page of the merchant's invoices that `filter` keeps, newest first ([`keyset`]).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    filter: &Filter,
    window: Window,
) -> Result<Vec<Listed>, sqlx::Error> {
    let mut filters = Filters::default();
    filters.equal("i.status", filter.status.map(|s| s.as_str()));
    filters.owned_by(
        "i.membership_id",
        "memberships",
        "membership_key",
        filter.membership_key.as_deref(),
    );
    if let Some(key) = &filter.customer_key {
        filters.and_within(vec![Value::Text(key.clone())], |p| {
            format!(
                "i.membership_id IN (SELECT k.id FROM memberships k \
                 JOIN customers j ON j.id = k.customer_id \
                 WHERE j.merchant_id = $1 AND j.customer_key = {})",
                p[0]
            )
        });
    }
    let select = format!(
        "SELECT {}, m.membership_key, c.customer_key FROM invoices i \
         JOIN memberships m ON m.id = i.membership_id JOIN customers c ON c.id = m.customer_id",
        crate::store::qualified(COLUMNS, "i", None)
    );
    let rows = keyset::page(executor, &select, "i", merchant_id, &filters, window).await?;
    rows.iter()
        .map(|row| {
            Ok(Listed {
                invoice: decode(row)?,
                membership_key: row.try_get("membership_key")?,
                customer_key: row.try_get("customer_key")?,
            })
        })
        .collect()
}
