//! The merchant's side of cashier orders, authenticated by `X-Merchant-Secret` or a write API
//! key: `POST /api/payment/refund`, `POST /api/payment/payout` and
//! `POST /api/webhook-resync?merchantOrderId=…`, over [`crate::services::cashier::orders`].

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::JsonBody;
use super::merchant_secret::SecretMerchant;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::cashier::orders::{self, PayoutInput, RefundInput};
use crate::state::AppState;
use crate::store::cashier_transactions::CashierTransaction;

/// Body of a refund.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundRequest {
    /// The order whose successful payment is refunded.
    #[serde(default)]
    #[schema(required = true, value_type = String)]
    pub order_id: Field<String>,
    /// Amount to refund in the payment's currency (number or decimal string); everything left
    /// when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "10.00", pattern = r"^[0-9]+(\.[0-9]+)?$")]
    pub amount: Field<Decimal>,
}

/// Body of a payout.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayoutRequest {
    /// The order whose card receives the money (its latest successful card payment or payout).
    #[serde(default)]
    #[schema(required = true, value_type = String)]
    pub order_id: Field<String>,
    /// Amount in the order's currency (number or decimal string).
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "25.00", pattern = r"^[0-9]+(\.[0-9]+)?$")]
    pub amount: Field<Decimal>,
}

/// A recorded cashier transaction.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionResponse {
    /// `TransactionId` of the notifications.
    pub transaction_id: i64,
    /// The merchant's order id.
    pub order_id: String,
    /// `PayIn`, `PayOut` or `Refund`.
    pub transaction_type: String,
    /// `Success`, `Rejected` or `Failed`.
    pub transaction_status: String,
    /// Amount, decimal string in the currency's minor unit.
    pub amount: String,
    /// ISO 4217.
    pub currency: String,
    /// The processor of the final attempt.
    pub payment_processor_id: i64,
    /// The processor's reference.
    pub external_transaction_id: Option<String>,
    /// Decline code, when not successful.
    pub decline_reason_code: Option<String>,
    /// Decline text, when not successful.
    pub decline_reason_text: Option<String>,
    /// The refunded payment, the retried transaction or the payout's source.
    pub parent_transaction_id: Option<i64>,
    /// When it was recorded (UTC).
    pub created_at: String,
}

impl TransactionResponse {
    fn of(t: &CashierTransaction) -> Result<Self, ApiError> {
        let currency = Currency::parse(&t.currency).map_err(anyhow::Error::from)?;
        Ok(Self {
            transaction_id: t.id,
            order_id: t.order_id.clone(),
            transaction_type: t.kind.as_str().into(),
            transaction_status: t.status.as_str().into(),
            amount: format_amount(t.amount, currency),
            currency: t.currency.clone(),
            payment_processor_id: t.processor_id,
            external_transaction_id: t.external_id.clone(),
            decline_reason_code: t.decline_code.clone(),
            decline_reason_text: t.decline_reason.clone(),
            parent_transaction_id: t.parent_id,
            created_at: format_utc(t.created_at),
        })
    }
}

/// Refunds all or part of an order's successful payment through the processor that took it.
/// The refund is notified with `TransactionType: Refund`; a refund the processor declines is
/// recorded and notified as `Rejected` (201 either way).
#[utoipa::path(
    post,
    path = "/api/payment/refund",
    tag = "cashier",
    request_body = RefundRequest,
    params(("X-Merchant-Secret" = Option<String>, Header, description = "The merchant secret; or else send a write API key as `Authorization: Bearer rk_…`")),
    responses(
        (status = 201, description = "Refund recorded", body = TransactionResponse),
        (status = 400, description = "Unknown order, nothing paid, or an amount over what is left", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or unknown X-Merchant-Secret and API key", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Already fully refunded", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn refund(
    State(state): State<AppState>,
    SecretMerchant { merchant_id, .. }: SecretMerchant,
    JsonBody(body): JsonBody<RefundRequest>,
) -> Result<(StatusCode, Json<TransactionResponse>), ApiError> {
    let input = RefundInput {
        order_id: body.order_id,
        amount: body.amount,
    };
    let t = orders::refund(&state, merchant_id, input).await?;
    Ok((StatusCode::CREATED, Json(TransactionResponse::of(&t)?)))
}

/// Sends money to the card that paid (or received) an order. Notified with
/// `TransactionType: PayOut`; declined payouts are recorded as `Rejected` (201 either way).
#[utoipa::path(
    post,
    path = "/api/payment/payout",
    tag = "cashier",
    request_body = PayoutRequest,
    params(("X-Merchant-Secret" = Option<String>, Header, description = "The merchant secret; or else send a write API key as `Authorization: Bearer rk_…`")),
    responses(
        (status = 201, description = "Payout recorded", body = TransactionResponse),
        (status = 400, description = "Unknown order, no card, or a bad amount", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or unknown X-Merchant-Secret and API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn payout(
    State(state): State<AppState>,
    SecretMerchant { merchant_id, .. }: SecretMerchant,
    JsonBody(body): JsonBody<PayoutRequest>,
) -> Result<(StatusCode, Json<TransactionResponse>), ApiError> {
    let input = PayoutInput {
        order_id: body.order_id,
        amount: body.amount,
    };
    let t = orders::payout(&state, merchant_id, input).await?;
    Ok((StatusCode::CREATED, Json(TransactionResponse::of(&t)?)))
}

/// Query of the re-sync call.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ResyncQuery {
    /// The order whose latest notification is sent again.
    pub merchant_order_id: Option<String>,
}

/// Answer of the re-sync call.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResyncResponse {
    /// Whether a notification was scheduled.
    pub is_success: bool,
    /// Why not, when it was not.
    pub error_message: Option<String>,
}

/// Sends the order's latest `TRANSACTION_DATA_UPDATE` again (a new round of delivery attempts,
/// same `ActionId`).
#[utoipa::path(
    post,
    path = "/api/webhook-resync",
    tag = "cashier",
    params(
        ResyncQuery,
        ("X-Merchant-Secret" = Option<String>, Header, description = "The merchant secret; or else send a write API key as `Authorization: Bearer rk_…`"),
    ),
    responses(
        (status = 200, description = "Whether a notification was scheduled", body = ResyncResponse),
        (status = 400, description = "A malformed query: a parameter given twice, or holding U+0000", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or unknown X-Merchant-Secret and API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn resync(
    State(state): State<AppState>,
    SecretMerchant { merchant_id, .. }: SecretMerchant,
    Query(query): Query<ResyncQuery>,
) -> Result<Json<ResyncResponse>, ApiError> {
    let sent = orders::resync(&state, merchant_id, query.merchant_order_id.as_deref()).await?;
    Ok(Json(ResyncResponse {
        is_success: sent.is_ok(),
        error_message: sent.err().map(Into::into),
    }))
}
