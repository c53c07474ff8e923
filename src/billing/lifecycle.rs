//! The membership lifecycle of DESIGN §3 as stored changes: first payment, pay-now, expiry,
//! completion and cancellation (renewals and dunning are [`super::recurring`]'s). Every status change goes through the domain's
//! [`transition`] and is followed by a status-change event.

use chrono::{DateTime, Utc};
use recur_domain::calendar::{period_starting, Period};
use recur_domain::invoice::period_invoice;
use recur_domain::membership::{directive_for, ChargeDirective};
use recur_domain::schedule::incomplete_expires_at;
use recur_domain::status::{transition, LifecycleEvent, MembershipStatus};
use serde_json::{Map, Value};

use super::charging::{self, Settled};
use super::invoicing::{issue, new_invoice};
use super::{merchant_now, next_scheduled_action, BillingError};
use crate::app::AppState;
use crate::store::charges::{self, Charge, ChargeKind, NewCharge, PagePayment};
use crate::store::invoices::{self, Invoice, InvoiceKind};
use crate::store::memberships::{self, CreatedAt, Membership};
use crate::store::outbox::EmailKind;
use crate::store::{customers, payment_methods, Tx};

/// What a change calls for once its own rows are written: events and an e-mail.
#[derive(Debug, Default)]
pub struct Followups {
    /// The status changed: a status-change event is due.
    pub status_changed: bool,
    /// Fields changed (the spec's `Updates` keys): an update event is due.
    pub updated: Option<Map<String, Value>>,
    /// An e-mail to the customer is due.
    pub email: Option<EmailKind>,
}

/// How the invoice of a settled attempt changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceChange {
    /// Paid with `amount` from the card; `period`, when given, becomes the invoice's period.
    Paid {
        /// Paid by the payment method, in minor units.
        amount: i64,
        /// The period it now bills (a first invoice's, fixed when it is paid).
        period: Option<Period>,
    },
    /// Void: nothing is owed any more (a declined proration).
    Void,
}

impl InvoiceChange {
    /// Paid with `amount`, the invoice keeping its period.
    pub fn paid(amount: i64) -> Self {
        Self::Paid {
            amount,
            period: None,
        }
    }
}

/// What recording a processor's answer changes besides the attempt itself. The rules below
/// decide it in memory; [`super::charging`] writes it, for one answer or a batch of them.
#[derive(Debug, Default)]
pub struct Settlement {
    /// The invoice's change, if any.
    pub invoice: Option<InvoiceChange>,
    /// The membership was changed in memory and must be saved.
    pub membership_changed: bool,
    /// Events and e-mail due.
    pub followups: Followups,
}

impl Settlement {
    /// The invoice paid with `amount`, the membership changed (its status too when
    /// `status_changed`), and a receipt due.
    pub(super) fn paid_with_receipt(amount: i64, status_changed: bool) -> Self {
        Settlement {
            invoice: Some(InvoiceChange::paid(amount)),
            membership_changed: true,
            followups: Followups {
                status_changed,
                updated: None,
                email: Some(EmailKind::Receipt),
            },
        }
    }
}

/// Applies `event` to the membership's status if the status machine allows it; returns whether
/// the status changed.
pub(super) fn apply(m: &mut Membership, event: LifecycleEvent) -> bool {
    match transition(m.status, event) {
        Ok(next) if next != m.status => {
            m.status = next;
            true
        }
        _ => false,
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

/// An Incomplete membership reached 23 hours without payment: Expired, open invoice Void.
pub async fn expire(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Followups, BillingError> {
    let changed = apply(m, LifecycleEvent::IncompleteTimedOut);
    invoices::void_open(tx, m.id, at).await?;
    m.next_action_at = None;
    save(tx, m, at).await?;
    Ok(Followups {
        status_changed: changed,
        ..Followups::default()
    })
}

/// The membership's `endDate` arrived: Completed, no new cycle.
pub async fn complete(
    tx: &mut Tx,
    m: &mut Membership,
    at: DateTime<Utc>,
) -> Result<Followups, BillingError> {
    let changed = apply(m, LifecycleEvent::EndDateReached);
    m.next_action_at = None;
    save(tx, m, at).await?;
    Ok(Followups {
        status_changed: changed,
        ..Followups::default()
    })
}

/// Cancels a membership now: no retries, no new cycles; open invoices Void except the renewal
/// invoice whose charge failed, which stays Open for a pay-now checkout to collect
/// ([`invoices::void_open_except_renewals`]). Canceling a Canceled membership changes nothing;
/// a Completed or Expired one is a conflict.
pub async fn cancel(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let at = merchant_now(state, merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = memberships::lock(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if m.status == MembershipStatus::Canceled {
        tx.rollback().await?;
        return Ok(m);
    }
    if charges::in_flight(&mut tx, m.id).await? {
        return Err(BillingError::PaymentInProgress);
    }
    if !apply(&mut m, LifecycleEvent::Canceled) {
        return Err(BillingError::Conflict(format!(
            "a {} membership cannot be canceled",
            m.status
        )));
    }
    invoices::void_open_except_renewals(&mut tx, m.id, at).await?;
    m.canceled_at = Some(at);
    m.next_action_at = None;
    m.dunning_failed_at = None;
    save(&mut tx, &mut m, at).await?;
    let customer = customers::by_id(&mut *tx, merchant_id, m.customer_id)
        .await?
        .ok_or(BillingError::NotFound)?;
    Followups {
        status_changed: true,
        updated: None,
        email: Some(EmailKind::Canceled),
    }
    .record(&mut tx, state, &m, &customer, None, at)
    .await?;
    tx.commit().await?;
    Ok(m)
}

/// Writes a `Pending` attempt for `invoice` against the customer's current card. `None` when
/// the customer has no card.
pub(super) async fn pending_charge(
    tx: &mut Tx,
    m: &Membership,
    invoice: &Invoice,
    kind: ChargeKind,
    at: DateTime<Utc>,
) -> Result<Option<Charge>, BillingError> {
    let Some(card) = payment_methods::current(&mut **tx, m.merchant_id, m.customer_id).await?
    else {
        return Ok(None);
    };
    pending_charge_with(tx, m, invoice, kind, card.id, None, at)
        .await
        .map(Some)
}

/// Writes a `Pending` attempt for `invoice` against the card `payment_method_id` (made on a
/// checkout `page`, or not); a conflict when the membership already has one in flight.
async fn pending_charge_with(
    tx: &mut Tx,
    m: &Membership,
    invoice: &Invoice,
    kind: ChargeKind,
    payment_method_id: i64,
    page: Option<PagePayment>,
    at: DateTime<Utc>,
) -> Result<Charge, BillingError> {
    let attempts = charges::attempts_for_invoice(tx, invoice.id).await?;
    let new = NewCharge {
        page,
        ..new_charge(m, invoice, kind, payment_method_id, attempts)
    };
    charges::insert_pending(tx, new, at)
        .await?
        .ok_or(BillingError::PaymentInProgress)
}

/// The attempt number `prior_attempts + 1` at `invoice` against the card `payment_method_id`;
/// a recurring one carries the sandbox's directive for its ordinal ([`recurring_directive`]).
pub fn new_charge<'a>(
    m: &'a Membership,
    invoice: &'a Invoice,
    kind: ChargeKind,
    payment_method_id: i64,
    prior_attempts: i64,
) -> NewCharge<'a> {
    let directive = kind.is_recurring().then(|| recurring_directive(m));
    NewCharge {
        merchant_id: m.merchant_id,
        membership_id: m.id,
        invoice_id: invoice.id,
        idempotency_key: format!("{}:{}", invoice.invoice_key, prior_attempts + 1),
        kind,
        recurring_ordinal: kind.is_recurring().then_some(m.recurring_attempts),
        directive,
        amount: invoice.amount_due,
        currency: &invoice.currency,
        payment_method_id,
        pending_update: None,
        page: None,
    }
}

/// What the sandbox makes of the membership's latest recurring attempt (its
/// `recurring_attempts`-th): the `chargeEmitterQueue` item of that ordinal, or success past the
/// queue's end and without one (DESIGN §4).
pub fn recurring_directive(m: &Membership) -> &ChargeDirective {
    directive_for(
        m.charge_emitter_queue.as_deref().unwrap_or_default(),
        u64::try_from(m.recurring_attempts).unwrap_or(0),
    )
}

/// Which card pays.
#[derive(Debug, Clone)]
enum PayWith {
    /// The customer's saved payment method (the sandbox pay helper).
    SavedCard,
    /// A card the customer just entered on a checkout page; it becomes the saved payment method
    /// once it has paid.
    Card(i64, PagePayment),
}

/// Charges the first invoice of an Incomplete membership with the customer's saved card (the
/// sandbox pay helper). Declines leave it Incomplete.
pub async fn pay_first(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    pay(state, merchant_id, key, PayWith::SavedCard, false).await
}

/// What a checkout page collects for a membership: the first invoice of an Incomplete one, or
/// the oldest open invoice of a PastDue, Unpaid or Canceled one (pay-now,
/// [`MembershipStatus::pays_open_invoice`]). Declines change nothing; paying a membership that
/// has nothing due is a conflict. `page` says where the customer paid (the notification's
/// `SessionId` and `ClientIP`).
pub async fn pay_checkout(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    card: i64,
    page: PagePayment,
) -> Result<Membership, BillingError> {
    pay(state, merchant_id, key, PayWith::Card(card, page), true).await
}

async fn pay(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    with: PayWith,
    pay_now_allowed: bool,
) -> Result<Membership, BillingError> {
    let at = merchant_now(state, merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let m = memberships::lock(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if charges::in_flight(&mut tx, m.id).await? {
        return Err(BillingError::PaymentInProgress);
    }
    let (invoice, kind) = match m.status {
        MembershipStatus::Incomplete => (first_invoice(&mut tx, &m, at).await?, ChargeKind::First),
        status if pay_now_allowed && status.pays_open_invoice() => {
            let invoice = invoices::oldest_open(&mut *tx, m.id)
                .await?
                .ok_or_else(|| {
                    BillingError::Conflict("the membership has nothing to pay".into())
                })?;
            (invoice, ChargeKind::PayNow)
        }
        status => {
            return Err(BillingError::Conflict(format!(
                "the membership is {status}; it has nothing to pay"
            )))
        }
    };
    let charge = match with {
        PayWith::Card(card, page) => {
            Some(pending_charge_with(&mut tx, &m, &invoice, kind, card, Some(page), at).await?)
        }
        PayWith::SavedCard => pending_charge(&mut tx, &m, &invoice, kind, at).await?,
    }
    .ok_or_else(|| {
        BillingError::Conflict("the customer has no payment method; attach a card first".into())
    })?;
    tx.commit().await?;
    match charging::execute(state, &charge, at).await? {
        Settled::Declined(done) => Err(BillingError::Declined {
            code: done.decline_code.unwrap_or_default(),
            reason: done.decline_reason.unwrap_or_default(),
        }),
        Settled::Approved(_) | Settled::AlreadyRecorded => {
            memberships::get(state.store.pool(), merchant_id, key)
                .await?
                .ok_or(BillingError::NotFound)
        }
    }
}

/// The Open first invoice at the current price, creating it (and voiding a stale one whose
/// price changed since) as needed.
async fn first_invoice(
    tx: &mut Tx,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let plan = period_invoice(&m.subscription_name, m.price(), m.credit_balance);
    let existing = invoices::oldest_open(&mut **tx, m.id).await?;
    if let Some(invoice) = existing {
        if invoice.kind == InvoiceKind::First && invoice.subtotal == plan.subtotal {
            return Ok(invoice);
        }
        invoices::void(tx, invoice.id, at).await?;
    }
    let count = invoices::count_of_kind(tx, m.id, InvoiceKind::First).await?;
    let billing_key = format!("first:{}", count + 1);
    let new = new_invoice(m, InvoiceKind::First, billing_key, None, &plan);
    issue(tx, new, at, "the first invoice changed concurrently; retry").await
}

/// The answer to a first payment: Active with its first period starting now, or still
/// Incomplete.
pub fn first_payment_settled(
    m: &mut Membership,
    invoice: &Invoice,
    approved: bool,
    at: DateTime<Utc>,
) -> Settlement {
    if !approved {
        return Settlement::default();
    }
    let period = period_starting(at, &m.cycle());
    let changed = apply(m, LifecycleEvent::CheckoutPaid);
    if changed {
        m.current_period = period;
        m.credit_balance -= invoice.credit_applied;
        m.next_action_at = next_scheduled_action(m);
    }
    Settlement {
        invoice: Some(InvoiceChange::Paid {
            amount: invoice.amount_due,
            period,
        }),
        membership_changed: changed,
        followups: Followups {
            status_changed: changed,
            updated: None,
            email: Some(EmailKind::Receipt),
        },
    }
}

/// The answer to a pay-now payment of a membership's open invoice. PastDue or Unpaid: paid,
/// Active again, dunning stopped; the calendar resumes where it stood (periods that ended while
/// the membership was Unpaid are skipped, not billed, so the next renewal bills the period in
/// progress). Canceled: the invoice is paid (with a receipt) and the membership stays as it is.
/// A decline changes nothing (dunning goes on as scheduled).
pub fn pay_now_settled(
    m: &mut Membership,
    invoice: &Invoice,
    approved: bool,
    at: DateTime<Utc>,
) -> Settlement {
    if !approved {
        return Settlement::default();
    }
    if !matches!(
        m.status,
        MembershipStatus::PastDue | MembershipStatus::Unpaid
    ) {
        return Settlement {
            invoice: Some(InvoiceChange::paid(invoice.amount_due)),
            membership_changed: false,
            followups: Followups {
                email: Some(EmailKind::Receipt),
                ..Followups::default()
            },
        };
    }
    let changed = apply(m, LifecycleEvent::RetrySucceeded);
    m.dunning_failed_at = None;
    m.dunning_retries = 0;
    if let Some(mut period) = m.current_period {
        while let Some(next) = period_starting(period.end, &m.cycle()) {
            if next.end > at {
                break;
            }
            period = next;
        }
        m.current_period = Some(period);
    }
    m.next_action_at = next_scheduled_action(m);
    Settlement::paid_with_receipt(invoice.amount_due, changed)
}

/// A membership created at the merchant's time `now`: that time, and when it expires if it is
/// still Incomplete then.
pub fn created_at(now: DateTime<Utc>) -> CreatedAt {
    CreatedAt {
        now,
        expires_at: incomplete_expires_at(now).unwrap_or(now),
    }
}
