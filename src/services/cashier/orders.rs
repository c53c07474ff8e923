//! What the merchant (the API) and the operator (the command line) do with a cashier order
//! after the customer paid: refund it, pay money out to its card, have its latest notification
//! sent again, retry a rejected one as the provider. Each is one operation of the cashier engine,
//! which commits the transaction row and its notification together.

use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use crate::cashier::orders;
use crate::http::input::Field;
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::cashier_transactions::CashierTransaction;

/// A refund as the merchant asks for it.
#[derive(Debug, Default)]
pub struct RefundInput {
    /// The order whose successful payment is refunded.
    pub order_id: Field<String>,
    /// Amount to refund in the payment's currency; everything left when absent.
    pub amount: Field<Decimal>,
}

/// A payout as the merchant asks for it.
#[derive(Debug, Default)]
pub struct PayoutInput {
    /// The order whose card receives the money (its latest successful card payment or payout).
    pub order_id: Field<String>,
    /// Amount in the order's currency.
    pub amount: Field<Decimal>,
}

/// Refunds all or part of the order's successful payment through the processor that took it
/// (`TransactionType: Refund`); a refund the processor declines is recorded and notified as
/// `Rejected`. Unknown order, nothing paid or an amount over what is left: a field's refusal;
/// already fully refunded: a conflict.
pub async fn refund(
    state: &AppState,
    merchant_id: i64,
    input: RefundInput,
) -> Result<CashierTransaction, ServiceError> {
    let mut errors = FieldErrors::new();
    let order_id = input.order_id.required("orderId", &mut errors);
    let amount = input.amount.optional("amount", &mut errors);
    let (Some(order_id), true) = (order_id, errors.is_empty()) else {
        return Err(ServiceError::Validation(errors));
    };
    Ok(orders::refund(state, merchant_id, &order_id, amount).await?)
}

/// Sends money to the card that paid (or received) the order (`TransactionType: PayOut`); a
/// declined payout is recorded as `Rejected`.
pub async fn payout(
    state: &AppState,
    merchant_id: i64,
    input: PayoutInput,
) -> Result<CashierTransaction, ServiceError> {
    let mut errors = FieldErrors::new();
    let order_id = input.order_id.required("orderId", &mut errors);
    let amount = input.amount.required("amount", &mut errors);
    let (Some(order_id), Some(amount), true) = (order_id, amount, errors.is_empty()) else {
        return Err(ServiceError::Validation(errors));
    };
    Ok(orders::payout(state, merchant_id, &order_id, amount).await?)
}

/// Schedules the order's latest `TRANSACTION_DATA_UPDATE` for delivery again (a new round of
/// attempts, same `ActionId`): `Ok(Err(why))` when nothing was scheduled, because no order id
/// was given (`None` or empty) or the order has no notification.
pub async fn resync(
    state: &AppState,
    merchant_id: i64,
    order_id: Option<&str>,
) -> Result<Result<(), &'static str>, ServiceError> {
    let Some(order_id) = order_id.filter(|id| !id.is_empty()) else {
        return Ok(Err("merchantOrderId is required"));
    };
    let sent = orders::resync(state, merchant_id, order_id).await?;
    Ok(if sent {
        Ok(())
    } else {
        Err("no notification exists for this order")
    })
}

/// A provider-started retry of the order's rejected (or failed) pay-in or payout: the same
/// card, or the same alternative method, through every card processor of the merchant in
/// cascade order; notified with `Retried: true`.
pub async fn retry(
    state: &AppState,
    merchant_id: i64,
    order_id: &str,
) -> Result<CashierTransaction, ServiceError> {
    Ok(orders::retry(state, merchant_id, order_id).await?)
}
