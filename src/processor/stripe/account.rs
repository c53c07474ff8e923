//! The calls recur makes on one connected Stripe account, with its secret key (opened from its
//! sealed form only for the calls, never logged).

use super::client::{Form, StripeApi, StripeError};
use super::objects::{Charge, Customer, List, PaymentIntent, PaymentMethod, Refund, SetupIntent};

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
    /// idempotency key; its metadata names recur's refund (`refundKey`), so Stripe's webhook
    /// about it is not taken for a refund made in Stripe's dashboard.
    pub async fn refund(
        &self,
        payment_intent: &str,
        amount: i64,
        refund_key: &str,
        idempotency_key: &str,
    ) -> Result<Refund, StripeError> {
        let form: Form = vec![
            ("payment_intent".into(), payment_intent.into()),
            ("amount".into(), amount.to_string()),
            ("metadata[refundKey]".into(), refund_key.into()),
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

    /// Creates and confirms the PaymentIntent of `charge` at once: under the attempt's
    /// idempotency key, so asking again after a lost answer gets the first answer instead of a
    /// second charge. The key is in its metadata too (`attemptKey`), so Stripe's webhook about it
    /// names the attempt. Off-session (a renewal, a retry, a proration) unless the customer is on
    /// a hosted page, where Stripe may answer `requires_action` for them to authenticate.
    pub async fn confirm_charge(
        &self,
        charge: &ChargeIntent<'_>,
    ) -> Result<PaymentIntent, StripeError> {
        let mut form: Form = vec![
            ("amount".into(), charge.amount.to_string()),
            ("currency".into(), charge.currency.to_ascii_lowercase()),
            ("customer".into(), charge.customer.into()),
            ("payment_method".into(), charge.payment_method.into()),
            ("payment_method_types[]".into(), "card".into()),
            ("confirm".into(), "true".into()),
            ("metadata[invoiceKey]".into(), charge.invoice_key.into()),
            (
                "metadata[membershipKey]".into(),
                charge.membership_key.into(),
            ),
            ("metadata[attemptKey]".into(), charge.idempotency_key.into()),
        ];
        if !charge.customer_present {
            form.push(("off_session".into(), "true".into()));
        }
        self.api
            .post(
                &self.secret_key,
                "/v1/payment_intents",
                &form,
                Some(charge.idempotency_key),
            )
            .await
    }

    /// The refunds of the PaymentIntent `payment_intent`, newest first (the first hundred: a
    /// payment refunded in more parts than that is not one recur makes).
    pub async fn refunds_of(&self, payment_intent: &str) -> Result<Vec<Refund>, StripeError> {
        let query: Form = vec![
            ("payment_intent".into(), payment_intent.into()),
            ("limit".into(), "100".into()),
        ];
        let listed: List<Refund> = self
            .api
            .get(&self.secret_key, "/v1/refunds", &query)
            .await?;
        Ok(listed.data)
    }

    /// The Customer `customer`'s latest charges, newest first (at most a hundred).
    pub async fn charges_of(&self, customer: &str) -> Result<Vec<Charge>, StripeError> {
        let query: Form = vec![
            ("customer".into(), customer.into()),
            ("limit".into(), "100".into()),
        ];
        let listed: List<Charge> = self
            .api
            .get(&self.secret_key, "/v1/charges", &query)
            .await?;
        Ok(listed.data)
    }

    /// The PaymentIntent `id` as Stripe has it now.
    pub async fn payment_intent(&self, id: &str) -> Result<PaymentIntent, StripeError> {
        self.api
            .get(
                &self.secret_key,
                &format!("/v1/payment_intents/{id}"),
                &Form::new(),
            )
            .await
    }

    /// Cancels the PaymentIntent `id` (one the customer left unauthenticated), so it can no
    /// longer succeed.
    pub async fn cancel_payment_intent(&self, id: &str) -> Result<PaymentIntent, StripeError> {
        let idempotency_key = format!("recur-cancel-{id}");
        self.api
            .post(
                &self.secret_key,
                &format!("/v1/payment_intents/{id}/cancel"),
                &Form::new(),
                Some(&idempotency_key),
            )
            .await
    }

    /// Creates a SetupIntent that saves a card for off-session charges of `customer`, for a
    /// hosted page's card Element to confirm (authentication included).
    pub async fn create_setup_intent(
        &self,
        customer: &str,
        idempotency_key: &str,
    ) -> Result<SetupIntent, StripeError> {
        let form: Form = vec![
            ("customer".into(), customer.into()),
            ("usage".into(), "off_session".into()),
            ("payment_method_types[]".into(), "card".into()),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/setup_intents",
                &form,
                Some(idempotency_key),
            )
            .await
    }

    /// Creates a SetupIntent for one payment of a payer who is no customer of recur (the
    /// cashier's), for the card Element to confirm; `cashier_session` in its metadata binds it
    /// to the session that asked for it.
    pub async fn create_one_time_setup_intent(
        &self,
        cashier_session: &str,
        idempotency_key: &str,
    ) -> Result<SetupIntent, StripeError> {
        let form: Form = vec![
            ("usage".into(), "on_session".into()),
            ("payment_method_types[]".into(), "card".into()),
            ("metadata[cashierSession]".into(), cashier_session.into()),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/setup_intents",
                &form,
                Some(idempotency_key),
            )
            .await
    }

    /// Creates, without confirming it, the on-session PaymentIntent of a cashier payment: under
    /// its idempotency key, which its metadata carries too (`cashierKey`) with the order. Nothing
    /// moves until [`Connection::confirm_payment_intent`]; its id is known before then, so a
    /// lost answer to the confirmation is read back from the PaymentIntent.
    pub async fn create_payment_intent(
        &self,
        payment: &CashierIntent<'_>,
    ) -> Result<PaymentIntent, StripeError> {
        let form: Form = vec![
            ("amount".into(), payment.amount.to_string()),
            ("currency".into(), payment.currency.to_ascii_lowercase()),
            ("payment_method".into(), payment.payment_method.into()),
            ("payment_method_types[]".into(), "card".into()),
            ("metadata[orderId]".into(), payment.order_id.into()),
            (
                "metadata[cashierKey]".into(),
                payment.idempotency_key.into(),
            ),
        ];
        self.api
            .post(
                &self.secret_key,
                "/v1/payment_intents",
                &form,
                Some(payment.idempotency_key),
            )
            .await
    }

    /// Confirms the PaymentIntent `id` with the customer present: Stripe charges the card, or
    /// asks for authentication (`requires_action`).
    pub async fn confirm_payment_intent(&self, id: &str) -> Result<PaymentIntent, StripeError> {
        let idempotency_key = format!("recur-confirm-{id}");
        self.api
            .post(
                &self.secret_key,
                &format!("/v1/payment_intents/{id}/confirm"),
                &Form::new(),
                Some(&idempotency_key),
            )
            .await
    }

    /// The SetupIntent `id` as Stripe has it now.
    pub async fn setup_intent(&self, id: &str) -> Result<SetupIntent, StripeError> {
        self.api
            .get(
                &self.secret_key,
                &format!("/v1/setup_intents/{id}"),
                &Form::new(),
            )
            .await
    }
}

/// A charge of a saved card.
#[derive(Debug, Clone, Copy)]
pub struct ChargeIntent<'a> {
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
    /// The customer is on a hosted page and can authenticate (not `off_session`).
    pub customer_present: bool,
}

/// A cashier payment, by a payer who is no customer of recur, with the card a one-time
/// SetupIntent saved.
#[derive(Debug, Clone, Copy)]
pub struct CashierIntent<'a> {
    /// The payment's key: Stripe's `Idempotency-Key`.
    pub idempotency_key: &'a str,
    /// Amount in minor units.
    pub amount: i64,
    /// ISO 4217 code (sent lowercase).
    pub currency: &'a str,
    /// The card (`pm_…`).
    pub payment_method: &'a str,
    /// The merchant's order id, for the merchant reading Stripe's dashboard.
    pub order_id: &'a str,
}
