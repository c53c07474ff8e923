//! The calls recur makes on one connected Stripe account, with its secret key (opened from its
//! sealed form only for the calls, never logged).

use super::client::{Form, StripeApi, StripeError};
use super::objects::{Customer, PaymentIntent, PaymentMethod, Refund};

/// A connected account's secret key with the client it is used through.
pub struct Connection<'a> {
    api: &'a StripeApi,
    secret_key: String,
}

impl std::fmt::Debug for Connection<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl<'a> Connection<'a> {
    /// Calls through `api` with `secret_key`.
    pub fn new(api: &'a StripeApi, secret_key: String) -> Self {
        Self { api, secret_key }
    }

    /// The PaymentMethod `id` (`pm_…`, already checked to be one).
    pub async fn payment_method(&self, id: &str) -> Result<PaymentMethod, StripeError> {
        self.api
            .get(
                &self.secret_key,
                &format!("/v1/payment_methods/{id}"),
                &Form::new(),
            )
            .await
    }

    /// Creates the Customer of recur's customer `customer_key`. `idempotency_key` names the
    /// pair of account and customer, so a lost answer asked again never makes a second one.
    pub async fn create_customer(
        &self,
        customer_key: &str,
        email: &str,
        name: &str,
        idempotency_key: &str,
    ) -> Result<Customer, StripeError> {
        let form: Form = vec![
            ("email".into(), email.into()),
            ("name".into(), name.into()),
            ("metadata[customerKey]".into(), customer_key.into()),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/customers",
                &form,
                Some(idempotency_key),
            )
            .await
    }

    /// Attaches the PaymentMethod `id` to the Customer `customer`.
    pub async fn attach(
        &self,
        id: &str,
        customer: &str,
        idempotency_key: &str,
    ) -> Result<PaymentMethod, StripeError> {
        let form: Form = vec![("customer".into(), customer.into())];
        self.api
            .post(
                &self.secret_key,
                &format!("/v1/payment_methods/{id}/attach"),
                &form,
                Some(idempotency_key),
            )
            .await
    }

    /// Refunds `amount` (minor units) of the PaymentIntent `payment_intent`, under the refund's
    /// idempotency key.
    pub async fn refund(
        &self,
        payment_intent: &str,
        amount: i64,
        idempotency_key: &str,
    ) -> Result<Refund, StripeError> {
        let form: Form = vec![
            ("payment_intent".into(), payment_intent.into()),
            ("amount".into(), amount.to_string()),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/refunds",
                &form,
                Some(idempotency_key),
            )
            .await
    }

    /// Confirms an off-session PaymentIntent of `charge` at once (a renewal, a retry, a
    /// proration): under the attempt's idempotency key, so asking again after a lost answer
    /// gets the first answer instead of a second charge. The key is in its metadata too
    /// (`attemptKey`), so Stripe's webhook about it names the attempt.
    pub async fn charge_off_session(
        &self,
        charge: &OffSession<'_>,
    ) -> Result<PaymentIntent, StripeError> {
        let form: Form = vec![
            ("amount".into(), charge.amount.to_string()),
            ("currency".into(), charge.currency.to_ascii_lowercase()),
            ("customer".into(), charge.customer.into()),
            ("payment_method".into(), charge.payment_method.into()),
            ("off_session".into(), "true".into()),
            ("confirm".into(), "true".into()),
            ("metadata[invoiceKey]".into(), charge.invoice_key.into()),
            (
                "metadata[membershipKey]".into(),
                charge.membership_key.into(),
            ),
            ("metadata[attemptKey]".into(), charge.idempotency_key.into()),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/payment_intents",
                &form,
                Some(charge.idempotency_key),
            )
            .await
    }
}

/// An off-session charge of a saved card.
#[derive(Debug, Clone, Copy)]
pub struct OffSession<'a> {
    /// The attempt's key: Stripe's `Idempotency-Key`.
    pub idempotency_key: &'a str,
    /// Amount in minor units, as Stripe counts them.
    pub amount: i64,
    /// ISO 4217 code (sent lowercase).
    pub currency: &'a str,
    /// The customer's Stripe Customer (`cus_…`).
    pub customer: &'a str,
    /// The saved card (`pm_…`).
    pub payment_method: &'a str,
    /// The invoice paid, for the merchant reading Stripe's dashboard.
    pub invoice_key: &'a str,
    /// The membership billed.
    pub membership_key: &'a str,
}
