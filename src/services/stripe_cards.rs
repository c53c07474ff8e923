//! Cards collected on recur's hosted pages with Stripe's card Element (DESIGN §17), for a
//! merchant whose default card processor is a connected Stripe account: the page gets a
//! SetupIntent for the customer's Stripe Customer ([`setup`]), Stripe.js confirms it in the
//! browser (3-D Secure included) and the page posts back only the SetupIntent's id. recur then
//! reads the SetupIntent from Stripe ([`collected`]) and saves the card it holds; what the
//! browser says about the outcome is never trusted. Card numbers never reach recur.

use recur_domain::stripe_keys;

use super::payment_methods::{refused_on, save_card, stripe_customer};
use super::ServiceError;
use crate::ids;
use crate::platform::Platform;
use crate::processor::stripe::objects::{ClientSecret, SetupIntent};
use crate::processor::stripe::{Connection, StripeError};
use crate::store::customers::Customer;
use crate::store::payment_methods::PaymentMethod;
use crate::store::stripe_accounts::{self, Account};

/// What a hosted page's card Element needs.
#[derive(Debug, Clone)]
pub struct CardSetup {
    /// The connected account's publishable key (`pk_…`), for Stripe.js.
    pub publishable_key: String,
    /// The SetupIntent's client secret, for Stripe.js to confirm it with the card.
    pub client_secret: ClientSecret,
}

/// The merchant's default card processor when it is a connected Stripe account.
pub(super) async fn default_account(
    state: &Platform,
    merchant_id: i64,
) -> Result<Option<Account>, ServiceError> {
    let pool = state.store.pool();
    let Some(processor_id) = stripe_accounts::default_card(pool, merchant_id).await? else {
        return Ok(None);
    };
    Ok(stripe_accounts::get(pool, merchant_id, processor_id).await?)
}

/// A new SetupIntent for `customer` at the merchant's default Stripe account (its Customer
/// made on first need), under an idempotency key of its own; `None` when the merchant's
/// default card processor is not a Stripe account. Stripe out of reach is a 503.
pub async fn setup(
    state: &Platform,
    merchant_id: i64,
    customer: &Customer,
) -> Result<Option<CardSetup>, ServiceError> {
    let Some(account) = default_account(state, merchant_id).await? else {
        return Ok(None);
    };
    let stripe = Connection::new(&state.stripe, state.keys.open(&account.secret_key_sealed)?);
    let stripe_customer = stripe_customer(state, &stripe, merchant_id, &account, customer).await?;
    let idempotency_key = ids::prefixed("recur-setup-", 24);
    let intent = stripe
        .create_setup_intent(&stripe_customer, &idempotency_key)
        .await;
    card_setup(&account, intent).map(Some)
}

/// What a card Element needs of the SetupIntent Stripe made (or why there is none) at
/// `account`: a refusal is a 400 on `setupIntent`, no answer a 503.
pub(super) fn card_setup(
    account: &Account,
    made: Result<SetupIntent, StripeError>,
) -> Result<CardSetup, ServiceError> {
    let intent = made.map_err(|e| refused_on("setupIntent", e))?;
    let client_secret = intent.client_secret.ok_or_else(|| {
        ServiceError::Unavailable("Stripe answered a SetupIntent without its client secret".into())
    })?;
    Ok(CardSetup {
        publishable_key: account.publishable_key.clone(),
        client_secret,
    })
}

/// The card the customer saved with the SetupIntent `setup_intent` (its id as the page posted
/// it), read from the merchant's default Stripe account and saved for `customer`
/// (`attached`: as [`save_card`] takes it). A SetupIntent that is not one, is another
/// customer's or has not succeeded is refused (400 on `setupIntent`); nothing is stored then.
pub async fn collected(
    state: &Platform,
    merchant_id: i64,
    customer: &Customer,
    setup_intent: &str,
    attached: bool,
) -> Result<PaymentMethod, ServiceError> {
    let id = stripe_keys::object_id(setup_intent, "seti_")
        .map_err(|why| ServiceError::invalid("setupIntent", why))?;
    let Some(account) = default_account(state, merchant_id).await? else {
        return Err(ServiceError::invalid(
            "setupIntent",
            "the merchant no longer collects cards with Stripe",
        ));
    };
    let stripe = Connection::new(&state.stripe, state.keys.open(&account.secret_key_sealed)?);
    let intent = stripe
        .setup_intent(&id)
        .await
        .map_err(|e| refused_on("setupIntent", e))?;
    let owner = stripe_customer(state, &stripe, merchant_id, &account, customer).await?;
    if intent.customer.as_deref() != Some(owner.as_str()) {
        return Err(ServiceError::invalid(
            "setupIntent",
            "is not this customer's",
        ));
    }
    let method = saved_card(intent)?;
    save_card(
        state,
        &stripe,
        merchant_id,
        &account,
        customer,
        &method,
        attached,
    )
    .await
}

/// The card (`pm_…`) a SetupIntent saved; one that has not succeeded is a decline
/// (`setup_intent_incomplete`, 402).
pub(super) fn saved_card(intent: SetupIntent) -> Result<String, ServiceError> {
    match (intent.status.as_str(), intent.payment_method) {
        ("succeeded", Some(method)) => Ok(method),
        (status, _) => Err(ServiceError::PaymentDeclined {
            code: "setup_intent_incomplete".into(),
            reason: format!("The card was not saved (the SetupIntent is {status})."),
        }),
    }
}
