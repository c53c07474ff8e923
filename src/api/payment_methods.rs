//! A customer's payment method (DESIGN §17): `POST /customer/{customerKey}/payment-method`
//! attaches a card the merchant collected with its own Stripe.js (`pm_…`) through its connected
//! Stripe account; `GET` shows the customer's current method. The operations are
//! [`crate::services::payment_methods`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::payment_methods::{self, StripeMethodInput};
use crate::state::AppState;
use crate::store::payment_methods::PaymentMethod;

/// Body of a payment method's attachment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachPaymentMethodRequest {
    /// The merchant's connected Stripe account that holds the PaymentMethod.
    #[serde(default)]
    #[schema(required = true, value_type = i64, example = 301)]
    pub payment_processor_id: Field<i64>,
    /// The PaymentMethod's id at Stripe, as the merchant's Stripe.js created it.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "pm_1Q0PsIJvEtkwdCNYMSaVuRz6")]
    pub payment_method: Field<String>,
}

/// A customer's payment method: never a card number.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerPaymentMethod {
    /// recur's id of it, `pm_` + 24 base62 characters.
    pub payment_method_id: String,
    /// `card`.
    #[serde(rename = "type")]
    #[schema(example = "card")]
    pub kind: String,
    /// Card network as the processor names it (`visa`, `Visa`, …).
    pub brand: String,
    /// Last four digits.
    pub last4: String,
    /// Expiry month; `null` when the processor did not tell it (sandbox cards).
    pub exp_month: Option<i64>,
    /// Expiry year; `null` when the processor did not tell it.
    pub exp_year: Option<i64>,
    /// The connected processor that holds it; `null` for the sandbox vault.
    pub payment_processor_id: Option<i64>,
}

impl From<PaymentMethod> for CustomerPaymentMethod {
    fn from(method: PaymentMethod) -> Self {
        Self {
            payment_method_id: method.payment_method_key,
            kind: "card".into(),
            brand: method.brand,
            last4: method.last4,
            exp_month: method.expiry.map(|(month, _)| month),
            exp_year: method.expiry.map(|(_, year)| year),
            payment_processor_id: method.processor_id,
        }
    }
}

/// Attaches a card the merchant collected with Stripe.js to the customer, through its
/// connected Stripe account; it becomes the customer's method for renewals and proration.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/customer/{customerKey}/payment-method",
    tag = "customers",
    params(("customerKey" = String, Path, description = "The customer's key (cstmr_…)")),
    request_body = AttachPaymentMethodRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Attached; now the customer's payment method", body = CustomerPaymentMethod),
        (status = 400, description = "Validation failed: every failing field is listed (not a Stripe account of the merchant; not a pm_ id; unknown to that account; not a card; another customer's)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 402, description = "Stripe declined the card while attaching it", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot attach payment methods", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such customer for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Stripe did not answer; nothing was stored", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn attach_payment_method(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(customer_key): Path<String>,
    JsonBody(body): JsonBody<AttachPaymentMethodRequest>,
) -> Result<(StatusCode, Json<CustomerPaymentMethod>), ApiError> {
    let input = StripeMethodInput {
        payment_processor_id: body.payment_processor_id,
        payment_method: body.payment_method,
    };
    let method =
        payment_methods::attach_stripe(&state, auth.merchant_id, &customer_key, input).await?;
    Ok((StatusCode::CREATED, Json(method.into())))
}

/// The customer's current payment method.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/customer/{customerKey}/payment-method",
    tag = "customers",
    params(("customerKey" = String, Path, description = "The customer's key (cstmr_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The payment method renewals charge", body = CustomerPaymentMethod),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such customer for this merchant, or it has no payment method", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_payment_method(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(customer_key): Path<String>,
) -> Result<Json<CustomerPaymentMethod>, ApiError> {
    let method = payment_methods::current(&state, auth.merchant_id, &customer_key)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(method.into()))
}
