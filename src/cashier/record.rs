//! Recording a cashier transaction: its row, its place in the refund ledger (a refund), its
//! `TRANSACTION_DATA_UPDATE` notification and the end of the session's claim, in one database
//! transaction, whichever processor moved the money.

use chrono::{DateTime, Utc};
use recur_domain::money::Currency;

use super::cascade::Cascade;
use super::payer::Payer;
use super::CashierError;
use crate::events::cashier::OrderTransaction;
use crate::events::{self, Event};
use crate::ids;
use crate::platform::Platform;
use crate::store::cashier_sessions::{self, CashierSession};
use crate::store::cashier_transactions::{
    self, CardFacts, CashierTransaction, NewTransaction, TransactionKind, TransactionStatus,
};
use crate::store::refunds::{self, Answer, NewRefund, RefundStatus, Refunded};
use crate::store::Tx;

/// What a transaction is recorded with besides its cascade.
pub(super) struct Recorded<'a> {
    pub(super) session: &'a CashierSession,
    pub(super) payer: &'a Payer,
    pub(super) kind: TransactionKind,
    pub(super) amount: i64,
    pub(super) initial_amount: i64,
    pub(super) card: Option<&'a CardFacts>,
    pub(super) client_ip: Option<&'a str>,
    pub(super) parent_id: Option<i64>,
    pub(super) retried: bool,
}

impl<'a> Recorded<'a> {
    /// A refund of `amount` (minor units) of the pay-in `payin` of `session`.
    pub(super) fn refund(
        session: &'a CashierSession,
        payer: &'a Payer,
        payin: &'a CashierTransaction,
        amount: i64,
    ) -> Self {
        Recorded {
            session,
            payer,
            kind: TransactionKind::Refund,
            amount,
            initial_amount: payin.initial_amount,
            card: payin.card.as_ref(),
            client_ip: None,
            parent_id: Some(payin.id),
            retried: false,
        }
    }
}

/// Records the transaction and its notification, and ends the session's claim (and the payment
/// parked on it), in one database transaction.
pub(super) async fn record(
    state: &Platform,
    r: Recorded<'_>,
    cascade: Cascade,
) -> Result<CashierTransaction, CashierError> {
    let session = r.session;
    let now = state.clock.now();
    let last = cascade
        .attempts
        .last()
        .cloned()
        .expect("a cascade has attempts");
    let mut tx = state.store.begin().await?;
    let new = NewTransaction {
        merchant_id: session.merchant_id,
        session_id: session.id,
        order_id: &session.fields.order_id,
        idempotency_key: &cascade.key,
        kind: r.kind,
        status: cascade.status,
        amount: r.amount,
        initial_amount: r.initial_amount,
        currency: &session.fields.currency,
        processor_id: cascade.processor.processor_id,
        external_id: Some(last.reference.as_str()).filter(|r| !r.is_empty()),
        decline_code: last.decline_code.as_deref(),
        decline_reason: last.decline_reason.as_deref(),
        card: r.card,
        client_ip: r.client_ip,
        cascade_id: &uuid::Uuid::new_v4().hyphenated().to_string(),
        attempts: &cascade.attempts,
        parent_id: r.parent_id,
        retried: r.retried,
    };
    let Some(id) = cashier_transactions::insert(&mut tx, &new, now).await? else {
        return Err(CashierError::Conflict(
            "this operation was recorded by a concurrent request".into(),
        ));
    };
    let transaction = cashier_transactions::by_id(&mut *tx, session.merchant_id, id)
        .await?
        .ok_or(CashierError::NotFound)?;
    if let (TransactionKind::Refund, Some(payment_id)) = (r.kind, r.parent_id) {
        ledger_refund(&mut tx, &transaction, payment_id, now).await?;
    }
    notify(&mut tx, state, session, r.payer, &transaction, now).await?;
    if matches!(r.kind, TransactionKind::PayIn | TransactionKind::PayOut) {
        cashier_sessions::release(
            &mut tx,
            session.id,
            transaction.status == TransactionStatus::Success,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(transaction)
}

/// Writes cashier refund `t` of pay-in `payment_id` into the refund ledger, under its own id.
async fn ledger_refund(
    tx: &mut Tx,
    t: &CashierTransaction,
    payment_id: i64,
    now: DateTime<Utc>,
) -> Result<(), CashierError> {
    let refund_key = ids::refund_key();
    let new = NewRefund {
        merchant_id: t.merchant_id,
        refund_key: &refund_key,
        refunded: Refunded::CashierPayment { payment_id },
        idempotency_key: &format!("cashier:{}", t.id),
        amount: t.amount,
        currency: &t.currency,
        reason: None,
    };
    let answer = Answer {
        status: if t.status == TransactionStatus::Success {
            RefundStatus::Succeeded
        } else {
            RefundStatus::Failed
        },
        reference: t.external_id.as_deref(),
        decline: t
            .decline_code
            .as_deref()
            .map(|code| (code, t.decline_reason.as_deref().unwrap_or_default())),
    };
    refunds::insert_cashier(tx, t.id, &new, answer, now).await?;
    Ok(())
}

/// Records the transaction's `TRANSACTION_DATA_UPDATE` for the session's `webhookUrl` (nothing
/// when the session has none).
async fn notify(
    tx: &mut Tx,
    state: &Platform,
    session: &CashierSession,
    payer: &Payer,
    t: &CashierTransaction,
    now: DateTime<Utc>,
) -> Result<(), CashierError> {
    let Some(webhook_url) = session.fields.webhook_url.as_deref() else {
        return Ok(());
    };
    let event = Event::CashierTransaction(OrderTransaction {
        transaction: t,
        currency: Currency::parse(&t.currency).map_err(anyhow::Error::from)?,
        webhook_url,
        account_id: payer.account_id(&state.keys, t.merchant_id),
        account: payer.details(session),
        usd_rates: &state.config.usd_rates,
    });
    events::record(tx, vec![event], now).await?;
    Ok(())
}
