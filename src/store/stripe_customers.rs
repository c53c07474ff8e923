//! `stripe_customers`: the Stripe Customer (`cus_…`) of a recur customer at one connected
//! Stripe account, created on first need. Every query is scoped by merchant id.

use sqlx::{Any, Executor};

/// The Stripe Customer of the merchant's customer `customer_id` at account `processor_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    processor_id: i64,
    customer_id: i64,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT stripe_customer_id FROM stripe_customers \
         WHERE merchant_id = $1 AND processor_id = $2 AND customer_id = $3",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(customer_id)
    .fetch_optional(executor)
    .await
}

/// Records `stripe_customer_id` as the customer's at the account, unless one is recorded
/// already; the one recorded. Concurrent first uses ask Stripe with one idempotency key, so they
/// name the same Customer.
pub async fn remember<'c, E: Executor<'c, Database = Any> + Copy>(
    executor: E,
    merchant_id: i64,
    processor_id: i64,
    customer_id: i64,
    stripe_customer_id: &str,
) -> Result<String, sqlx::Error> {
    sqlx::query(
        "INSERT INTO stripe_customers (merchant_id, processor_id, customer_id, \
         stripe_customer_id) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (merchant_id, processor_id, customer_id) DO NOTHING",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(customer_id)
    .bind(stripe_customer_id)
    .execute(executor)
    .await?;
    get(executor, merchant_id, processor_id, customer_id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)
}
