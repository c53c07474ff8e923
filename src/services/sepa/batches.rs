//! Collection files (DESIGN §18): `POST /sepa/batches` takes every `Pending` debit of one SEPA
//! processor due by the collection date into one batch and renders its `pain.008.001.08`
//! document ([`recur_domain::sepa::pain008`]), kept as made. A debit is taken by one statement
//! that claims only debits in no batch, so it lands in one batch only, whatever runs at once.

use chrono::NaiveDate;
use recur_domain::sepa::pain008::{self, Collection, Creditor, Debit, Sequence};
use recur_domain::sepa::target2;
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use crate::http::input::Field;
use crate::http::pagination::{ListScope, PageParams};
use crate::ids;
use crate::platform::Platform;
use crate::services::ServiceError;
use crate::store::sepa_accounts;
use crate::store::sepa_batches::{self, Batch};
use crate::store::sepa_debits::{self, Taken};
use crate::store::sepa_mandates;

/// A batch to make, as asked.
#[derive(Debug, Default)]
pub struct NewBatch {
    /// The merchant's SEPA processor whose debits it collects.
    pub payment_processor_id: Field<i64>,
    /// `YYYY-MM-DD`, a TARGET2 business day from today on; the next one from today when
    /// absent.
    pub collection_date: Field<String>,
}

/// Makes the batch `new` asks for: every `Pending` debit of the processor due by its collection
/// date. A batch without debits is not made (409).
pub async fn create(
    state: &Platform,
    merchant_id: i64,
    new: NewBatch,
) -> Result<Batch, ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let today = now.date_naive();
    let mut errors = FieldErrors::new();
    let processor_id = new
        .payment_processor_id
        .required("paymentProcessorId", &mut errors);
    let date = new
        .collection_date
        .optional("collectionDate", &mut errors)
        .and_then(|text| errors.check("collectionDate", collection_date(&text, today)));
    let account = match processor_id {
        Some(id) => {
            let found = sepa_accounts::get(state.store.pool(), merchant_id, id).await?;
            if found.is_none() {
                errors.add(
                    "paymentProcessorId",
                    "is not a SEPA processor connected by this merchant",
                );
            }
            found
        }
        None => None,
    };
    let Some(account) = account else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let date = date.unwrap_or_else(|| target2::on_or_after(today));
    let batch_key = ids::prefixed("sb_", 24);
    let message_id = ids::prefixed("RCR", 24);
    let mut tx = state.store.begin().await?;
    let batch_id = sepa_batches::open(
        &mut tx,
        merchant_id,
        account.processor_id,
        &batch_key,
        date,
        &message_id,
        now,
    )
    .await?;
    let taken =
        sepa_debits::take_for_batch(&mut tx, merchant_id, account.processor_id, date, batch_id)
            .await?;
    if taken.is_empty() {
        tx.rollback().await?;
        return Err(ServiceError::Conflict(format!(
            "No debit of this processor is due by {date}; no batch was made."
        )));
    }
    let collection = Collection {
        message_id: message_id.clone(),
        created_at: now,
        collection_date: date,
        creditor: Creditor {
            name: account.creditor.creditor_name.clone(),
            iban: account.creditor.iban.clone(),
            bic: account.creditor.bic.clone(),
            creditor_id: account.creditor.creditor_id.clone(),
        },
        debits: debits(state, &mut tx, merchant_id, &taken).await?,
    };
    let document = pain008::render(&collection)
        .map_err(|e| ServiceError::Internal(anyhow::anyhow!("collection file: {e}")))?;
    let total: i64 = taken.iter().map(|d| d.amount).sum();
    let count = i64::try_from(taken.len()).unwrap_or(i64::MAX);
    sepa_batches::finish(&mut tx, batch_id, count, total, &document).await?;
    tx.commit().await?;
    tracing::info!(
        merchant_id,
        processor_id = account.processor_id,
        batch = %batch_key,
        debits = count,
        "SEPA collection file made"
    );
    sepa_batches::get(state.store.pool(), merchant_id, &batch_key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// The collection file's lines of `taken`, the mandates' IBANs opened.
async fn debits(
    state: &Platform,
    tx: &mut crate::store::Tx,
    merchant_id: i64,
    taken: &[Taken],
) -> Result<Vec<Debit>, ServiceError> {
    let ids: Vec<(i64, i64)> = taken
        .iter()
        .map(|d| (merchant_id, d.payment_method_id))
        .collect();
    let mandates = sepa_mandates::get_many(&mut **tx, &ids).await?;
    taken
        .iter()
        .map(|d| {
            let mandate = mandates
                .get(&d.payment_method_id)
                .ok_or(ServiceError::NotFound)?;
            Ok(Debit {
                end_to_end_id: d.end_to_end_id.clone(),
                amount: Decimal::new(d.amount, 2),
                mandate_id: mandate.mandate_reference.clone(),
                signed_on: mandate.signed_at.date_naive(),
                sequence: if d.first {
                    Sequence::First
                } else {
                    Sequence::Recurring
                },
                debtor_name: mandate.account_holder.clone(),
                debtor_iban: state.keys.open(&mandate.iban_sealed)?,
                debtor_bic: mandate.bic.clone(),
                remittance: d.invoice_number.clone(),
            })
        })
        .collect()
}

/// `text` as a collection date: `YYYY-MM-DD`, today or later, a TARGET2 business day.
fn collection_date(text: &str, today: NaiveDate) -> Result<NaiveDate, String> {
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| "must be a date, YYYY-MM-DD".to_string())?;
    if date < today {
        return Err(format!("must be today ({today}) or later"));
    }
    if !target2::is_business_day(date) {
        return Err(format!(
            "must be a TARGET2 business day; the next one is {}",
            target2::on_or_after(date)
        ));
    }
    Ok(date)
}

/// A page of the merchant's batches, newest first.
pub async fn page(
    state: &Platform,
    merchant_id: i64,
    page: PageParams,
) -> Result<(Vec<Batch>, Option<String>), ServiceError> {
    let scope = ListScope::new("sepa-batches", merchant_id, &[]);
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows = sepa_batches::page(state.store.pool(), merchant_id, ask.window()).await?;
    Ok(ask.cut(rows, |b| b.id))
}

/// The merchant's batch `batch_key`.
pub async fn get(
    state: &Platform,
    merchant_id: i64,
    batch_key: &str,
) -> Result<Batch, ServiceError> {
    sepa_batches::get(state.store.pool(), merchant_id, batch_key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// The `pain.008` document of the merchant's batch `batch_key`, as made.
pub async fn document(
    state: &Platform,
    merchant_id: i64,
    batch_key: &str,
) -> Result<String, ServiceError> {
    sepa_batches::document(state.store.pool(), merchant_id, batch_key)
        .await?
        .ok_or(ServiceError::NotFound)
}
