//! The `TRANSACTION_DATA_UPDATE` of a cashier order's transaction (a payment, payout, retry or
//! refund of a hosted-payment-page order), for the order session's `webhookUrl`.

use chrono::{DateTime, Utc};
use recur_domain::fx::UsdRates;
use recur_domain::money::Currency;
use serde_json::{Map, Value};

use super::transaction::{
    amount_number, AccountDetails, TransactionPayload, CRM_ALTERNATIVE, CRM_CARD,
};
use crate::store::cashier_transactions::CashierTransaction;

/// A cashier transaction to notify.
pub struct OrderTransaction<'a> {
    /// The transaction, as recorded.
    pub transaction: &'a CashierTransaction,
    /// Its currency.
    pub currency: Currency,
    /// Where the notification goes: the order session's `webhookUrl`.
    pub webhook_url: &'a str,
    /// `AccountId` of the payer ([`super::transaction::account_id`]).
    pub account_id: String,
    /// `AccountDetails` of the payer.
    pub account: AccountDetails,
    /// The rates `UsdAmount` is computed with.
    pub usd_rates: &'a UsdRates,
}

/// The payload of the transaction's `TRANSACTION_DATA_UPDATE`, issued at `at`.
pub(super) fn payload(o: OrderTransaction<'_>, at: DateTime<Utc>) -> Map<String, Value> {
    let OrderTransaction {
        transaction: t,
        currency,
        account_id,
        account,
        usd_rates,
        ..
    } = o;
    let processor_name = t
        .attempts
        .last()
        .map(|a| a.processor_name.clone())
        .unwrap_or_default();
    TransactionPayload {
        organization_id: t.merchant_id,
        merchant_order_id: t.order_id.clone(),
        account_id,
        account,
        usd_amount: usd_rates.to_usd(t.amount, currency),
        kind: t.kind.as_str(),
        status: t.status.as_str(),
        amount: amount_number(t.amount, currency),
        initial_amount: amount_number(t.initial_amount, currency),
        currency: t.currency.clone(),
        transaction_id: t.id,
        reference: t.external_id.clone().unwrap_or_default(),
        processor_id: t.processor_id,
        processor_name,
        decline_code: t.decline_code.clone(),
        decline_reason: t.decline_reason.clone(),
        card: t.card.clone(),
        cascade_id: Some(t.cascade_id.clone()),
        attempts: t.attempts.clone(),
        issued_at: at,
        client_ip: t.client_ip.clone(),
        crm_payment_type: if t.card.is_some() {
            CRM_CARD
        } else {
            CRM_ALTERNATIVE
        },
        plan_key: None,
        is_subscription: false,
        subscription_invoice_id: None,
        retried: t.retried,
    }
    .into_json()
}
