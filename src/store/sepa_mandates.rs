//! SEPA Direct Debit mandates (DESIGN §18): a payment method of type `sepa_debit` (its row in
//! `payment_methods`: the reference as its token, the IBAN's last four) with the mandate's
//! details in `sepa_mandates`, the debtor's IBAN sealed. Every query is scoped by merchant id.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::payment_methods::{self, MethodType, NewPaymentMethod, PaymentMethod};
use super::{from_micros, to_micros, Tx};

/// A mandate to store, its values checked.
#[derive(Debug)]
pub struct NewMandate<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The customer who signed it.
    pub customer_id: i64,
    /// The merchant's SEPA processor it was signed for.
    pub processor_id: i64,
    /// Fresh payment method key (`pm_…`).
    pub payment_method_key: String,
    /// The reference, unique per merchant.
    pub mandate_reference: &'a str,
    /// The account holder.
    pub account_holder: &'a str,
    /// The debtor's IBAN, sealed.
    pub iban_sealed: String,
    /// The IBAN's last four characters.
    pub iban_last4: &'a str,
    /// Keyed digest of the IBAN: the same account gives the same value.
    pub fingerprint: &'a str,
    /// The debtor bank's BIC, when given.
    pub bic: Option<&'a str>,
    /// When it was signed.
    pub signed_at: DateTime<Utc>,
    /// Where the consent was given on a hosted page: the client address and user agent.
    pub consent: Option<(&'a str, &'a str)>,
}

/// A stored mandate.
#[derive(Debug, Clone)]
pub struct Mandate {
    /// Its payment method's internal id.
    pub payment_method_id: i64,
    /// The SEPA processor it was signed for.
    pub processor_id: i64,
    /// The reference (`MndtId`).
    pub mandate_reference: String,
    /// The account holder (`Dbtr/Nm`).
    pub account_holder: String,
    /// The debtor's IBAN, sealed.
    pub iban_sealed: String,
    /// The debtor bank's BIC, when given.
    pub bic: Option<String>,
    /// When it was signed (`DtOfSgntr`).
    pub signed_at: DateTime<Utc>,
    /// The client address the consent came from, when given on a hosted page.
    pub consent_address: Option<String>,
    /// The user agent the consent came from.
    pub consent_user_agent: Option<String>,
    /// When it was revoked; a revoked mandate takes no more debits.
    pub revoked_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "payment_method_id, processor_id, mandate_reference, account_holder, \
                       iban_sealed, bic, signed_at, consent_address, consent_user_agent, \
                       revoked_at";

fn decode(row: &AnyRow) -> Result<Mandate, sqlx::Error> {
    Ok(Mandate {
        payment_method_id: row.try_get("payment_method_id")?,
        processor_id: row.try_get("processor_id")?,
        mandate_reference: row.try_get("mandate_reference")?,
        account_holder: row.try_get("account_holder")?,
        iban_sealed: row.try_get("iban_sealed")?,
        bic: row.try_get("bic")?,
        signed_at: from_micros(row.try_get("signed_at")?),
        consent_address: row.try_get("consent_address")?,
        consent_user_agent: row.try_get("consent_user_agent")?,
        revoked_at: row
            .try_get::<Option<i64>, _>("revoked_at")?
            .map(from_micros),
    })
}

/// Stores `new` as the customer's payment method (attached at once: renewals debit it) and
/// its mandate. A reference the merchant used already fails on the unique index.
pub async fn insert(
    tx: &mut Tx,
    new: NewMandate<'_>,
    now: DateTime<Utc>,
) -> Result<(PaymentMethod, Mandate), sqlx::Error> {
    let method = payment_methods::insert(
        tx,
        NewPaymentMethod {
            merchant_id: new.merchant_id,
            customer_id: new.customer_id,
            payment_method_key: new.payment_method_key,
            processor_token: new.mandate_reference,
            brand: "SEPA",
            bin: "",
            last4: new.iban_last4,
            fingerprint: new.fingerprint,
            attached: true,
            processor_id: Some(new.processor_id),
            expiry: None,
            method_type: MethodType::SepaDebit,
        },
        now,
    )
    .await?;
    let sql = format!(
        "INSERT INTO sepa_mandates (payment_method_id, merchant_id, processor_id, \
         mandate_reference, account_holder, iban_sealed, bic, signed_at, consent_address, \
         consent_user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(method.id)
        .bind(new.merchant_id)
        .bind(new.processor_id)
        .bind(new.mandate_reference)
        .bind(new.account_holder)
        .bind(&new.iban_sealed)
        .bind(new.bic)
        .bind(to_micros(new.signed_at))
        .bind(new.consent.map(|(address, _)| address))
        .bind(new.consent.map(|(_, agent)| agent))
        .fetch_one(&mut **tx)
        .await?;
    Ok((method, decode(&row)?))
}

/// Whether the merchant used `reference` for a mandate already.
pub async fn reference_taken<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    reference: &str,
) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT payment_method_id FROM sepa_mandates \
         WHERE merchant_id = $1 AND mandate_reference = $2",
    )
    .bind(merchant_id)
    .bind(reference)
    .fetch_optional(executor)
    .await?;
    Ok(found.is_some())
}

/// The mandate of the merchant's payment method `payment_method_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    payment_method_id: i64,
) -> Result<Option<Mandate>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM sepa_mandates WHERE merchant_id = $1 AND payment_method_id = $2"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(payment_method_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// A customer's mandate as listed, with its IBAN's last four.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The mandate.
    pub mandate: Mandate,
    /// The debtor IBAN's last four characters.
    pub iban_last4: String,
}

/// The mandates of the merchant's customer `customer_id`, newest first, revoked ones too.
pub async fn of_customer<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_id: i64,
) -> Result<Vec<Listed>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, iban_last4 FROM sepa_mandates JOIN \
         (SELECT id AS method_id, last4 AS iban_last4, created_at AS recorded_at \
          FROM payment_methods WHERE merchant_id = $1 AND customer_id = $2) AS p \
         ON p.method_id = sepa_mandates.payment_method_id \
         WHERE sepa_mandates.merchant_id = $3 ORDER BY recorded_at DESC, method_id DESC"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_id)
        .bind(merchant_id)
        .fetch_all(executor)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Listed {
                mandate: decode(row)?,
                iban_last4: row.try_get("iban_last4")?,
            })
        })
        .collect()
}

/// The mandates of these `(merchant id, payment method id)` pairs, by payment method id.
pub async fn get_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<HashMap<i64, Mandate>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM sepa_mandates JOIN (VALUES {}) AS v \
         ON sepa_mandates.merchant_id = v.column1 AND sepa_mandates.payment_method_id = v.column2",
        super::placeholders(ids.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter()
        .map(|row| decode(row).map(|m| (m.payment_method_id, m)))
        .collect()
}

/// Revokes the merchant's mandate `payment_method_id` at `at` (a bank returned a debit for a
/// reason that ends it); a revoked one stays as it was.
pub async fn revoke(
    tx: &mut Tx,
    merchant_id: i64,
    payment_method_id: i64,
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE sepa_mandates SET revoked_at = $3 \
         WHERE merchant_id = $1 AND payment_method_id = $2 AND revoked_at IS NULL",
    )
    .bind(merchant_id)
    .bind(payment_method_id)
    .bind(to_micros(at))
    .execute(&mut **tx)
    .await?;
    Ok(())
}
