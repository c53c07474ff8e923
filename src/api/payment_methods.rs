//! A customer's payment method (DESIGN §17, §18): `POST /customer/{customerKey}/payment-method`
//! attaches a card the merchant collected with its own Stripe.js (`pm_…`) through its connected
//! Stripe account, or records a SEPA Direct Debit mandate; `GET` shows the customer's current
//! method. The operations are
//! [`crate::services::payment_methods`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::payment_methods::{self, AttachInput, Saved, StripeMethodInput};
use crate::services::sepa::mandates::MandateInput;
use crate::state::AppState;
use recur_domain::time::format_utc;

/// Body of a payment method's attachment: a card (`paymentMethod`) or a SEPA mandate
/// (`type: sepa_debit`, `iban`, `accountHolder`, …).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachPaymentMethodRequest {
    /// `card` (the default) or `sepa_debit`.
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<String>, example = "card")]
    pub kind: Field<String>,
    /// The merchant's processor: the Stripe account that holds the card, or the SEPA processor
    /// the mandate is signed for.
    #[serde(default)]
    #[schema(required = true, value_type = i64, example = 301)]
    pub payment_processor_id: Field<i64>,
    /// A card: the PaymentMethod's id at Stripe, as the merchant's Stripe.js created it.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "pm_1Q0PsIJvEtkwdCNYMSaVuRz6")]
    pub payment_method: Field<String>,
    /// A mandate: the debtor's IBAN (country length and mod 97 checked); stored sealed.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "DE89370400440532013000")]
    pub iban: Field<String>,
    /// A mandate: the account holder (≤ 70 characters).
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 70)]
    pub account_holder: Field<String>,
    /// A mandate: the debtor bank's BIC.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub bic: Field<String>,
    /// A mandate: its reference (≤ 35 characters of the SEPA set, unique per merchant); made
    /// when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 35)]
    pub mandate_reference: Field<String>,
    /// A mandate: when it was signed (ISO 8601, not in the future); now when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub signed_at: Field<String>,
}

/// A customer's payment method: never a card number, never a whole IBAN.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerPaymentMethod {
    /// recur's id of it, `pm_` + 24 base62 characters.
    pub payment_method_id: String,
    /// `card` or `sepa_debit`.
    #[serde(rename = "type")]
    #[schema(example = "card")]
    pub kind: String,
    /// The connected processor that holds it; `null` for the sandbox vault.
    pub payment_processor_id: Option<i64>,
    /// A card: its network as the processor names it (`visa`, `Visa`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    /// A card: its last four digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last4: Option<String>,
    /// A card: its expiry month; `null` when the processor did not tell it (sandbox cards).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    pub exp_month: Option<Option<i64>>,
    /// A card: its expiry year; `null` when the processor did not tell it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    pub exp_year: Option<Option<i64>>,
    /// A mandate: the debited account's last four characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iban_last4: Option<String>,
    /// A mandate: its reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mandate_reference: Option<String>,
    /// A mandate: the account holder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_holder: Option<String>,
    /// A mandate: when it was signed (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<String>,
    /// A mandate: when it was revoked (UTC); `null` while it is in force.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub revoked_at: Option<Option<String>>,
}

impl From<Saved> for CustomerPaymentMethod {
    fn from(saved: Saved) -> Self {
        let Saved { method, mandate } = saved;
        let card = mandate.is_none();
        Self {
            payment_method_id: method.payment_method_key,
            kind: method.method_type.as_str().into(),
            payment_processor_id: method.processor_id,
            brand: card.then(|| method.brand.clone()),
            exp_month: card.then(|| method.expiry.map(|(month, _)| month)),
            exp_year: card.then(|| method.expiry.map(|(_, year)| year)),
            iban_last4: (!card).then(|| method.last4.clone()),
            last4: card.then_some(method.last4),
            mandate_reference: mandate.as_ref().map(|m| m.mandate_reference.clone()),
            account_holder: mandate.as_ref().map(|m| m.account_holder.clone()),
            signed_at: mandate.as_ref().map(|m| format_utc(m.signed_at)),
            revoked_at: mandate.as_ref().map(|m| m.revoked_at.map(format_utc)),
        }
    }
}

/// Attaches a card the merchant collected with Stripe.js to the customer, through its
/// connected Stripe account, or records a SEPA Direct Debit mandate the customer signed; it
/// becomes the customer's method for renewals and proration.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/customer/{customerKey}/payment-method",
    tag = "customers",
    params(("customerKey" = String, Path, description = "The customer's key (cstmr_…)")),
    request_body = AttachPaymentMethodRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Attached; now the customer's payment method", body = CustomerPaymentMethod),
        (status = 400, description = "Validation failed: every failing field is listed (not a Stripe account or SEPA processor of the merchant; not a pm_ id; unknown to that account; not a card; another customer's; a bad IBAN, BIC or account holder; a mandate reference outside the SEPA set or used already; a signature date in the future)", body = Problem, content_type = "application/problem+json"),
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
    let sepa = matches!(&body.kind, Field::Present(kind) if kind == "sepa_debit");
    let (stripe_processor, sepa_processor) = if sepa {
        (Field::Absent, body.payment_processor_id)
    } else {
        (body.payment_processor_id, Field::Absent)
    };
    let input = AttachInput {
        kind: body.kind,
        stripe: StripeMethodInput {
            payment_processor_id: stripe_processor,
            payment_method: body.payment_method,
        },
        mandate: MandateInput {
            payment_processor_id: sepa_processor,
            iban: body.iban,
            account_holder: body.account_holder,
            bic: body.bic,
            mandate_reference: body.mandate_reference,
            signed_at: body.signed_at,
        },
    };
    let saved =
        payment_methods::attach_method(&state, auth.merchant_id, &customer_key, input).await?;
    Ok((StatusCode::CREATED, Json(saved.into())))
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
