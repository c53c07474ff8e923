//! Charges of SEPA mandates (DESIGN §18). A charge of a mandate is a debit: recur records it
//! with its collection date, e-mails the customer the pre-notification, and keeps the charge
//! `Pending` until a collection file takes it ([`crate::services::sepa::batches`]). The
//! membership stands as if paid from then on (a first payment makes it Active; a renewal, a
//! retry or a plan change takes effect), while the invoice stays Open until the batch's
//! collection date, when [`super::sepa_collection`] records the payment (invoice Paid,
//! `TRANSACTION_DATA_UPDATE` Success, receipt).
//!
//! The pre-notification goes out when the debit is made, so the collection date is the first
//! TARGET2 business day `leadDays` after it (`recur_domain::sepa::target2`).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use recur_domain::membership::{EmailKind, InvoiceChange};
use recur_domain::sepa::target2;

use super::attempt_rules::settle;
use super::charge_context::{distinct, Context};
use super::{credit_notes, followups, proration, BillingError};
use crate::delivery::compose::DebitNotice;
use crate::ids;
use crate::platform::Platform;
use crate::processor::ChargeOutcome;
use crate::store::charges::Charge;
use crate::store::invoices;
use crate::store::memberships::{self, Membership};
use crate::store::payment_methods::PaymentMethod;
use crate::store::sepa_accounts::{self, Account};
use crate::store::sepa_debits::{self, NewDebit};
use crate::store::sepa_mandates::{self, Mandate};

/// What became of a charge of a mandate.
#[derive(Debug)]
pub(super) enum Scheduling {
    /// A debit, pre-notified, `Pending` until collected.
    Scheduled,
    /// No debit can be made (a revoked mandate, a removed processor, not euros): the charge
    /// is declined with this answer.
    Refused(ChargeOutcome),
}

/// A charge the debit of which is being made.
struct Planned<'a> {
    charge: &'a Charge,
    mandate: &'a Mandate,
    account: &'a Account,
}

/// Makes the debits of `charges` (charges of mandates, `Pending`) in one transaction: each is
/// recorded with its collection date, the membership settled as paid, the pre-notification
/// queued. A charge scheduled before (recovered after a crash) is left as it is. Answers in
/// the order of `charges`.
pub(super) async fn schedule(
    state: &Platform,
    charges: &[&Charge],
    cards: &HashMap<i64, PaymentMethod>,
    at: DateTime<Utc>,
) -> Result<Vec<Scheduling>, BillingError> {
    let pool = state.store.pool();
    let ids: Vec<(i64, i64)> = charges
        .iter()
        .map(|c| (c.merchant_id, c.payment_method_id))
        .collect();
    let mandates = sepa_mandates::get_many(pool, &ids).await?;
    let mut accounts: HashMap<(i64, i64), Account> = HashMap::new();
    let processors: HashSet<(i64, i64)> = charges
        .iter()
        .filter_map(|c| {
            mandates
                .get(&c.payment_method_id)
                .map(|m| (c.merchant_id, m.processor_id))
        })
        .collect();
    for (merchant_id, processor_id) in processors {
        if let Some(account) = sepa_accounts::get(pool, merchant_id, processor_id).await? {
            accounts.insert((merchant_id, processor_id), account);
        }
    }
    let mut answers = Vec::with_capacity(charges.len());
    let mut planned = Vec::new();
    for charge in charges {
        let mandate = mandates.get(&charge.payment_method_id);
        let account = mandate.and_then(|m| accounts.get(&(charge.merchant_id, m.processor_id)));
        let refusal = match (mandate, account) {
            (None, _) | (_, None) => Some(("MD01", "no mandate of a connected SEPA processor")),
            (Some(m), _) if m.revoked_at.is_some() => Some(("MD01", "the mandate was revoked")),
            _ if charge.currency != "EUR" => {
                Some(("AM03", "SEPA Direct Debit collects euros only"))
            }
            _ => None,
        };
        match (refusal, mandate, account) {
            (None, Some(mandate), Some(account)) => {
                planned.push(Planned {
                    charge,
                    mandate,
                    account,
                });
                answers.push(Scheduling::Scheduled);
            }
            (refusal, _, _) => {
                let (code, reason) = refusal.unwrap_or(("MD01", "no mandate"));
                answers.push(Scheduling::Refused(ChargeOutcome::Declined {
                    reference: String::new(),
                    code: code.into(),
                    reason: reason.into(),
                }));
            }
        }
    }
    if !planned.is_empty() {
        write(state, &planned, cards, at).await?;
    }
    Ok(answers)
}

/// Writes the debits of `planned` and what follows from them, in one transaction.
async fn write(
    state: &Platform,
    planned: &[Planned<'_>],
    cards: &HashMap<i64, PaymentMethod>,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    let today = at.date_naive();
    let mut tx = state.store.begin().await?;
    let mut fresh = Vec::new();
    for plan in planned {
        let lead = u32::try_from(plan.account.creditor.lead_days).unwrap_or(1);
        let collection_date = target2::collection_date(today, today, lead);
        let end_to_end_id = ids::prefixed("E2E", 24);
        let new = NewDebit {
            charge_id: plan.charge.id,
            merchant_id: plan.charge.merchant_id,
            processor_id: plan.account.processor_id,
            payment_method_id: plan.charge.payment_method_id,
            collection_date,
            end_to_end_id: &end_to_end_id,
        };
        if sepa_debits::insert(&mut tx, &new, at).await? {
            fresh.push((plan, collection_date));
        }
    }
    if fresh.is_empty() {
        tx.commit().await?;
        return Ok(());
    }
    let membership_ids = distinct(
        fresh
            .iter()
            .map(|(p, _)| (p.charge.merchant_id, p.charge.membership_id)),
    );
    let mut memberships: HashMap<i64, Membership> =
        memberships::lock_many(&mut tx, state.store.backend(), &membership_ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
    let invoice_ids = distinct(
        fresh
            .iter()
            .map(|(p, _)| (p.charge.merchant_id, p.charge.invoice_id)),
    );
    let open_invoices = invoices::get_many(&mut *tx, &invoice_ids).await?;
    let mut due_list = Vec::with_capacity(fresh.len());
    let mut changed = HashSet::new();
    for (plan, collection_date) in &fresh {
        let charge = plan.charge;
        let m = memberships
            .get_mut(&charge.membership_id)
            .ok_or(BillingError::NotFound)?;
        let invoice = open_invoices
            .get(&charge.invoice_id)
            .ok_or(BillingError::NotFound)?;
        let (settlement, mut due) = settle(m, charge, invoice, true, at)?;
        if settlement.terms_changed {
            if let Some(owed) = proration::owed_back(charge)? {
                due.credits = credit_notes::for_balance(&mut tx, owed, at).await?;
            }
        }
        // The invoice stays Open until the collection; a first invoice gets its period now.
        if let Some(InvoiceChange::Paid {
            period: Some(period),
            ..
        }) = settlement.invoice
        {
            invoices::set_period(&mut tx, invoice.id, period).await?;
        }
        if settlement.membership_changed {
            changed.insert(m.id);
        }
        let card = cards
            .get(&charge.payment_method_id)
            .ok_or(BillingError::NotFound)?;
        due.email = Some(EmailKind::DebitNotice);
        due.debit = Some(DebitNotice {
            amount: charge.amount,
            collection_date: *collection_date,
            mandate_reference: plan.mandate.mandate_reference.clone(),
            iban_last4: card.last4.clone(),
            creditor_name: plan.account.creditor.creditor_name.clone(),
            creditor_id: plan.account.creditor.creditor_id.clone(),
        });
        due_list.push(due);
    }
    let mut to_save: Vec<&mut Membership> = memberships
        .values_mut()
        .filter(|m| changed.contains(&m.id))
        .collect();
    followups::save_many(&mut tx, &mut to_save, at).await?;
    let scheduled: Vec<&Charge> = fresh.iter().map(|(p, _)| p.charge).collect();
    let context = Context::load(&mut tx, &scheduled, &memberships, &invoice_ids, cards).await?;
    let settled = scheduled.iter().copied().zip(due_list).collect();
    context
        .record_outbox(&mut tx, state, settled, &memberships, false, at)
        .await?;
    tx.commit().await?;
    tracing::info!(debits = fresh.len(), "SEPA debits scheduled");
    Ok(())
}
