//! What the outbox rows of a batch of settled attempts (or scheduled SEPA debits) are built
//! from: loaded once for the whole batch, after its changes were written.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::followups::{Followups, Reporting};
use super::{notify, BillingError};
use crate::delivery::compose::Sender;
use crate::events::subscription::{Movement, TransactionFacts};
use crate::events::{self};
use crate::platform::Platform;
use crate::store::charges::Charge;
use crate::store::customers::{self, Customer};
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::memberships::Membership;
use crate::store::outbox;
use crate::store::payment_methods::PaymentMethod;
use crate::store::processors::{self, PaymentProcessor};
use crate::store::Tx;
use crate::store::{sepa_accounts, stripe_accounts};

/// The distinct pairs of `pairs`, in first-seen order.
pub(super) fn distinct(pairs: impl Iterator<Item = (i64, i64)>) -> Vec<(i64, i64)> {
    let mut seen = HashSet::new();
    pairs.filter(|pair| seen.insert(*pair)).collect()
}

/// What the outbox rows of a batch are built from, loaded once for the whole batch after its
/// changes were written.
pub(super) struct Context {
    invoices: HashMap<i64, Invoice>,
    customers: HashMap<i64, Customer>,
    recent: HashMap<i64, Vec<Invoice>>,
    senders: HashMap<i64, Sender>,
    processors: HashMap<i64, PaymentProcessor>,
    /// The connected processors (Stripe accounts, SEPA processors) holding the attempts'
    /// payment methods, by merchant and processor id.
    connected: HashMap<(i64, i64), PaymentProcessor>,
    /// The attempts' payment methods, by id.
    cards: HashMap<i64, PaymentMethod>,
}

impl Context {
    pub(super) async fn load(
        tx: &mut Tx,
        charges: &[&Charge],
        memberships: &HashMap<i64, Membership>,
        invoice_ids: &[(i64, i64)],
        cards: &HashMap<i64, PaymentMethod>,
    ) -> Result<Self, BillingError> {
        let owners = distinct(memberships.values().map(|m| (m.merchant_id, m.customer_id)));
        let membership_ids: Vec<i64> = memberships.keys().copied().collect();
        let mut senders = HashMap::new();
        let mut card_processors = HashMap::new();
        for merchant_id in charges
            .iter()
            .map(|c| c.merchant_id)
            .collect::<HashSet<_>>()
        {
            let sender = Sender::load(&mut **tx, merchant_id)
                .await?
                .ok_or(BillingError::NotFound)?;
            senders.insert(merchant_id, sender);
            if let Some(processor) = processors::first_card(&mut **tx, merchant_id).await? {
                card_processors.insert(merchant_id, processor);
            }
        }
        let mut connected = HashMap::new();
        for charge in charges {
            let Some(processor_id) = cards
                .get(&charge.payment_method_id)
                .and_then(|card| card.processor_id)
            else {
                continue;
            };
            let key = (charge.merchant_id, processor_id);
            if connected.contains_key(&key) {
                continue;
            }
            if let Some(account) =
                stripe_accounts::get(&mut **tx, charge.merchant_id, processor_id).await?
            {
                connected.insert(key, account.into_processor());
            } else if let Some(account) =
                sepa_accounts::get(&mut **tx, charge.merchant_id, processor_id).await?
            {
                connected.insert(key, account.into_processor());
            }
        }
        Ok(Self {
            invoices: invoices::get_many(&mut **tx, invoice_ids).await?,
            customers: customers::by_ids(&mut **tx, &owners).await?,
            recent: invoices::recent_many(&mut **tx, &membership_ids, RECENT_INVOICES).await?,
            senders,
            processors: card_processors,
            connected,
            cards: cards.clone(),
        })
    }

    /// Records in `tx` the outbox rows of `settled` (each attempt with what follows from it,
    /// its membership in `memberships` as saved): a `TRANSACTION_DATA_UPDATE` of each attempt
    /// when `report_transactions`, then the events and the e-mail its followups call for.
    pub(super) async fn record_outbox(
        &self,
        tx: &mut Tx,
        state: &Platform,
        settled: Vec<(&Charge, Followups)>,
        memberships: &HashMap<i64, Membership>,
        report_transactions: bool,
        at: DateTime<Utc>,
    ) -> Result<(), BillingError> {
        let mut events = Vec::new();
        let mut emails = Vec::new();
        for (charge, due) in settled {
            let m = memberships
                .get(&charge.membership_id)
                .ok_or(BillingError::NotFound)?;
            let invoice = self.invoice(charge.invoice_id)?;
            let reporting = self.reporting(m, Some(invoice))?;
            if report_transactions {
                let card = self
                    .cards
                    .get(&charge.payment_method_id)
                    .ok_or(BillingError::NotFound)?;
                let facts = TransactionFacts {
                    membership: m,
                    customer: reporting.customer,
                    movement: Movement::Charge(charge),
                    invoice,
                    payment_method: card,
                    recent: reporting.recent,
                    processor: self.card_processor(m.merchant_id, card),
                };
                events.push(notify::transaction(state, facts).await?);
            }
            let (more, email) = due.outbox_rows(tx, state, reporting, at).await?;
            events.extend(more);
            emails.extend(email);
        }
        events::record(tx, events, at).await?;
        outbox::insert_emails(tx, &emails, at, state.clock.now()).await?;
        Ok(())
    }

    pub(super) fn invoice(&self, id: i64) -> Result<&Invoice, BillingError> {
        self.invoices.get(&id).ok_or(BillingError::NotFound)
    }

    /// The processor a charge of `card` went through: its connected processor (a Stripe
    /// account, a SEPA processor), or the merchant's first sandbox card gateway.
    pub(super) fn card_processor(
        &self,
        merchant_id: i64,
        card: &PaymentMethod,
    ) -> Option<&PaymentProcessor> {
        match card.processor_id {
            Some(processor_id) => self.connected.get(&(merchant_id, processor_id)),
            None => self.processors.get(&merchant_id),
        }
    }

    pub(super) fn reporting<'a>(
        &'a self,
        m: &'a Membership,
        invoice: Option<&'a Invoice>,
    ) -> Result<Reporting<'a>, BillingError> {
        Ok(Reporting {
            membership: m,
            customer: self
                .customers
                .get(&m.customer_id)
                .ok_or(BillingError::NotFound)?,
            invoice,
            recent: self.recent.get(&m.id).map_or(&[], Vec::as_slice),
            sender: self.senders.get(&m.merchant_id),
        })
    }
}
