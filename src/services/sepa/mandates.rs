//! Mandates (DESIGN §18): a customer's SEPA Direct Debit mandate for one of the merchant's SEPA
//! processors becomes the customer's payment method, debited for renewals, retries and plan
//! changes. By API (`POST /customer/{customerKey}/payment-method` with `type: sepa_debit`) or on
//! the hosted checkout, where the consent's client address and user agent are kept too. The
//! debtor's IBAN is sealed at rest; its last four are shown.

use std::collections::HashMap;

use recur_domain::sepa::{account, mandate};
use recur_domain::validation::FieldErrors;

use crate::http::input::{optional_text, required_text, Field};
use crate::ids;
use crate::platform::Platform;
use crate::services::sandbox::parse_instant;
use crate::services::ServiceError;
use crate::store::customers::Customer;
use crate::store::payment_methods::PaymentMethod;
use crate::store::sepa_accounts;
use crate::store::sepa_mandates::{self, Listed, Mandate, NewMandate};

/// A mandate to record, as given.
#[derive(Debug, Default)]
pub struct MandateInput {
    /// The merchant's SEPA processor it is signed for.
    pub payment_processor_id: Field<i64>,
    /// The debtor's IBAN.
    pub iban: Field<String>,
    /// The account holder's name.
    pub account_holder: Field<String>,
    /// The debtor bank's BIC.
    pub bic: Field<String>,
    /// The reference; made when absent.
    pub mandate_reference: Field<String>,
    /// When it was signed (ISO 8601); now when absent.
    pub signed_at: Field<String>,
}

/// Where a consent given on a hosted page came from.
#[derive(Debug, Clone)]
pub struct Consent {
    /// The client address.
    pub address: String,
    /// The browser's user agent.
    pub user_agent: String,
}

/// Checks `input` (every failing field listed, after those in `errors` found already) and
/// records the mandate as `customer`'s payment method. A reference the merchant used already is a 400 on `mandateReference`; a signature
/// date in the future a 400 on `signedAt`.
pub async fn record(
    state: &Platform,
    merchant_id: i64,
    customer: &Customer,
    input: MandateInput,
    consent: Option<Consent>,
    mut errors: FieldErrors,
) -> Result<(PaymentMethod, Mandate), ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let processor_id = input
        .payment_processor_id
        .required("paymentProcessorId", &mut errors);
    let iban = required_text(input.iban, "iban", &mut errors, account::iban);
    let holder = required_text(
        input.account_holder,
        "accountHolder",
        &mut errors,
        mandate::account_holder,
    );
    let bic = optional_text(input.bic, "bic", &mut errors, account::bic);
    let reference = optional_text(
        input.mandate_reference,
        "mandateReference",
        &mut errors,
        mandate::mandate_reference,
    );
    let signed_at = input
        .signed_at
        .optional("signedAt", &mut errors)
        .and_then(|text| errors.check("signedAt", parse_instant(&text)));
    if signed_at.is_some_and(|at| at > now) {
        errors.add("signedAt", "must not be in the future");
    }
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
    if let Some(reference) = &reference {
        if sepa_mandates::reference_taken(state.store.pool(), merchant_id, reference).await? {
            errors.add(
                "mandateReference",
                "is the reference of another mandate of this merchant",
            );
        }
    }
    let (Some(account), Some(iban), Some(holder)) = (account, iban, holder) else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let reference = reference.unwrap_or_else(|| ids::prefixed("RCR-", 20));
    let last4 = account::iban_last4(&iban);
    let fingerprint = format!(
        "sepa:{}:{}",
        account.processor_id,
        state.keys.lookup_digest(&iban)
    );
    let new = NewMandate {
        merchant_id,
        customer_id: customer.id,
        processor_id: account.processor_id,
        payment_method_key: ids::payment_method_key(),
        mandate_reference: &reference,
        account_holder: &holder,
        iban_sealed: state.keys.seal(&iban),
        iban_last4: &last4,
        fingerprint: &fingerprint,
        bic: bic.as_deref(),
        signed_at: signed_at.unwrap_or(now),
        consent: consent
            .as_ref()
            .map(|c| (c.address.as_str(), c.user_agent.as_str())),
    };
    let mut tx = state.store.begin().await?;
    let saved = match sepa_mandates::insert(&mut tx, new, now).await {
        Err(error) if crate::store::is_unique_violation(&error) => {
            return Err(ServiceError::invalid(
                "mandateReference",
                "is the reference of another mandate of this merchant",
            ))
        }
        other => other?,
    };
    tx.commit().await?;
    tracing::info!(
        merchant_id,
        processor_id = account.processor_id,
        payment_method = %saved.0.payment_method_key,
        "SEPA mandate recorded"
    );
    Ok(saved)
}

/// The mandate of the merchant's payment method `method`, when it is one.
pub async fn of_method(
    state: &Platform,
    merchant_id: i64,
    method: &PaymentMethod,
) -> Result<Option<Mandate>, ServiceError> {
    Ok(sepa_mandates::get(state.store.pool(), merchant_id, method.id).await?)
}

/// The SEPA processor the hosted checkout offers mandates for: the merchant's first one.
pub async fn checkout_creditor(
    state: &Platform,
    merchant_id: i64,
) -> Result<Option<sepa_accounts::Account>, ServiceError> {
    Ok(sepa_accounts::list(state.store.pool(), merchant_id)
        .await?
        .into_iter()
        .next())
}

/// A customer's mandate as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct CustomerMandate {
    /// The mandate and its IBAN's last four.
    pub listed: Listed,
    /// The name of the SEPA processor it was signed for.
    pub processor_name: String,
}

/// The mandates of the merchant's customer `customer_id`, newest first (revoked ones too), each
/// with its SEPA processor's name.
pub async fn of_customer(
    state: &Platform,
    merchant_id: i64,
    customer_id: i64,
) -> Result<Vec<CustomerMandate>, ServiceError> {
    let pool = state.store.pool();
    let listed = sepa_mandates::of_customer(pool, merchant_id, customer_id).await?;
    if listed.is_empty() {
        return Ok(Vec::new());
    }
    let names: HashMap<i64, String> = sepa_accounts::list(pool, merchant_id)
        .await?
        .into_iter()
        .map(|account| (account.processor_id, account.name))
        .collect();
    Ok(listed
        .into_iter()
        .map(|listed| CustomerMandate {
            processor_name: names
                .get(&listed.mandate.processor_id)
                .cloned()
                .unwrap_or_else(|| listed.mandate.processor_id.to_string()),
            listed,
        })
        .collect())
}
