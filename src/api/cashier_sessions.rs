//! `POST /api/payment/hosted-page`: a merchant opens a cashier session for one order, over
//! [`crate::services::cashier::sessions`].
//!
//! Authenticated by `X-Merchant-Secret` or a write API key (401 when missing or unknown) and by
//! the body's `signature` = SHA-256 hex of `email;timestamp;secret`, with `timestamp` within ±15
//! minutes of the server's time (400 otherwise, like every other field). The signature is made
//! with the merchant secret whichever credential the request carries.

use axum::extract::State;
use axum::Json;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::JsonBody;
use super::field_schemas::{CountryCode, CurrencyCode, HttpsUrl, WebUrl};
use super::merchant_secret::SecretMerchant;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::cashier::sessions::{self, BillingDetailsInput, NewSession};
use crate::state::AppState;

/// Body of the session request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostedPageRequest {
    /// Unix epoch seconds, as a string (a JSON integer is accepted too).
    #[serde(default)]
    #[schema(required = true, pattern = "^[0-9]{1,12}$", value_type = String, example = "1795430400")]
    pub timestamp: Field<serde_json::Value>,
    /// Hex SHA-256 (lowercase; compared in any case) of `<billingDetails.email>;<timestamp>;<merchant secret>`.
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^[0-9A-Fa-f]{64}$")]
    pub signature: Field<String>,
    /// Absolute HTTPS URL receiving the transaction notifications; not an internal IP literal.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub webhook_url: Field<String>,
    /// Where the customer goes after a successful payment.
    #[serde(default)]
    #[schema(value_type = Option<WebUrl>)]
    pub success_redirect_url: Field<String>,
    /// Where the customer goes after a failed payment.
    #[serde(default)]
    #[schema(value_type = Option<WebUrl>)]
    pub failed_redirect_url: Field<String>,
    /// The payer and the currency.
    #[serde(default)]
    #[schema(required = true, value_type = BillingDetails)]
    pub billing_details: Field<BillingDetails>,
    /// The merchant's order id, 1–255 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 255)]
    pub order_id: Field<String>,
    /// Processor ids hidden in the cashier.
    #[serde(default)]
    #[schema(value_type = Option<Vec<i64>>)]
    pub disabled_psp_ids: Field<Vec<i64>>,
    /// Only card processors.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub credit_card_only: Field<bool>,
    /// Shown in the cashier; at most 1024 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1024)]
    pub cashier_description: Field<String>,
    /// Payout mode: the customer receives money.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_pay_out: Field<bool>,
}

/// `billingDetails` of the session request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillingDetails {
    /// Fixed amount, > 0 with at most the currency's decimals and at most 15 digits in minor
    /// units; absent lets the customer choose.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "49.90", pattern = r"^[0-9]+(\.[0-9]+)?$")]
    pub locked_amount: Field<Decimal>,
    /// First name, or full name when no last name is given; 1–100 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100)]
    pub first_name: Field<String>,
    /// Last name, 1–100 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100)]
    pub last_name: Field<String>,
    /// E-mail, `name@domain.tld`.
    #[serde(default)]
    #[schema(required = true, value_type = String, format = Email)]
    pub email: Field<String>,
    /// Street.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub street: Field<String>,
    /// Region.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub region: Field<String>,
    /// City.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub city: Field<String>,
    /// Country of the payer.
    #[serde(default)]
    #[schema(required = true, value_type = CountryCode)]
    pub country: Field<String>,
    /// Postal code.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub zip_code: Field<String>,
    /// E.164 phone.
    #[serde(default)]
    #[schema(required = true, pattern = r"^\+[1-9][0-9]{7,14}$", value_type = String)]
    pub phone: Field<String>,
    /// `YYYY-MM-dd`, from 1900-01-01 to today.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub date_of_birth: Field<String>,
    /// `Male` or `Female`, any letter case.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Mm][Aa][Ll][Ee]|[Ff][Ee][Mm][Aa][Ll][Ee])$")]
    pub gender: Field<String>,
    /// Currency of the order.
    #[serde(default)]
    #[schema(required = true, value_type = CurrencyCode)]
    pub currency: Field<String>,
}

/// The session's address.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostedPageResponse {
    /// `{cashier}/cashier?sessionToken=hp-…&m_orderId=…`; append `&m_fixed_pp_id=N` to show one
    /// processor only.
    pub redirect_url: String,
}

/// Opens a cashier session for an order. A repeated `orderId` whose session is still open returns
/// that session's address again when every value is the same, and is a 409 (on `orderId`) when
/// any differs; after it expired, a new session is opened; an order that was paid (or paid out)
/// is final and refused.
#[utoipa::path(
    post,
    path = "/api/payment/hosted-page",
    tag = "cashier",
    request_body = HostedPageRequest,
    params(("X-Merchant-Secret" = Option<String>, Header, description = "The merchant secret; or else send a write API key as `Authorization: Bearer rk_…` (the signature is still made with the merchant secret)")),
    responses(
        (status = 200, description = "Session opened", body = HostedPageResponse),
        (status = 400, description = "Validation, signature or timestamp failed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or unknown X-Merchant-Secret and API key", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The order has an open session with other values: errors.orderId names them", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_session(
    State(state): State<AppState>,
    merchant: SecretMerchant,
    JsonBody(body): JsonBody<HostedPageRequest>,
) -> Result<Json<HostedPageResponse>, ApiError> {
    let secret = merchant.merchant_secret(&state).await?;
    let redirect_url =
        sessions::open_session(&state, merchant.merchant_id, &secret, body.into()).await?;
    Ok(Json(HostedPageResponse { redirect_url }))
}

impl From<HostedPageRequest> for NewSession {
    fn from(body: HostedPageRequest) -> Self {
        NewSession {
            timestamp: body.timestamp,
            signature: body.signature,
            webhook_url: body.webhook_url,
            success_redirect_url: body.success_redirect_url,
            failed_redirect_url: body.failed_redirect_url,
            billing_details: body.billing_details.map(Into::into),
            order_id: body.order_id,
            disabled_psp_ids: body.disabled_psp_ids,
            credit_card_only: body.credit_card_only,
            cashier_description: body.cashier_description,
            is_pay_out: body.is_pay_out,
        }
    }
}

impl From<BillingDetails> for BillingDetailsInput {
    fn from(details: BillingDetails) -> Self {
        BillingDetailsInput {
            locked_amount: details.locked_amount,
            first_name: details.first_name,
            last_name: details.last_name,
            email: details.email,
            street: details.street,
            region: details.region,
            city: details.city,
            country: details.country,
            zip_code: details.zip_code,
            phone: details.phone,
            date_of_birth: details.date_of_birth,
            gender: details.gender,
            currency: details.currency,
        }
    }
}
