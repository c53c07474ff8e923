//! The calls recur makes on one connected Stripe account, with its secret key (opened from its
//! sealed form only for the calls, never logged).

use super::client::{Form, StripeApi, StripeError};
use super::objects::{Customer, PaymentMethod};

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
}
