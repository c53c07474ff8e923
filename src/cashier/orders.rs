//! What happens to a cashier order: the customer's payment or payout, a provider-started retry
//! of a rejected one, the merchant's refunds and payouts, and re-sending the latest
//! notification. Each change commits with its transaction row and its notification together.

use recur_domain::cascade::route;
use recur_domain::money::{decimal_to_minor, Currency};
use rust_decimal::Decimal;

use super::cascade::{self, Operation};
use super::payer::Payer;
use super::record::{record, Recorded};
use super::stripe;
use super::CashierError;
use crate::events::Action;
use crate::platform::Platform;
use crate::store::cashier_sessions::{self, CashierSession};
use crate::store::cashier_transactions::{
    self, CardFacts, CashierTransaction, TransactionKind, TransactionStatus,
};
use crate::store::events as recorded;
use crate::store::processors::{self, PaymentProcessor, ProcessorKind};
use crate::store::refunds;
use crate::store::stripe_accounts;

/// A payment or payout the customer asked for on the cashier page.
#[derive(Debug, Clone)]
pub struct CashierPayment<'a> {
    /// The session, claimed by the caller.
    pub session: &'a CashierSession,
    /// The processors the page offered, in cascade order.
    pub offered: &'a [PaymentProcessor],
    /// The one the customer chose.
    pub processor_id: i64,
    /// Minor units.
    pub amount: i64,
    /// The card, unless an alternative method was chosen.
    pub card: Option<CardFacts>,
    /// The customer's address.
    pub client_ip: Option<String>,
}

/// Runs the customer's payment (or payout, for a payout session) through the cascade, records
/// it, notifies the merchant and ends the session's claim (closing it after a success).
pub async fn pay(
    state: &Platform,
    payment: CashierPayment<'_>,
) -> Result<CashierTransaction, CashierError> {
    let session = payment.session;
    let route: Vec<PaymentProcessor> = route(
        payment.offered,
        payment.processor_id,
        |p| p.processor_id,
        |p| p.kind == ProcessorKind::Card,
    )
    .into_iter()
    .cloned()
    .collect();
    let Some(first) = route.first() else {
        return Err(CashierError::invalid(
            "processorId",
            "is not offered in this cashier",
        ));
    };
    let payer = Payer::of(session)?;
    let kind = if session.fields.is_payout {
        TransactionKind::PayOut
    } else {
        TransactionKind::PayIn
    };
    let operation = match (&payment.card, first.kind) {
        (Some(card), ProcessorKind::Card) if kind == TransactionKind::PayOut => {
            Operation::Payout { token: &card.token }
        }
        (Some(card), ProcessorKind::Card) => Operation::Charge { token: &card.token },
        (_, ProcessorKind::Alternative) if kind == TransactionKind::PayIn => Operation::Collect {
            account: &payer.email,
        },
        _ => return Err(CashierError::invalid("cardNumber", "is required")),
    };
    let card = match first.kind {
        ProcessorKind::Card => payment.card.clone(),
        ProcessorKind::Alternative => None,
    };
    let number = cashier_transactions::count_for_session(state.store.pool(), session.id).await?;
    let cascade = cascade::run(
        state,
        session.merchant_id,
        &route,
        operation,
        payment.amount,
        &session.fields.currency,
        &format!("cashier:{}:{number}", session.id),
    )
    .await?;
    let recorded = Recorded {
        session,
        payer: &payer,
        kind,
        amount: payment.amount,
        initial_amount: session.fields.locked_amount.unwrap_or(payment.amount),
        card: card.as_ref(),
        client_ip: payment.client_ip.as_deref(),
        parent_id: None,
        retried: false,
    };
    record(state, recorded, cascade).await
}

/// A provider-started retry of the order's rejected (or failed) pay-in or payout: the same
/// card, or the same alternative method, through every card processor of the merchant in cascade
/// order. Notified with `Retried: true`; a success closes the order's session.
pub async fn retry(
    state: &Platform,
    merchant_id: i64,
    order_id: &str,
) -> Result<CashierTransaction, CashierError> {
    let pool = state.store.pool();
    let Some(last) = cashier_transactions::latest(pool, merchant_id, order_id, None).await? else {
        return Err(CashierError::NotFound);
    };
    let original = match last.kind {
        TransactionKind::Refund => None,
        _ if last.status == TransactionStatus::Success => None,
        _ => Some(last),
    }
    .ok_or_else(|| {
        CashierError::Conflict(
            "only an order whose latest transaction was rejected can be retried".into(),
        )
    })?;
    if stripe_accounts::get(pool, merchant_id, original.processor_id)
        .await?
        .is_some()
    {
        return Err(CashierError::Conflict(
            "a payment through Stripe is not retried by the provider: its card was saved for one \
             payment; the customer pays again on the cashier page"
                .into(),
        ));
    }
    let session = cashier_sessions::by_id(pool, merchant_id, original.session_id)
        .await?
        .ok_or(CashierError::NotFound)?;
    let payer = Payer::of(&session)?;
    let all = processors::list(pool, merchant_id).await?;
    let route: Vec<PaymentProcessor> = match &original.card {
        Some(_) => all
            .into_iter()
            .filter(|p| p.kind == ProcessorKind::Card)
            .collect(),
        None => all
            .into_iter()
            .filter(|p| p.processor_id == original.processor_id)
            .collect(),
    };
    if route.is_empty() {
        return Err(CashierError::Conflict(
            "the merchant has no processor to retry with".into(),
        ));
    }
    let operation = match (&original.card, original.kind) {
        (Some(card), TransactionKind::PayOut) => Operation::Payout { token: &card.token },
        (Some(card), _) => Operation::Charge { token: &card.token },
        (None, _) => Operation::Collect {
            account: &payer.email,
        },
    };
    let cascade = cascade::run(
        state,
        merchant_id,
        &route,
        operation,
        original.amount,
        &original.currency,
        &format!("retry:{}", original.id),
    )
    .await?;
    let recorded = Recorded {
        session: &session,
        payer: &payer,
        kind: original.kind,
        amount: original.amount,
        initial_amount: original.initial_amount,
        card: original.card.as_ref(),
        client_ip: original.client_ip.as_deref(),
        parent_id: Some(original.id),
        retried: true,
    };
    record(state, recorded, cascade).await
}

/// Refunds `amount` (minor units; everything left when `None`) of the order's successful pay-in.
pub async fn refund(
    state: &Platform,
    merchant_id: i64,
    order_id: &str,
    amount: Option<Decimal>,
) -> Result<CashierTransaction, CashierError> {
    let pool = state.store.pool();
    let Some(payin) =
        cashier_transactions::latest_success(pool, merchant_id, order_id, TransactionKind::PayIn)
            .await?
    else {
        return Err(CashierError::invalid(
            "orderId",
            "has no successful payment to refund",
        ));
    };
    let (count, refunded) = refunds::of_cashier_payment(pool, merchant_id, payin.id).await?;
    let left = payin.amount - refunded;
    if left <= 0 {
        return Err(CashierError::Conflict(
            "the payment is fully refunded".into(),
        ));
    }
    let currency = Currency::parse(&payin.currency).map_err(anyhow::Error::from)?;
    let amount = recur_domain::money::refund_amount(amount, left, currency)
        .map_err(|message| CashierError::invalid("amount", message))?;
    let session = cashier_sessions::by_id(pool, merchant_id, payin.session_id)
        .await?
        .ok_or(CashierError::NotFound)?;
    let payer = Payer::of(&session)?;
    let cascade = match stripe_accounts::get(pool, merchant_id, payin.processor_id).await? {
        Some(account) => stripe::refund(state, &account, &payin, amount, count).await?,
        None => {
            let processor = processors::list(pool, merchant_id)
                .await?
                .into_iter()
                .find(|p| p.processor_id == payin.processor_id)
                .ok_or(CashierError::NotFound)?;
            cascade::run(
                state,
                merchant_id,
                &[processor],
                Operation::Refund {
                    reference: payin.external_id.as_deref().unwrap_or_default(),
                },
                amount,
                &payin.currency,
                &format!("refund:{}:{count}", payin.id),
            )
            .await?
        }
    };
    let recorded = Recorded::refund(&session, &payer, &payin, amount);
    record(state, recorded, cascade).await
}

/// Sends `amount` (minor units) to the card of the order's latest successful card pay-in or
/// payout, through the merchant's card processors from that one's processor on.
pub async fn payout(
    state: &Platform,
    merchant_id: i64,
    order_id: &str,
    amount: Decimal,
) -> Result<CashierTransaction, CashierError> {
    let pool = state.store.pool();
    let mut sources = Vec::new();
    for kind in [TransactionKind::PayIn, TransactionKind::PayOut] {
        if let Some(t) =
            cashier_transactions::latest_success(pool, merchant_id, order_id, kind).await?
        {
            sources.push(t);
        }
    }
    let Some(source) = sources
        .into_iter()
        .filter(|t| t.card.is_some())
        .max_by_key(|t| t.id)
    else {
        return Err(CashierError::invalid(
            "orderId",
            "has no successful card payment or payout whose card could receive money",
        ));
    };
    if stripe_accounts::get(pool, merchant_id, source.processor_id)
        .await?
        .is_some()
    {
        return Err(CashierError::Conflict(
            "Stripe does not pay out to the card of a payment it took".into(),
        ));
    }
    let amount = minor(
        amount,
        Currency::parse(&source.currency).map_err(anyhow::Error::from)?,
    )?;
    if amount <= 0 {
        return Err(CashierError::invalid("amount", "must be greater than 0"));
    }
    let session = cashier_sessions::by_id(pool, merchant_id, source.session_id)
        .await?
        .ok_or(CashierError::NotFound)?;
    let payer = Payer::of(&session)?;
    let cards: Vec<PaymentProcessor> = processors::list(pool, merchant_id)
        .await?
        .into_iter()
        .filter(|p| p.kind == ProcessorKind::Card)
        .collect();
    let route: Vec<PaymentProcessor> =
        route(&cards, source.processor_id, |p| p.processor_id, |_| true)
            .into_iter()
            .cloned()
            .collect();
    if route.is_empty() {
        return Err(CashierError::Conflict(
            "the merchant has no card processor".into(),
        ));
    }
    let card = source.card.as_ref().expect("filtered on a card");
    let number =
        cashier_transactions::count_of_kind(pool, merchant_id, order_id, TransactionKind::PayOut)
            .await?;
    let cascade = cascade::run(
        state,
        merchant_id,
        &route,
        Operation::Payout { token: &card.token },
        amount,
        &source.currency,
        &format!("payout:{}:{number}", source.id),
    )
    .await?;
    let recorded = Recorded {
        session: &session,
        payer: &payer,
        kind: TransactionKind::PayOut,
        amount,
        initial_amount: amount,
        card: Some(card),
        client_ip: None,
        parent_id: Some(source.id),
        retried: false,
    };
    record(state, recorded, cascade).await
}

/// Schedules the order's newest transaction notification for delivery again. `Ok(false)` when
/// the order has none.
pub async fn resync(
    state: &Platform,
    merchant_id: i64,
    order_id: &str,
) -> Result<bool, CashierError> {
    let mut tx = state.store.begin().await?;
    let Some(action_id) = recorded::latest_for_order(
        &mut *tx,
        merchant_id,
        order_id,
        Action::Transaction.as_str(),
    )
    .await?
    else {
        return Ok(false);
    };
    let found = recorded::resend(&mut tx, merchant_id, &action_id, state.clock.now())
        .await?
        .is_some();
    tx.commit().await?;
    Ok(found)
}

/// `amount` in minor units of `currency`: 400 on `amount` with more decimals than it has.
fn minor(amount: Decimal, currency: Currency) -> Result<i64, CashierError> {
    decimal_to_minor(amount, currency).map_err(|e| CashierError::invalid("amount", e.to_string()))
}
