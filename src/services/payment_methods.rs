//! A customer's payment method (DESIGN §17, §18): the one renewals and proration charge. A
//! merchant that collected a card with its own Stripe.js hands recur the PaymentMethod
//! (`pm_…`); recur reads it from the merchant's connected Stripe account, attaches it to the
//! customer's Stripe Customer (made on first need) and makes it the customer's method. Card
//! numbers never reach recur on this route. A SEPA mandate is recorded by
//! [`super::sepa::mandates`].

use recur_domain::stripe_keys;
use recur_domain::validation::FieldErrors;

use super::sepa::mandates::{self, MandateInput};
use super::ServiceError;
use crate::http::input::{refuse_given, required_text, Field};
use crate::ids;
use crate::platform::Platform;
use crate::processor::stripe::objects::{Card, PaymentMethod as StripeMethod};
use crate::processor::stripe::{Connection, StripeError};
use crate::store::customers::{self, Customer};
use crate::store::payment_methods::{self, MethodType, NewPaymentMethod, PaymentMethod};
use crate::store::sepa_mandates::Mandate;
use crate::store::stripe_accounts::{self, Account};
use crate::store::stripe_customers;

/// A PaymentMethod to attach, as given.
#[derive(Debug, Default)]
pub struct StripeMethodInput {
    /// The merchant's connected Stripe account that holds it.
    pub payment_processor_id: Field<i64>,
    /// Its id at Stripe, `pm_…`.
    pub payment_method: Field<String>,
}

/// A payment method to attach, as given: a card at Stripe, or a SEPA mandate.
#[derive(Debug, Default)]
pub struct AttachInput {
    /// `card` (the default) or `sepa_debit`.
    pub kind: Field<String>,
    /// A card's PaymentMethod at Stripe.
    pub stripe: StripeMethodInput,
    /// A mandate's details.
    pub mandate: MandateInput,
}

/// A customer's payment method, with its mandate when it is one.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The payment method.
    pub method: PaymentMethod,
    /// Its mandate (`sepa_debit`).
    pub mandate: Option<Mandate>,
}

/// The customer's current payment method, `None` when it has none.
pub async fn current(
    state: &Platform,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Option<Saved>, ServiceError> {
    let customer = customer(state, merchant_id, customer_key).await?;
    let Some(method) =
        payment_methods::current(state.store.pool(), merchant_id, customer.id).await?
    else {
        return Ok(None);
    };
    let mandate = match method.method_type {
        MethodType::SepaDebit => mandates::of_method(state, merchant_id, &method).await?,
        MethodType::Card => None,
    };
    Ok(Some(Saved { method, mandate }))
}

/// Attaches what `input` names to the customer and makes it the customer's payment method: a
/// card at Stripe ([`attach_stripe`]) or a SEPA mandate ([`mandates::record`]). Fields of the
/// other type are refused.
pub async fn attach_method(
    state: &Platform,
    merchant_id: i64,
    customer_key: &str,
    input: AttachInput,
) -> Result<Saved, ServiceError> {
    let mut errors = FieldErrors::new();
    let kind = match input.kind {
        Field::Absent => Some("card".to_owned()),
        other => required_text(other, "type", &mut errors, |v| match v {
            "card" | "sepa_debit" => Ok(v.to_owned()),
            _ => Err("must be card or sepa_debit".into()),
        }),
    };
    let sepa = kind.as_deref() == Some("sepa_debit");
    let mandate = &input.mandate;
    if sepa {
        refuse_given(
            &[("paymentMethod", input.stripe.payment_method.is_given())],
            "a sepa_debit payment method has no such field",
            &mut errors,
        );
    } else {
        refuse_given(
            &[
                ("iban", mandate.iban.is_given()),
                ("accountHolder", mandate.account_holder.is_given()),
                ("bic", mandate.bic.is_given()),
                ("mandateReference", mandate.mandate_reference.is_given()),
                ("signedAt", mandate.signed_at.is_given()),
            ],
            "a card payment method has no such field",
            &mut errors,
        );
    }
    if sepa {
        let customer = customer(state, merchant_id, customer_key).await?;
        let (method, mandate) =
            mandates::record(state, merchant_id, &customer, input.mandate, None, errors).await?;
        return Ok(Saved {
            method,
            mandate: Some(mandate),
        });
    }
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let method = attach_stripe(state, merchant_id, customer_key, input.stripe).await?;
    Ok(Saved {
        method,
        mandate: None,
    })
}

/// Attaches the PaymentMethod `input` names to the customer, through the merchant's Stripe
/// account, and makes it the customer's method. Every failing field is listed: a processor that
/// is not one of the merchant's Stripe accounts, an id that is not a `pm_…`, a PaymentMethod
/// that account does not hold, one that is not a card or is another customer's. Nothing is
/// stored unless Stripe attached it; Stripe out of reach is a 503.
pub async fn attach_stripe(
    state: &Platform,
    merchant_id: i64,
    customer_key: &str,
    input: StripeMethodInput,
) -> Result<PaymentMethod, ServiceError> {
    let customer = customer(state, merchant_id, customer_key).await?;
    let mut errors = FieldErrors::new();
    let processor_id = input
        .payment_processor_id
        .required("paymentProcessorId", &mut errors);
    let method_id = required_text(input.payment_method, "paymentMethod", &mut errors, |v| {
        stripe_keys::object_id(v, "pm_")
    });
    let account = match processor_id {
        Some(id) => {
            let found = stripe_accounts::get(state.store.pool(), merchant_id, id).await?;
            if found.is_none() {
                errors.add(
                    "paymentProcessorId",
                    "is not a Stripe account connected by this merchant",
                );
            }
            found
        }
        None => None,
    };
    let (Some(account), Some(method_id)) = (account, method_id) else {
        return Err(ServiceError::Validation(errors));
    };
    let secret_key = state.keys.open(&account.secret_key_sealed)?;
    let stripe = Connection::new(&state.stripe, secret_key);
    save_card(
        state,
        &stripe,
        merchant_id,
        &account,
        &customer,
        &method_id,
        true,
    )
    .await
}

/// Reads the PaymentMethod `method_id` from the merchant's Stripe `account`, attaches it to the
/// customer's Stripe Customer when it is not yet, and saves it for the customer (`attached`:
/// the customer's method at once; otherwise once it has paid, as a card entered on a checkout
/// page). A PaymentMethod that is no card or is another customer's is a 400 on `paymentMethod`.
pub(super) async fn save_card(
    state: &Platform,
    stripe: &Connection<'_>,
    merchant_id: i64,
    account: &Account,
    customer: &Customer,
    method_id: &str,
    attached: bool,
) -> Result<PaymentMethod, ServiceError> {
    let method = stripe
        .payment_method(method_id)
        .await
        .map_err(|e| refused_on("paymentMethod", e))?;
    let card = match (&method.kind[..], &method.card) {
        ("card", Some(card)) => card.clone(),
        _ => {
            return Err(ServiceError::invalid(
                "paymentMethod",
                format!("is a {} payment method, not a card", method.kind),
            ))
        }
    };
    let stripe_customer = stripe_customer(state, stripe, merchant_id, account, customer).await?;
    match method.customer.as_deref() {
        Some(owner) if owner == stripe_customer => {}
        Some(_) => {
            return Err(ServiceError::invalid(
                "paymentMethod",
                "is attached to another customer at Stripe",
            ))
        }
        None => {
            attach(stripe, &method, &stripe_customer).await?;
        }
    }
    let fingerprint = stripe_fingerprint(account, &method.id, &card);
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let saved = payment_methods::insert(
        &mut tx,
        NewPaymentMethod {
            merchant_id,
            customer_id: customer.id,
            payment_method_key: ids::payment_method_key(),
            processor_token: &method.id,
            brand: &card.brand,
            bin: "",
            last4: &card.last4,
            fingerprint: &fingerprint,
            attached,
            processor_id: Some(account.processor_id),
            expiry: Some((card.exp_month, card.exp_year)),
            method_type: MethodType::Card,
        },
        now,
    )
    .await?;
    tx.commit().await?;
    tracing::info!(
        merchant_id,
        processor_id = account.processor_id,
        payment_method = %saved.payment_method_key,
        "Stripe payment method saved"
    );
    Ok(saved)
}

/// The merchant's customer `customer_key` (404 when there is none).
async fn customer(
    state: &Platform,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Customer, ServiceError> {
    customers::get(&state.store, merchant_id, customer_key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// The customer's Stripe Customer at `account`, made on first need.
pub(super) async fn stripe_customer(
    state: &Platform,
    stripe: &Connection<'_>,
    merchant_id: i64,
    account: &Account,
    customer: &Customer,
) -> Result<String, ServiceError> {
    let pool = state.store.pool();
    if let Some(known) =
        stripe_customers::get(pool, merchant_id, account.processor_id, customer.id).await?
    {
        return Ok(known);
    }
    let name = format!(
        "{} {}",
        customer.fields.first_name, customer.fields.last_name
    );
    let idempotency_key = format!(
        "recur-customer-{}-{}",
        account.processor_key, customer.customer_key
    );
    let created = stripe
        .create_customer(
            &customer.customer_key,
            &customer.fields.email,
            &name,
            &idempotency_key,
        )
        .await
        .map_err(|e| refused_on("paymentProcessorId", e))?;
    Ok(stripe_customers::remember(
        pool,
        merchant_id,
        account.processor_id,
        customer.id,
        &created.id,
    )
    .await?)
}

/// Attaches `method` to `stripe_customer` at Stripe.
async fn attach(
    stripe: &Connection<'_>,
    method: &StripeMethod,
    stripe_customer: &str,
) -> Result<(), ServiceError> {
    let idempotency_key = format!("recur-attach-{}-{stripe_customer}", method.id);
    stripe
        .attach(&method.id, stripe_customer, &idempotency_key)
        .await
        .map_err(|e| refused_on("paymentMethod", e))?;
    Ok(())
}

/// recur's fingerprint of the card Stripe holds as `method` at `account`:
/// `stripe:{processorId}:{Stripe's fingerprint}` (Stripe's is per account; the method's id when
/// Stripe gives none).
pub(super) fn stripe_fingerprint(account: &Account, method: &str, card: &Card) -> String {
    format!(
        "stripe:{}:{}",
        account.processor_id,
        card.fingerprint.as_deref().unwrap_or(method)
    )
}

/// A Stripe refusal as a 400 on `field` (a card error as a decline), no answer as a 503.
pub(super) fn refused_on(field: &str, error: StripeError) -> ServiceError {
    match error {
        StripeError::Refused(refusal) if refusal.kind == "card_error" => {
            ServiceError::PaymentDeclined {
                code: refusal
                    .decline_code
                    .or(refusal.code)
                    .unwrap_or_else(|| "card_declined".into()),
                reason: refusal.message,
            }
        }
        StripeError::Refused(refusal) => {
            ServiceError::invalid(field, format!("Stripe refused it: {}", refusal.message))
        }
        StripeError::Unanswered(why) => ServiceError::Unavailable(format!(
            "Stripe did not answer ({why}); nothing was stored, try again."
        )),
    }
}
