//! What the reverse-charge rule reads of a membership's merchant and customer (DESIGN §14): the
//! merchant's settings `country`, the customer's `countryCode` and whether its `taxIds` hold an
//! `eu_vat` entry; for a whole batch of customers in one statement.

use std::collections::HashMap;

use recur_domain::tax::Parties;
use sqlx::{Any, Executor, Row};

use super::customers::TaxId;

/// The parties of each `(merchant id, customer id)`, by customer id.
pub async fn parties_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    owners: &[(i64, i64)],
) -> Result<HashMap<i64, Parties>, sqlx::Error> {
    if owners.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT c.id, c.country_code, c.tax_ids, s.country FROM customers c \
         JOIN (VALUES {}) AS v ON c.merchant_id = v.column1 AND c.id = v.column2 \
         LEFT JOIN merchant_settings s ON s.merchant_id = c.merchant_id",
        super::placeholders(owners.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, customer_id) in owners {
        query = query.bind(*merchant_id).bind(*customer_id);
    }
    let mut parties = HashMap::with_capacity(owners.len());
    for row in query.fetch_all(executor).await? {
        let tax_ids: String = row.try_get("tax_ids")?;
        let tax_ids: Vec<TaxId> =
            serde_json::from_str(&tax_ids).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        parties.insert(
            row.try_get::<i64, _>("id")?,
            Parties {
                merchant_country: row.try_get("country")?,
                customer_country: row.try_get("country_code")?,
                customer_has_eu_vat: tax_ids.iter().any(|t| t.kind == "eu_vat"),
            },
        );
    }
    Ok(parties)
}
