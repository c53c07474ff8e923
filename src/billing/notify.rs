//! What billing tells the outside world about a subscription transaction: its event
//! ([`crate::events`]) with what the server adds to billing's facts (the card's BIN details, the
//! customer's account id, the USD rates).

use super::BillingError;
use crate::events::subscription::{SubscriptionTransaction, TransactionFacts};
use crate::events::transaction::account_id;
use crate::events::Event;
use crate::platform::Platform;
use crate::store::payment_methods::PaymentMethod;
use crate::store::processors::{self, PaymentProcessor};
use crate::store::{stripe_accounts, Tx};

/// The processor a notification about a movement of the merchant's `card` names: the connected
/// Stripe account that holds it, or the merchant's first sandbox card gateway.
pub async fn processor_of(
    tx: &mut Tx,
    merchant_id: i64,
    card: &PaymentMethod,
) -> Result<Option<PaymentProcessor>, BillingError> {
    let Some(processor_id) = card.processor_id else {
        return Ok(processors::first_card(&mut **tx, merchant_id).await?);
    };
    Ok(stripe_accounts::get(&mut **tx, merchant_id, processor_id)
        .await?
        .map(stripe_accounts::Account::into_processor))
}

/// The `TRANSACTION_DATA_UPDATE` event of a completed charge attempt or refund.
pub async fn transaction<'a>(
    state: &'a Platform,
    facts: TransactionFacts<'a>,
) -> Result<Event<'a>, BillingError> {
    let bin = state.processor.bin_info(&facts.payment_method.bin).await?;
    let account_id = account_id(
        &state.keys,
        facts.membership.merchant_id,
        &facts.customer.fields.email,
    );
    Ok(Event::MembershipTransaction(SubscriptionTransaction {
        facts,
        bin,
        account_id,
        usd_rates: &state.config.usd_rates,
    }))
}
