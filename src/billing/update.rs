//! Changing a membership (`PUT /membership`) with proration (DESIGN §4).
//!
//! A change of price, quantity, interval type or count in the middle of a paid period is
//! prorated. When money is due, the change is written into the `Pending` charge attempt and
//! applied only once the processor approved it: a decline changes nothing. What a change owes
//! back (a downgrade, an interval change's unused time) is a credit note naming the invoice
//! that billed the current period, added to the credit; never a negative invoice. Interval
//! changes restart the period now, invoiced in full, credit first.

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType, Period};
use recur_domain::invoice::InvoicePlan;
use recur_domain::membership::{Proration as Prorated, ScheduledChange};
use recur_domain::money::format_amount;
use recur_domain::status::MembershipStatus;
use recur_domain::tax::TaxRate;
use recur_domain::time::format_utc;
use recur_domain::usage::MeteredTerm;
use serde_json::{Map, Value};

use super::charging::{self, Settled};
use super::credit_notes;
use super::followups::{save, Followups};
use super::invoicing::{issue, new_invoice};
use super::proration::{followups_of, DiscountChange, Target};
use super::{numbering, taxation, BillingError};
use crate::platform::Platform;
use crate::store::charges::{self, Charge, ChargeKind, NewCharge};
use crate::store::coupons;
use crate::store::invoices::{self, Invoice, InvoiceKind};
use crate::store::memberships::{self, Membership};
use crate::store::{payment_methods, to_micros, Tx};

/// The requested changes, validated; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// New `subscriptionName`.
    pub name: Option<String>,
    /// New `endDate`: `Some(None)` removes it (the membership then runs until canceled).
    pub end_date: Option<Option<DateTime<Utc>>>,
    /// New price per unit, in minor units of the membership's currency.
    pub price_per_unit: Option<i64>,
    /// New quantity.
    pub quantity: Option<i64>,
    /// New interval type.
    pub interval_type: Option<IntervalType>,
    /// New interval count.
    pub interval_count: Option<u32>,
    /// New `returnToWebsiteLink`.
    pub return_to_website_link: Option<String>,
    /// New `metadata`.
    pub metadata: Option<String>,
    /// New tax rates (`taxRateIds`, checked): from the next invoice on, without proration.
    pub tax_rates: Option<Vec<TaxRate>>,
    /// The catalog price the new terms come from (`priceId`, whose terms the other fields
    /// carry).
    pub price_key: Option<String>,
    /// When a change of price or cycle applies.
    pub effective: Effective,
    /// A coupon code to redeem and give (`Some(Some)`), or the coupon to remove (`Some(None)`):
    /// from the next period invoice on.
    pub coupon_code: Option<Option<String>>,
    /// New metered prices (`meteredPriceIds`, checked): at once, without proration.
    pub metered: Option<Vec<MeteredTerm>>,
}

/// When a change of a membership's price or cycle applies (`effective`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Effective {
    /// At once, prorated (DESIGN §4).
    #[default]
    Now,
    /// At the next renewal, without proration (`"nextPeriod"`): the record shows it as
    /// `pendingUpdate` until then. An Incomplete membership has no period yet, so it changes at
    /// once.
    NextPeriod,
}

/// The `Updates` keys of the price and the cycle: what a change scheduled for the next period
/// reports when the renewal applies it, not when it is scheduled.
const TERM_KEYS: [&str; 5] = [
    "PricePerUnit",
    "Quantity",
    "IntervalType",
    "IntervalCount",
    "PriceId",
];

/// The proration an update produced.
#[derive(Debug, Clone)]
pub struct Proration {
    /// Signed amount in minor units: positive was charged (credit first), negative credited.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// The charge attempt, when the payment method was charged.
    pub transaction_id: Option<i64>,
}

/// A completed update.
#[derive(Debug, Clone)]
pub struct UpdateOutcome {
    /// The membership after the update.
    pub membership: Membership,
    /// The proration, when price or cycle changed during a paid period.
    pub proration: Option<Proration>,
}

/// Applies `changes` to the membership `key` of `merchant_id`, locked now, prorating as DESIGN
/// §4 says (for callers whose changes need no check against the membership: the portal's
/// price switch, quoted from the same rules).
pub async fn update(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    changes: Changes,
) -> Result<UpdateOutcome, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let m = memberships::lock(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    apply(state, tx, m, changes, at).await
}

/// Applies `changes` to the membership `m`, locked in `tx` (which this commits) by the caller
/// that checked `changes` against it, at `at` (the merchant's time), prorating as DESIGN §4 says.
pub async fn apply(
    state: &Platform,
    mut tx: Tx,
    mut m: Membership,
    changes: Changes,
    at: DateTime<Utc>,
) -> Result<UpdateOutcome, BillingError> {
    let (merchant_id, key) = (m.merchant_id, m.membership_key.clone());
    if !m.state.status.can_update() {
        return Err(BillingError::Conflict(format!(
            "a {} membership cannot be updated",
            m.state.status
        )));
    }
    if charges::in_flight(&mut tx, m.id).await? {
        return Err(BillingError::PaymentInProgress);
    }
    let old_price = m.state.price;
    let old_cycle = m.state.cycle;
    // The caller checked the new price and cycle against the membership under this lock; a
    // refusal here is a rule the caller did not ask, answered as a conflict.
    let mut new_price = old_price
        .updated(changes.price_per_unit, changes.quantity, m.currency())
        .map_err(|e| BillingError::Conflict(format!("the new price {e}")))?;
    let mut new_cycle = match (changes.interval_type, changes.interval_count) {
        (None, None) => old_cycle,
        (interval_type, interval_count) => BillingCycle::new(
            interval_type.unwrap_or(old_cycle.interval_type),
            interval_count.unwrap_or(old_cycle.interval_count),
        )
        .map_err(|e| BillingError::Conflict(format!("the new billing cycle's count {e}")))?,
    };
    let mut updates = changed_keys(&m, &changes);
    let mut price_key = changes.price_key.clone().or_else(|| m.price_key.clone());
    if price_key != m.price_key {
        updates.insert("PriceId".into(), price_key.clone().into());
    }
    let terms_change = new_price != old_price || new_cycle != old_cycle || price_key != m.price_key;
    let scheduled_before = m.state.scheduled.clone();
    if changes.effective == Effective::NextPeriod
        && m.state.status != MembershipStatus::Incomplete
        && terms_change
    {
        m.state.schedule_change(ScheduledChange {
            price: new_price,
            cycle: new_cycle,
            price_key: price_key.clone(),
        });
        for key in TERM_KEYS {
            updates.remove(key);
        }
        (new_price, new_cycle, price_key) = (old_price, old_cycle, m.price_key.clone());
    }
    let scheduled_changed = m.state.scheduled != scheduled_before;
    let discount = match &changes.coupon_code {
        Some(Some(code)) => {
            let redeemed = coupons::redeem(&mut tx, merchant_id, code, &m.currency, at).await?;
            let coupon = redeemed.map_err(|refusal| BillingError::Invalid {
                field: "couponCode",
                message: refusal.message().into(),
            })?;
            updates.insert("CouponCode".into(), coupon.code.clone().into());
            Some(DiscountChange::Set(coupon.discount()))
        }
        Some(None) if m.state.discount.is_some() => {
            updates.insert("CouponCode".into(), Value::Null);
            Some(DiscountChange::Remove)
        }
        _ => None,
    };
    let new_total = new_price.per_period();
    let link_changed = changes.return_to_website_link.is_some()
        && changes.return_to_website_link != m.return_to_website_link;
    // A proration bills the time sold with the rates of until now.
    let taxation = taxation::of(&mut *tx, &m).await?;
    let rates_changed = match changes.tax_rates.as_ref() {
        Some(rates) if *rates != m.tax_rates => {
            m.tax_rates.clone_from(rates);
            memberships::set_tax_rates(&mut tx, &m).await?;
            true
        }
        _ => false,
    };
    let metered_changed = match changes.metered.as_ref() {
        Some(terms) if *terms != m.metered => {
            m.metered.clone_from(terms);
            memberships::set_metered_prices(&mut tx, &m).await?;
            true
        }
        _ => false,
    };
    if updates.is_empty() && !link_changed && !scheduled_changed {
        if rates_changed || metered_changed {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        return Ok(UpdateOutcome {
            membership: m,
            proration: None,
        });
    }
    let mut target = Target {
        version: m.version,
        subscription_name: changes
            .name
            .clone()
            .unwrap_or_else(|| m.subscription_name.clone()),
        metadata: changes.metadata.clone().or_else(|| m.metadata.clone()),
        return_to_website_link: changes
            .return_to_website_link
            .clone()
            .or_else(|| m.return_to_website_link.clone()),
        end_date: changes.end_date.unwrap_or(m.state.end_date).map(to_micros),
        total_amount: new_total,
        price_per_unit: new_price.per_unit,
        quantity: new_price.quantity,
        interval_type: new_cycle.interval_type.as_str().to_string(),
        interval_count: new_cycle.interval_count,
        credit_balance: m.state.credit_balance,
        period: None,
        updates,
        period_discount: m.state.period_discount,
        discount_used: false,
        price_key,
        discount,
        owed_back: None,
    };
    let proration = m
        .state
        .proration(
            &target.subscription_name,
            new_price,
            new_cycle,
            at,
            &taxation,
        )
        .map_err(|_| BillingError::Conflict("the new billing cycle is out of range".into()))?;
    let Some(proration) = proration else {
        // Nothing of the current period was paid at the old terms: the change applies as is.
        target.apply(&mut m)?;
        save(&mut tx, &mut m, at).await?;
        followups_of(&target, None)
            .record_for(&mut tx, state, &m, None, at)
            .await?;
        tx.commit().await?;
        return Ok(UpdateOutcome {
            membership: m,
            proration: None,
        });
    };
    let owed = match &proration.plan.credit {
        Some(credit) => {
            let started = m.state.current_period.map(|p| p.start);
            Some(credit_notes::owed_back(&mut tx, &m, started, credit).await?)
        }
        None => None,
    };
    let Prorated {
        plan,
        new_period,
        invoiced,
        period_discount,
    } = proration;
    target.credit_balance = plan.credit_after;
    target.period_discount = period_discount;
    target.discount_used = new_period.is_some();
    target.period = new_period.map(|p| (to_micros(p.start), to_micros(p.end)));
    let invoice = match &plan.invoice {
        Some(invoice) => Some(proration_invoice(&mut tx, &m, invoice, invoiced, at).await?),
        None => None,
    };
    let invoice = match invoice {
        Some(invoice) if plan.amount_due() > 0 => invoice,
        invoice => {
            // Nothing to charge: the change, its credit note and its invoice (paid by credit)
            // are written now.
            target.apply(&mut m)?;
            save(&mut tx, &mut m, at).await?;
            let credits = match owed {
                Some(owed) => credit_notes::for_balance(&mut tx, owed, at).await?,
                None => Vec::new(),
            };
            Followups {
                credits,
                ..followups_of(&target, None)
            }
            .record_for(&mut tx, state, &m, invoice.as_ref(), at)
            .await?;
            tx.commit().await?;
            let proration = Proration {
                amount: plan.net,
                currency: m.currency.clone(),
                transaction_id: None,
            };
            return Ok(UpdateOutcome {
                membership: m,
                proration: Some(proration),
            });
        }
    };
    target.owed_back = owed;
    let charge = proration_charge(&mut tx, &m, &invoice, &target, at).await?;
    tx.commit().await?;
    let transaction_id = charge.id;
    match charging::execute(state, &charge, at).await? {
        Settled::Declined(done) => Err(BillingError::Declined {
            code: done.decline_code.unwrap_or_default(),
            reason: done.decline_reason.unwrap_or_default(),
        }),
        Settled::Approved(_) | Settled::Scheduled(_) | Settled::AlreadyRecorded => {
            let m = memberships::get(state.store.pool(), merchant_id, &key)
                .await?
                .ok_or(BillingError::NotFound)?;
            if m.state.price.total != new_total || m.state.cycle != new_cycle {
                return Err(BillingError::Conflict(
                    "the membership changed while the proration was charged; the amount was added to its credit".into(),
                ));
            }
            Ok(UpdateOutcome {
                proration: Some(Proration {
                    amount: plan.net,
                    currency: m.currency.clone(),
                    transaction_id: Some(transaction_id),
                }),
                membership: m,
            })
        }
    }
}

/// The `Updates` of a scheduled change the renewal applied to `before`, giving `after`: the
/// price's parts, the cycle and the catalog price (`PriceId`) that differ.
pub(super) fn scheduled_updates(before: &Membership, after: &Membership) -> Map<String, Value> {
    let (price, cycle) = (after.state.price, after.state.cycle);
    let changes = Changes {
        price_per_unit: price.unit_price(),
        quantity: price.units(),
        interval_type: Some(cycle.interval_type),
        interval_count: Some(cycle.interval_count),
        ..Changes::default()
    };
    let mut updates = changed_keys(before, &changes);
    if after.price_key != before.price_key {
        updates.insert("PriceId".into(), after.price_key.clone().into());
    }
    updates
}

/// The spec's `Updates` keys whose values actually change. A part of the price changes when it
/// differs from the membership's, given or implied ([`recur_domain::price`]). A removed
/// `endDate` is `"EndDate": null`.
fn changed_keys(m: &Membership, changes: &Changes) -> Map<String, Value> {
    let currency = m.currency();
    let old_price = m.state.price;
    let mut updates = Map::new();
    if let Some(name) = changes.name.as_ref().filter(|n| **n != m.subscription_name) {
        updates.insert("Name".into(), name.clone().into());
    }
    if let Some(per_unit) = changes
        .price_per_unit
        .filter(|p| old_price.unit_price() != Some(*p))
    {
        updates.insert(
            "PricePerUnit".into(),
            format_amount(per_unit, currency).into(),
        );
    }
    if let Some(quantity) = changes.quantity.filter(|q| old_price.units() != Some(*q)) {
        updates.insert("Quantity".into(), quantity.into());
    }
    if let Some(end) = changes.end_date.filter(|e| *e != m.state.end_date) {
        updates.insert("EndDate".into(), end.map(format_utc).into());
    }
    if let Some(kind) = changes
        .interval_type
        .filter(|t| *t != m.state.cycle.interval_type)
    {
        updates.insert("IntervalType".into(), kind.as_str().into());
    }
    if let Some(count) = changes
        .interval_count
        .filter(|c| *c != m.state.cycle.interval_count)
    {
        updates.insert("IntervalCount".into(), count.into());
    }
    if let Some(metadata) = changes
        .metadata
        .as_ref()
        .filter(|v| Some(*v) != m.metadata.as_ref())
    {
        updates.insert("Metadata".into(), metadata.clone().into());
    }
    updates
}

/// A proration invoice of `plan` over `period` (a price increase's, or an interval change's new
/// period), under the membership's next `proration:<n>` billing key.
async fn proration_invoice(
    tx: &mut Tx,
    m: &Membership,
    plan: &InvoicePlan,
    period: Period,
    at: DateTime<Utc>,
) -> Result<Invoice, BillingError> {
    let count = invoices::count_of_kind(tx, m.id, InvoiceKind::Proration).await?;
    let billing_key = format!("proration:{}", count + 1);
    let new = new_invoice(m, InvoiceKind::Proration, billing_key, Some(period), plan);
    issue(tx, new, at, "the membership changed concurrently; retry").await
}

async fn proration_charge(
    tx: &mut Tx,
    m: &Membership,
    invoice: &Invoice,
    target: &Target,
    at: DateTime<Utc>,
) -> Result<Charge, BillingError> {
    let card = payment_methods::current(&mut **tx, m.merchant_id, m.customer_id)
        .await?
        .ok_or_else(|| {
            BillingError::Conflict("the customer has no payment method to charge".into())
        })?;
    let pending_update =
        serde_json::to_string(target).map_err(|e| BillingError::Internal(e.into()))?;
    let charge = charges::insert_pending(
        tx,
        NewCharge {
            merchant_id: m.merchant_id,
            membership_id: m.id,
            invoice_id: invoice.id,
            idempotency_key: format!("{}:1", invoice.invoice_key),
            kind: ChargeKind::Proration,
            recurring_ordinal: None,
            directive: None,
            amount: invoice.amount_due,
            currency: &invoice.currency,
            payment_method_id: card.id,
            pending_update: Some(pending_update),
            page: None,
        },
        at,
    )
    .await?
    .ok_or(BillingError::PaymentInProgress)?;
    numbering::finalize(tx, &[invoice], at).await?;
    Ok(charge)
}

/// Drops the change scheduled for the membership `key`'s next period, if any: its terms stay.
pub async fn cancel_scheduled(
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = memberships::lock(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(BillingError::NotFound)?;
    if m.state.scheduled.take().is_none() {
        tx.rollback().await?;
        return Ok(m);
    }
    save(&mut tx, &mut m, at).await?;
    tx.commit().await?;
    Ok(m)
}
