//! Changing a membership's terms (`PUT /membership`, DESIGN §4): which changes are prorated,
//! the proration's invoice, and the terms once applied.
//!
//! A change of price or cycle in the middle of a paid period is prorated: a price change
//! charges or credits the difference for the time left; an interval change credits the unused
//! time and starts a new period now, charged in full (credit first). What is credited is a
//! credit note, never a negative invoice ([`crate::invoice::ChangePlan`]). Any other change
//! applies as it is. A change may instead be
//! scheduled for the next period ([`ScheduledChange`]): the renewal then applies it, with no
//! proration.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::MembershipState;
use crate::calendar::{BillingCycle, Period};
use crate::invoice::{
    interval_change, price_change, rescaled_discount, ChangePlan, IntervalChange,
};
use crate::price::Price;
use crate::status::MembershipStatus;
use crate::tax::Taxation;

/// Terms a membership's next renewal applies (`PUT /membership` with
/// `"effective": "nextPeriod"`): its price and cycle from then on, and the catalog price they
/// come from, if any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledChange {
    /// The price from the next period on.
    pub price: Price,
    /// The billing cycle from the next period on.
    pub cycle: BillingCycle,
    /// The catalog price (`price_…`) the terms come from; `None` for inline terms.
    pub price_key: Option<String>,
}

/// The terms of a membership that an update changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    /// The new price.
    pub price: Price,
    /// The new billing cycle.
    pub cycle: BillingCycle,
    /// The new `endDate`.
    pub end_date: Option<DateTime<Utc>>,
    /// The credit once the proration (if any) is settled.
    pub credit_balance: i64,
    /// The period that starts with the change (an interval change); `None` keeps the current
    /// one.
    pub period: Option<Period>,
    /// What a coupon took off the current period once the change applies.
    pub period_discount: i64,
    /// The change started a new period whose invoice used a cycle of the coupon.
    pub discount_used: bool,
}

/// The proration of a change in the middle of a paid period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proration {
    /// What the change credits (a credit note) and charges (an invoice), settled against the
    /// credit.
    pub plan: ChangePlan,
    /// The period an interval change starts; `None` for a change of price alone.
    pub new_period: Option<Period>,
    /// The period the change bills: the new period, or the rest of the current one.
    pub invoiced: Period,
    /// What a coupon takes off the current period once the change applies: the period's
    /// discount rescaled to the new price, or the new period's discount.
    pub period_discount: i64,
}

/// The new cycle's first period lies beyond the dates the calendar can represent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleOutOfRange;

impl MembershipState {
    /// The proration of changing to `price` and `cycle` at `at`, taxed by `taxation` (the
    /// rates the membership billed with until now); `name` (the subscription's, as updated)
    /// describes an interval change's line. `None` when no paid time is at stake:
    /// the membership is not Active in a period, or neither its price per period nor its cycle
    /// changes.
    pub fn proration(
        &self,
        name: &str,
        price: Price,
        cycle: BillingCycle,
        at: DateTime<Utc>,
        taxation: &Taxation,
    ) -> Result<Option<Proration>, CycleOutOfRange> {
        let price_changed = price.per_period() != self.price.per_period();
        let cycle_changed = cycle != self.cycle;
        let period = match (self.status, self.current_period) {
            (MembershipStatus::Active, Some(period)) if price_changed || cycle_changed => period,
            _ => return Ok(None),
        };
        if !cycle_changed {
            return Ok(Some(Proration {
                plan: price_change(
                    self.price,
                    price,
                    period,
                    at,
                    self.period_discount,
                    self.credit_balance,
                    taxation,
                ),
                new_period: None,
                invoiced: Period {
                    start: at,
                    end: period.end,
                },
                period_discount: rescaled_discount(
                    self.period_discount,
                    self.price.per_period(),
                    price.per_period(),
                ),
            }));
        }
        let change = IntervalChange {
            name,
            old: self.price,
            period_discount: self.period_discount,
            period,
            new: price,
            new_cycle: &cycle,
            discount: self.discount.as_ref(),
            now: at,
        };
        let (plan, new_period) =
            interval_change(&change, self.credit_balance, taxation).ok_or(CycleOutOfRange)?;
        Ok(Some(Proration {
            period_discount: plan.invoice.as_ref().map_or(0, |invoice| invoice.discount),
            plan,
            new_period: Some(new_period),
            invoiced: new_period,
        }))
    }

    /// Applies new terms and reschedules the next action ([`Self::reschedule`]). A new price or
    /// cycle replaces a change scheduled for the next period.
    pub fn change_terms(&mut self, terms: Terms) {
        if terms.price != self.price || terms.cycle != self.cycle {
            self.scheduled = None;
        }
        self.price = terms.price;
        self.cycle = terms.cycle;
        self.end_date = terms.end_date;
        self.credit_balance = terms.credit_balance;
        self.period_discount = terms.period_discount;
        if terms.discount_used {
            self.discount = self.discount.take().and_then(|d| d.used());
        }
        if let Some(period) = terms.period {
            self.current_period = Some(period);
        }
        self.reschedule();
    }

    /// Schedules `change` for the next renewal, replacing one scheduled before; a change to the
    /// terms the membership has already removes the scheduled one.
    pub fn schedule_change(&mut self, change: ScheduledChange) {
        let same = change.price == self.price && change.cycle == self.cycle;
        self.scheduled = (!same).then_some(change);
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{active_state, any_cycle, any_price, any_state};
    use super::*;
    use crate::tax::Taxation;
    use chrono::TimeDelta;
    use proptest::prelude::*;

    proptest! {
        /// Only an Active membership in a period whose price or cycle changes is prorated; an
        /// interval change starts its period at the change, a price change bills the rest of
        /// the current period; the credit never goes negative.
        #[test]
        fn prorations_bill_what_is_left_and_never_overdraw_credit(
            m in any_state(),
            price in any_price(),
            cycle in any_cycle(),
            offset in 0.0f64..1.0,
        ) {
            let at = m.current_period.map_or(DateTime::<Utc>::UNIX_EPOCH, |p| {
                p.start + TimeDelta::seconds((p.seconds() as f64 * offset) as i64)
            });
            let Ok(proration) = m.proration("Gold", price, cycle, at, &Taxation::none()) else {
                return Ok(());
            };
            let changes = price.per_period() != m.price.per_period() || cycle != m.cycle;
            let prorated = m.status == MembershipStatus::Active && m.current_period.is_some() && changes;
            prop_assert_eq!(proration.is_some(), prorated);
            let Some(proration) = proration else { return Ok(()) };
            let current = m.current_period.unwrap();
            let plan = &proration.plan;
            prop_assert!(plan.credit_after >= 0);
            prop_assert!(plan.amount_due() >= 0);
            // Credit is never a negative invoice: an invoice, if any, totals at least 0, and
            // the balance moves by the net less what the card pays.
            prop_assert!(plan.invoice.as_ref().is_none_or(|invoice| invoice.total >= 0));
            prop_assert!(plan.credit.as_ref().is_none_or(|credit| credit.amount > 0));
            prop_assert_eq!(plan.credit_after - m.credit_balance, plan.amount_due() - plan.net);
            match proration.new_period {
                Some(new) => {
                    prop_assert!(cycle != m.cycle);
                    prop_assert_eq!(new.start, at);
                    prop_assert_eq!(proration.invoiced, new);
                    // The new period is always invoiced, in full.
                    prop_assert!(plan.invoice.is_some());
                }
                None => {
                    prop_assert_eq!(proration.invoiced.start, at);
                    prop_assert_eq!(proration.invoiced.end, current.end);
                }
            }
        }

        /// New terms leave an Active membership scheduled no later than its new `endDate`, and
        /// an interval change moves its period to the new one.
        #[test]
        fn new_terms_reschedule_within_the_end_date(
            mut m in active_state(),
            price in any_price(),
            cycle in any_cycle(),
            end_days in proptest::option::of(1i64..4000),
        ) {
            let current = m.current_period.unwrap();
            let end_date = end_days.map(|days| current.start + TimeDelta::days(days));
            let period = crate::calendar::period_starting(current.start, &cycle);
            m.change_terms(Terms { price, cycle, end_date, credit_balance: 0, period, period_discount: 0, discount_used: false });
            prop_assert_eq!(m.current_period, period.or(Some(current)));
            let next = m.next_action_at.expect("an Active membership in a period is scheduled");
            prop_assert!(end_date.is_none_or(|end| next <= end));
            prop_assert!(next <= m.current_period.unwrap().end);
        }
    }
}
