//! What a change in the middle of a paid period charges and credits (DESIGN §4): a price change,
//! an interval change, a pause.
//!
//! Credit is never a negative invoice. What a change owes the customer back (a lower price for
//! the time left, the unused time of a period that ends early) is a credit note, added to the
//! membership's credit balance; what it charges (a higher price for the time left, a new
//! period) is an invoice, settled credit first, that credit note's amount included. The two
//! together are worth exactly what one invoice of all the change's lines would have been: the
//! credit note carries the change's taxed net less the invoice's total, so
//! `invoice total − credit = net` to the minor unit.

use chrono::{DateTime, Utc};

use super::{paid_share, rescaled_discount, settle, taxed, Discounted, InvoiceLine, InvoicePlan};
use crate::calendar::{period_starting, BillingCycle, Period};
use crate::coupon::Discount;
use crate::price::Price;
use crate::proration::{prorate, unused_credit};
use crate::tax::Taxation;

/// Money owed back to the customer: a credit note of `amount`, added to the credit balance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditPlan {
    /// Why it is owed (the credit note's reason).
    pub reason: String,
    /// Minor units, taxes included; always positive.
    pub amount: i64,
}

/// What a change credits and charges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangePlan {
    /// What is owed back, credited before the invoice is settled.
    pub credit: Option<CreditPlan>,
    /// What is charged (never a negative total), settled against the credit balance with the
    /// credit above in it; `None` when the change only credits.
    pub invoice: Option<InvoicePlan>,
    /// The signed net: the invoice's total less the credit.
    pub net: i64,
    /// The credit balance held before the change that pays the net.
    pub credit_used: i64,
    /// The membership's credit balance afterwards.
    pub credit_after: i64,
}

impl ChangePlan {
    /// What the payment method must pay now.
    pub fn amount_due(&self) -> i64 {
        self.invoice.as_ref().map_or(0, |plan| plan.amount_due)
    }
}

/// Splits a change into its invoice, of the `charged` lines less `discounted`, and its credit
/// note, for the `credited` line (negative), taxed by `taxation`, against `credit_balance`.
/// No `charged` line: no invoice.
fn split(
    charged: Vec<InvoiceLine>,
    credited: Option<InvoiceLine>,
    discounted: Discounted,
    credit_balance: i64,
    taxation: &Taxation,
) -> ChangePlan {
    let balance = credit_balance.max(0);
    let (_, charged_total) = taxed(&charged, discounted.amount, taxation);
    let mut all = charged.clone();
    all.extend(credited.clone());
    let (_, net) = taxed(&all, discounted.amount, taxation);
    // Taxes never fall as their base grows, so a negative line credits at least its amount.
    let amount = charged_total - net;
    debug_assert!(amount >= 0, "a credited line is negative");
    let credit = credited.filter(|_| amount > 0).map(|line| CreditPlan {
        reason: line.description,
        amount,
    });
    let with_credit = balance.saturating_add(amount.max(0));
    let invoice = (!charged.is_empty()).then(|| settle(charged, discounted, with_credit, taxation));
    let credit_after = invoice
        .as_ref()
        .map_or(with_credit, |plan| plan.credit_after);
    ChangePlan {
        credit,
        invoice,
        net,
        credit_used: (balance - credit_after).max(0),
        credit_after,
    }
}

/// A change of price or quantity in the middle of a paid period: the difference of the paid
/// shares for the time left, `(new' − old') × remaining / period`, rounded half-up once, where
/// `old' = old − period_discount` and `new'` is the new price less the discount rescaled to it
/// ([`rescaled_discount`]). Without a discount that is `(new − old) × remaining / period`. Up
/// (or nothing): an invoice; down: a credit note, taxed as the period was.
pub fn price_change(
    old: Price,
    new: Price,
    period: Period,
    now: DateTime<Utc>,
    period_discount: i64,
    credit_balance: i64,
    taxation: &Taxation,
) -> ChangePlan {
    let new_discount = rescaled_discount(period_discount, old.per_period(), new.per_period());
    let amount = prorate(
        paid_share(old.per_period(), period_discount),
        paid_share(new.per_period(), new_discount),
        period.remaining_seconds(now),
        period.seconds(),
    );
    let (charged, credited) = if amount >= 0 {
        let line = InvoiceLine::new("Price change: remaining time of the current period", amount);
        (vec![line], None)
    } else {
        let line = InvoiceLine::new(
            "Price change: difference for the remaining time of the current \
                period, credited",
            amount,
        );
        (Vec::new(), Some(line))
    };
    split(
        charged,
        credited,
        Discounted::default(),
        credit_balance,
        taxation,
    )
}

/// What is left of a paid period when it ends early at `now` (an interval change, a pause):
/// its paid share (the price less `period_discount`) for the time left, as a negative line
/// described by `description`; `None` when nothing is left.
pub fn unused_time_line(
    description: &str,
    price: Price,
    period: Period,
    now: DateTime<Utc>,
    period_discount: i64,
) -> Option<InvoiceLine> {
    let unused = unused_credit(
        paid_share(price.per_period(), period_discount),
        period.remaining_seconds(now),
        period.seconds(),
    );
    (unused > 0).then(|| InvoiceLine::new(description, -unused))
}

/// The credit of a pause at `now` in a paid `period`: its unused paid time, taxes included (as
/// for a downgrade). `None` when none of the period is left.
pub fn pause_credit(
    price: Price,
    period: Period,
    now: DateTime<Utc>,
    period_discount: i64,
    taxation: &Taxation,
) -> Option<CreditPlan> {
    let line = unused_time_line(
        "Pause: unused time of the current period, credited",
        price,
        period,
        now,
        period_discount,
    )?;
    split(Vec::new(), Some(line), Discounted::default(), 0, taxation).credit
}

/// A change of interval: the old period ends now and its unused paid time is a credit note; the
/// new period starting now is an invoice charged in full, less `discount`'s share of it, credit
/// first (the credit note's included). Returns the plan and the new period.
pub fn interval_change(
    change: &IntervalChange<'_>,
    credit_balance: i64,
    taxation: &Taxation,
) -> Option<(ChangePlan, Period)> {
    let new_period = period_starting(change.now, change.new_cycle)?;
    let charged = vec![InvoiceLine::new(
        format!("{}: new billing cycle", change.name),
        change.new.per_period(),
    )];
    let credited = unused_time_line(
        "Billing cycle change: unused time of the previous billing cycle, credited",
        change.old,
        change.period,
        change.now,
        change.period_discount,
    );
    let discounted = Discounted::of_period(change.discount, change.new.per_period());
    Some((
        split(charged, credited, discounted, credit_balance, taxation),
        new_period,
    ))
}

/// An interval change: what the old period was and what the new one is.
#[derive(Clone, Copy, Debug)]
pub struct IntervalChange<'a> {
    /// The subscription's name, for the new period's line.
    pub name: &'a str,
    /// The price of the period that ends.
    pub old: Price,
    /// What its discount took off it.
    pub period_discount: i64,
    /// The period that ends.
    pub period: Period,
    /// The new price.
    pub new: Price,
    /// The new cycle.
    pub new_cycle: &'a BillingCycle,
    /// The membership's coupon, which discounts the new period.
    pub discount: Option<&'a Discount>,
    /// When the change happens.
    pub now: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tax::{parse_percentage, TaxRate};
    use proptest::prelude::*;

    fn taxation(percentages: &[u32], inclusive: bool) -> Taxation {
        Taxation {
            rates: percentages
                .iter()
                .enumerate()
                .map(|(i, p)| TaxRate {
                    tax_rate_id: format!("txr_{i}"),
                    name: format!("Tax {i}"),
                    percentage: parse_percentage(&format!("{p}.5")).unwrap(),
                    inclusive,
                    country: None,
                })
                .collect(),
            reverse_charge: false,
        }
    }

    fn line(amount: i64) -> InvoiceLine {
        InvoiceLine::new("line", amount)
    }

    proptest! {
        /// A change's invoice is never negative; its credit note is positive, at least the
        /// credited line; and the two conserve the money: `invoice total − credit` is what one
        /// invoice of all the lines would have totalled, and the balance moves by exactly that,
        /// the card paying what credit does not.
        #[test]
        fn a_split_conserves_the_money(
            charged in proptest::collection::vec(0i64..1_000_000, 0..3),
            credited in proptest::option::of(1i64..2_000_000),
            off in 0u32..=100,
            credit_balance in 0i64..3_000_000,
            rates in proptest::collection::vec(0u32..30, 0..3),
            inclusive in any::<bool>(),
        ) {
            let taxation = taxation(&rates, inclusive);
            let charged: Vec<InvoiceLine> = charged.into_iter().map(line).collect();
            let sum: i64 = charged.iter().map(|l| l.amount).sum();
            let discount = sum * i64::from(off) / 100;
            let discounted = Discounted { amount: discount, coupon: None };
            let credited = credited.map(|amount| line(-amount));
            let mut all = charged.clone();
            all.extend(credited.clone());
            let (_, one_invoice) = taxed(&all, discount, &taxation);
            let plan = split(charged.clone(), credited.clone(), discounted, credit_balance, &taxation);

            let invoice_total = plan.invoice.as_ref().map_or(0, |i| i.total);
            let credit = plan.credit.as_ref().map_or(0, |c| c.amount);
            prop_assert!(invoice_total >= 0);
            prop_assert_eq!(plan.invoice.is_some(), !charged.is_empty());
            prop_assert_eq!(plan.credit.is_some(), credited.is_some());
            if let Some(line) = &credited {
                prop_assert!(credit >= -line.amount);
            }
            prop_assert_eq!(invoice_total - credit, one_invoice);
            prop_assert_eq!(plan.net, one_invoice);
            prop_assert!(plan.credit_after >= 0);
            prop_assert_eq!(plan.credit_after - credit_balance, plan.amount_due() - plan.net);
            prop_assert_eq!(plan.amount_due(), (plan.net - credit_balance).max(0));
            prop_assert_eq!(plan.credit_used, plan.net.clamp(0, credit_balance));
        }
    }
}
