//! SEPA processors: the creditor a merchant collects as (creditor identifier, name, collection
//! account) and the pre-notification lead. Connected and changed through `/processors` and the
//! dashboard alike ([`crate::services::processors`] hands the `sepa_debit` kind here).

use recur_domain::sepa::{account, creditor};
use recur_domain::validation::{self as rules, FieldErrors};

use crate::http::input::{optional_text, required_text, Field};
use crate::platform::Platform;
use crate::services::ServiceError;
use crate::store::processors::Removal;
use crate::store::sepa_accounts::{self, Account, Changes, Creditor};

/// Pre-notification lead when none is given.
pub const DEFAULT_LEAD_DAYS: i64 = 5;

/// Longest creditor name (`Max70Text` in the collection files).
const MAX_CREDITOR_NAME_CHARS: usize = 70;

/// A SEPA processor to connect, as given.
#[derive(Debug, Default)]
pub struct NewSepa {
    /// The SEPA creditor identifier.
    pub creditor_id: Field<String>,
    /// The creditor name on mandates and collection files; the processor's name when absent.
    pub creditor_name: Field<String>,
    /// The collection account.
    pub iban: Field<String>,
    /// The collection account's BIC.
    pub bic: Field<String>,
    /// Pre-notification lead, 1–14 days.
    pub lead_days: Field<i64>,
}

/// A change of a SEPA processor, as given.
#[derive(Debug, Default)]
pub struct SepaChange {
    /// Refused: mandates name the creditor identifier they were signed for.
    pub creditor_id: Field<String>,
    /// A new creditor name.
    pub creditor_name: Field<String>,
    /// A new collection account.
    pub iban: Field<String>,
    /// A new BIC; `null` removes it.
    pub bic: Field<String>,
    /// A new lead.
    pub lead_days: Field<i64>,
}

/// Checks `new` (every failing field listed, with `errors` found already) and connects the
/// processor named `name` (`None`: the name was refused, and is among `errors`).
pub async fn connect(
    state: &Platform,
    merchant_id: i64,
    name: Option<String>,
    new: NewSepa,
    mut errors: FieldErrors,
) -> Result<Account, ServiceError> {
    let creditor_id = required_text(new.creditor_id, "creditorId", &mut errors, |v| {
        creditor::creditor_id(v)
    });
    let creditor_name = optional_text(new.creditor_name, "creditorName", &mut errors, |v| {
        rules::bounded_text(v, MAX_CREDITOR_NAME_CHARS)
    });
    let iban = required_text(new.iban, "iban", &mut errors, account::iban);
    let bic = optional_text(new.bic, "bic", &mut errors, account::bic);
    let lead_days = lead_days(new.lead_days, &mut errors).unwrap_or(DEFAULT_LEAD_DAYS);
    let (Some(name), Some(creditor_id), Some(iban)) = (name, creditor_id, iban) else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let creditor = Creditor {
        creditor_id,
        creditor_name: creditor_name.unwrap_or_else(|| name.clone()),
        iban,
        bic,
        lead_days,
    };
    let now = state.merchant_now(merchant_id).await?;
    let account = sepa_accounts::insert(&state.store, merchant_id, &name, &creditor, now)
        .await?
        .ok_or_else(|| {
            ServiceError::Conflict(format!(
                "A merchant connects at most {} SEPA processors; remove one first.",
                sepa_accounts::MAX_PER_MERCHANT
            ))
        })?;
    tracing::info!(
        merchant_id,
        processor_id = account.processor_id,
        "SEPA processor connected"
    );
    Ok(account)
}

/// Checks `change` into `errors`; the changes to store when nothing failed.
pub fn changes(change: SepaChange, name: Option<String>, errors: &mut FieldErrors) -> Changes {
    if change.creditor_id.is_given() {
        errors.add(
            "creditorId",
            "mandates name the creditor identifier they were signed for; connect a new SEPA \
             processor for another one",
        );
    }
    let creditor_name = optional_text(change.creditor_name, "creditorName", errors, |v| {
        rules::bounded_text(v, MAX_CREDITOR_NAME_CHARS)
    });
    let iban = optional_text(change.iban, "iban", errors, account::iban);
    let bic = match change.bic {
        Field::Absent => None,
        Field::Null => Some(None),
        other => optional_text(other, "bic", errors, account::bic).map(Some),
    };
    let lead_days = lead_days(change.lead_days, errors);
    Changes {
        name,
        creditor_name,
        iban,
        bic,
        lead_days,
    }
}

/// Applies checked `changes` to the merchant's SEPA processor.
pub async fn change(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
    changes: &Changes,
) -> Result<Account, ServiceError> {
    let mut tx = state.store.begin().await?;
    let account = sepa_accounts::update(&mut tx, merchant_id, processor_id, changes)
        .await?
        .ok_or(ServiceError::NotFound)?;
    tx.commit().await?;
    Ok(account)
}

/// Removes the merchant's SEPA processor: 404 when there is none, 409 while a customer's
/// mandate is held by it.
pub async fn remove(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
) -> Result<(), ServiceError> {
    let mut tx = state.store.begin().await?;
    match sepa_accounts::delete(&mut tx, merchant_id, processor_id).await? {
        Removal::Removed => {
            tx.commit().await?;
            tracing::info!(merchant_id, processor_id, "SEPA processor removed");
            Ok(())
        }
        Removal::NotFound => Err(ServiceError::NotFound),
        Removal::InUse => Err(ServiceError::Conflict(
            "A customer's mandate is held by this SEPA processor; it cannot be removed while it \
             is in use."
                .into(),
        )),
    }
}

/// `leadDays`, 1–14, when given.
fn lead_days(field: Field<i64>, errors: &mut FieldErrors) -> Option<i64> {
    let days = field.optional("leadDays", errors)?;
    if (1..=14).contains(&days) {
        Some(days)
    } else {
        errors.add("leadDays", "must be 1 to 14");
        None
    }
}
