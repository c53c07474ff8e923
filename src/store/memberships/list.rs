//! A page of a merchant's memberships, newest first ([`crate::store::keyset`]).

use recur_domain::status::MembershipStatus;
use sqlx::{Any, Executor};

use super::{decode, Membership, COLUMNS, FROM};
use crate::store::keyset::{self, Filters, Window};

/// What a list of memberships keeps (all of the merchant's when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only memberships in this status (index `memberships_by_status`).
    pub status: Option<MembershipStatus>,
    /// Only the memberships of the merchant's customer with this key (index
    /// `memberships_by_customer`); none for a key the merchant does not have.
    pub customer_key: Option<String>,
}

/// A page of the merchant's memberships that `filter` keeps, newest first.
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    filter: &Filter,
    window: Window,
) -> Result<Vec<Membership>, sqlx::Error> {
    let mut filters = Filters::default();
    filters.equal("m.status", filter.status.map(|s| s.as_str()));
    filters.owned_by(
        "m.customer_id",
        "customers",
        "customer_key",
        filter.customer_key.as_deref(),
    );
    let select = format!("SELECT {COLUMNS} {FROM}");
    let rows = keyset::page(executor, &select, "m", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}
