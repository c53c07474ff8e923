//! The taxation a membership's invoices are built with (DESIGN §14): its rates, less the EU
//! rates when the reverse-charge rule applies between its merchant and its customer.

use std::collections::HashMap;

use recur_domain::tax::{Parties, Taxation};
use sqlx::{Any, Executor};

use crate::store::memberships::Membership;
use crate::store::tax_parties;

/// The taxation of `m`; reads its parties only when it has rates.
pub async fn of<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    m: &Membership,
) -> Result<Taxation, sqlx::Error> {
    if m.tax_rates.is_empty() {
        return Ok(Taxation::none());
    }
    let parties = tax_parties::parties_many(executor, &[(m.merchant_id, m.customer_id)]).await?;
    Ok(with_parties(m, &parties))
}

/// The parties of those of `memberships` that have rates, in one statement (none when no
/// membership has rates): for [`with_parties`].
pub async fn parties_of<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    memberships: &[Membership],
) -> Result<HashMap<i64, Parties>, sqlx::Error> {
    let owners: Vec<(i64, i64)> = memberships
        .iter()
        .filter(|m| !m.tax_rates.is_empty())
        .map(|m| (m.merchant_id, m.customer_id))
        .collect();
    tax_parties::parties_many(executor, &owners).await
}

/// The taxation of `m` given the parties of its customer (by customer id).
pub fn with_parties(m: &Membership, parties: &HashMap<i64, Parties>) -> Taxation {
    match parties.get(&m.customer_id) {
        Some(parties) => Taxation::new(&m.tax_rates, parties),
        None => Taxation::new(&m.tax_rates, &Parties::default()),
    }
}
