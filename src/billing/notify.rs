//! What billing tells the outside world about a subscription transaction: its event
//! ([`crate::events`]) with what the server adds to billing's facts (the card's BIN details, the
//! customer's account id, the USD rates).

use super::BillingError;
use crate::events::subscription::{SubscriptionTransaction, TransactionFacts};
use crate::events::transaction::account_id;
use crate::events::Event;
use crate::platform::Platform;

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
