//! What follows a change of a membership, in its transaction: the membership saved under its
//! version check, then the events and the customer e-mails the change calls for.

use chrono::{DateTime, Utc};
use recur_domain::membership::{EmailKind, Settlement};
use serde_json::{Map, Value};

use super::{checkout, BillingError};
use crate::delivery::compose::{self, About, DebitNotice, Sender};
use crate::delivery::credits::Credited;
use crate::events::{self, Event};
use crate::platform::Platform;
use crate::store::customers::{self, Customer};
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::memberships::{self, Membership};
use crate::store::outbox::{self, NewEmail};
use crate::store::Tx;

/// What a change calls for once its own rows are written: events and an e-mail.
#[derive(Debug, Default)]
pub struct Followups {
    /// The status changed: a status-change event is due.
    pub status_changed: bool,
    /// Fields changed (the spec's `Updates` keys): an update event is due.
    pub updated: Option<Map<String, Value>>,
    /// An e-mail to the customer is due.
    pub email: Option<EmailKind>,
    /// The credit notes the change wrote: listed in its e-mail, or each in a
    /// [`EmailKind::CreditNote`] e-mail of its own when it sends none.
    pub credits: Vec<Credited>,
    /// The trial ends in three days: `SUBSCRIPTION_TRIAL_WILL_END` and its e-mail, which names
    /// the first charge (this amount, minor units).
    pub trial_will_end: Option<i64>,
    /// The SEPA debit an [`EmailKind::DebitNotice`] e-mail pre-notifies.
    pub debit: Option<DebitNotice>,
}

impl Followups {
    /// What a settled attempt calls for: a status-change event, an e-mail.
    pub fn after(settlement: &Settlement) -> Self {
        Followups {
            status_changed: settlement.status_changed,
            email: settlement.email,
            ..Followups::default()
        }
    }

    /// A status-change event, when `changed`.
    pub fn status_change(changed: bool) -> Self {
        Followups {
            status_changed: changed,
            ..Followups::default()
        }
    }
}

/// Saves `m`; a concurrent change since it was read is a conflict.
pub(super) async fn save(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    save_many(tx, &mut [m], at).await
}

/// Saves memberships read for change in one statement; a concurrent change to any of them
/// since it was read is a conflict (the caller's transaction must not commit).
pub(super) async fn save_many(
    tx: &mut Tx,
    ms: &mut [&mut Membership],
    at: DateTime<Utc>,
) -> Result<(), BillingError> {
    if memberships::save_many(tx, ms, at).await? {
        Ok(())
    } else {
        Err(BillingError::Conflict(
            "the membership changed concurrently; retry".into(),
        ))
    }
}

/// Everything the events and e-mail about one membership are built from.
pub struct Reporting<'a> {
    /// The membership as saved.
    pub membership: &'a Membership,
    /// Its customer.
    pub customer: &'a Customer,
    /// The invoice the change concerns, if any.
    pub invoice: Option<&'a Invoice>,
    /// The membership's latest invoices, newest first (for status and update events).
    pub recent: &'a [Invoice],
    /// Whom its e-mails come from: the merchant, as its settings say.
    pub sender: Option<&'a Sender>,
}

impl Followups {
    /// Whether anything is due.
    pub(super) fn is_empty(&self) -> bool {
        !self.status_changed
            && self.updated.is_none()
            && self.email.is_none()
            && self.credits.is_empty()
            && self.trial_will_end.is_none()
    }

    /// These followups and `more`'s together (`more`'s e-mail, when both have one).
    pub(super) fn and(self, more: Followups) -> Followups {
        let mut credits = self.credits;
        credits.extend(more.credits);
        Followups {
            status_changed: self.status_changed || more.status_changed,
            updated: more.updated.or(self.updated),
            email: more.email.or(self.email),
            credits,
            trial_will_end: more.trial_will_end.or(self.trial_will_end),
            debit: more.debit.or(self.debit),
        }
    }

    /// The events and e-mails these followups call for, built from data already loaded. A
    /// "payment failed" e-mail gets its pay-now link, opened in `tx`.
    pub(super) async fn outbox_rows<'a>(
        self,
        tx: &mut Tx,
        state: &Platform,
        reporting: Reporting<'a>,
        at: DateTime<Utc>,
    ) -> Result<(Vec<Event<'a>>, Vec<NewEmail>), BillingError> {
        let m = reporting.membership;
        let recent = reporting.recent;
        let mut events = Vec::new();
        if self.status_changed {
            events.push(Event::MembershipStatusChanged {
                membership: m,
                recent,
            });
        }
        if let Some(updates) = self.updated {
            events.push(Event::MembershipUpdated {
                membership: m,
                recent,
                updates,
            });
        }
        if self.trial_will_end.is_some() {
            events.push(Event::TrialWillEnd {
                membership: m,
                recent,
            });
        }
        if self.email.is_none() && self.credits.is_empty() {
            return Ok((events, Vec::new()));
        }
        let sender = reporting.sender.ok_or_else(|| {
            BillingError::Internal(anyhow::anyhow!("membership without merchant"))
        })?;
        let mut emails = Vec::new();
        if let Some(kind) = self.email {
            let pay_link = match kind {
                EmailKind::PaymentFailed => {
                    Some(checkout::open_pay_now_link(tx, state, m, at).await?)
                }
                EmailKind::Receipt
                | EmailKind::Canceled
                | EmailKind::CreditNote
                | EmailKind::TrialWillEnd
                | EmailKind::DebitNotice => None,
            };
            let about = About {
                invoice: reporting.invoice,
                pay_link,
                credits: &self.credits,
                first_charge: self.trial_will_end,
                debit: self.debit.as_ref(),
            };
            emails.push(compose::email(
                state,
                kind,
                sender,
                m,
                reporting.customer,
                about,
            )?);
        } else {
            for credited in &self.credits {
                let about = About {
                    credits: std::slice::from_ref(credited),
                    ..About::default()
                };
                emails.push(compose::email(
                    state,
                    EmailKind::CreditNote,
                    sender,
                    m,
                    reporting.customer,
                    about,
                )?);
            }
        }
        Ok((events, emails))
    }

    /// Writes the events and e-mails a change of one membership calls for, in its transaction.
    pub async fn record(
        self,
        tx: &mut Tx,
        state: &Platform,
        m: &Membership,
        customer: &Customer,
        invoice: Option<&Invoice>,
        at: DateTime<Utc>,
    ) -> Result<(), BillingError> {
        if self.is_empty() {
            return Ok(());
        }
        let recent =
            if self.status_changed || self.updated.is_some() || self.trial_will_end.is_some() {
                invoices::recent(&mut **tx, m.id, RECENT_INVOICES).await?
            } else {
                Vec::new()
            };
        let sender = if self.email.is_some() || !self.credits.is_empty() {
            Sender::load(&mut **tx, m.merchant_id).await?
        } else {
            None
        };
        let (events, emails) = self
            .outbox_rows(
                tx,
                state,
                Reporting {
                    membership: m,
                    customer,
                    invoice,
                    recent: &recent,
                    sender: sender.as_ref(),
                },
                at,
            )
            .await?;
        events::record(tx, events, at).await?;
        outbox::insert_emails(tx, &emails, at, state.clock.now()).await?;
        Ok(())
    }

    /// [`Self::record`] for a membership whose customer is not loaded yet.
    pub async fn record_for(
        self,
        tx: &mut Tx,
        state: &Platform,
        m: &Membership,
        invoice: Option<&Invoice>,
        at: DateTime<Utc>,
    ) -> Result<(), BillingError> {
        if self.is_empty() {
            return Ok(());
        }
        let customer = customers::by_id(&mut **tx, m.merchant_id, m.customer_id)
            .await?
            .ok_or(BillingError::NotFound)?;
        self.record(tx, state, m, &customer, invoice, at).await
    }
}
