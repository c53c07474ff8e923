//! What an invoice says: its lines, and how the membership's credit settles it (DESIGN §4).
//!
//! Every invoice is a list of lines whose sum is the `subtotal`. A coupon's discount
//! ([`crate::coupon`]) is taken off the line of the period it bills; taxes apply after the
//! discount ([`crate::tax`]): `total = subtotal − discount + exclusive taxes` (inclusive taxes are
//! contained). A positive total is settled with credit first and the rest is due from the
//! payment method; a negative total (a downgrade) is added to the credit and nothing is due.
//! Credit used is its own line.
//!
//! Time already paid is valued at what its period was billed after its discount (the period's
//! *paid share*): a price change in a discounted period is charged or credited in the same
//! proportion, and unused time that becomes credit (an interval change, a pause) is credited at
//! what was paid for it, never at the list price.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar::{period_starting, BillingCycle, Period};
use crate::coupon::{AppliedCoupon, Discount};
use crate::price::Price;
use crate::proration::{apply_credit, prorate, unused_credit};
use crate::tax::{InvoiceTax, Taxation};

/// One line of an invoice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLine {
    /// What the line is for.
    pub description: String,
    /// Signed amount in minor units; credit lines are negative.
    pub amount: i64,
}

/// An invoice's amounts, settled against the membership's credit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoicePlan {
    /// The lines, the credit line (if any) last.
    pub lines: Vec<InvoiceLine>,
    /// Sum of the lines before credit.
    pub subtotal: i64,
    /// Taken off the subtotal before taxes by a coupon.
    pub discount: i64,
    /// The coupon the discount came from, when there is one.
    pub coupon: Option<AppliedCoupon>,
    /// Each applying rate's tax, in the membership's order.
    pub taxes: Vec<InvoiceTax>,
    /// `subtotal − discount + exclusive taxes`: what credit and the card settle.
    pub total: i64,
    /// EU rates were skipped: the customer accounts for the VAT.
    pub reverse_charge: bool,
    /// Credit consumed by this invoice.
    pub credit_applied: i64,
    /// What the payment method must pay; 0 when credit covers it all or the subtotal is negative.
    pub amount_due: i64,
    /// The membership's credit balance after this invoice.
    pub credit_after: i64,
}

/// Description of the credit line.
pub const CREDIT_LINE: &str = "Credit applied";

/// What a coupon takes off an invoice: an amount and the coupon it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discounted {
    /// Minor units taken off the subtotal, never more than the line it discounts.
    pub amount: i64,
    /// The coupon; `None` when nothing is taken off.
    pub coupon: Option<AppliedCoupon>,
}

impl Discounted {
    /// What `discount` (if any) takes off a period line of `amount`.
    pub fn of_period(discount: Option<&Discount>, amount: i64) -> Self {
        match discount.map(|d| (d.off(amount), d)) {
            Some((off, d)) if off > 0 => Discounted {
                amount: off,
                coupon: Some(d.coupon.clone()),
            },
            _ => Discounted::default(),
        }
    }
}

/// Settles `lines`, less `discounted`, taxed by `taxation`, against `credit_balance`: credit
/// first, the rest due; a negative total becomes credit.
pub fn settle(
    mut lines: Vec<InvoiceLine>,
    discounted: Discounted,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let subtotal: i64 = lines.iter().map(|l| l.amount).sum();
    let Discounted {
        amount: discount,
        coupon,
    } = discounted;
    let base = subtotal - discount;
    let taxes = taxation.taxes(base);
    let added: i64 = taxes
        .iter()
        .filter(|t| !t.inclusive)
        .map(|t| t.amount)
        .sum();
    let total = base + added;
    let reverse_charge = taxation.reverse_charge;
    if total < 0 {
        return InvoicePlan {
            lines,
            subtotal,
            discount,
            coupon,
            taxes,
            total,
            reverse_charge,
            credit_applied: 0,
            amount_due: 0,
            credit_after: credit_balance.max(0).saturating_add(-total),
        };
    }
    let settlement = apply_credit(total, credit_balance);
    if settlement.credit_used > 0 {
        lines.push(InvoiceLine {
            description: CREDIT_LINE.into(),
            amount: -settlement.credit_used,
        });
    }
    InvoicePlan {
        lines,
        subtotal,
        discount,
        coupon,
        taxes,
        total,
        reverse_charge,
        credit_applied: settlement.credit_used,
        amount_due: settlement.charged,
        credit_after: settlement.credit_left,
    }
}

/// The paid share of a period billed `price` per period with `period_discount` taken off: the
/// price less the discount, at least 0.
fn paid_share(price: i64, period_discount: i64) -> i64 {
    (price - period_discount.clamp(0, price.max(0))).max(0)
}

/// The discount of a period at `new_price` in the proportion `period_discount` bore to
/// `old_price`: `round(period_discount × new / old)`, half away from zero, at most `new_price`.
pub fn rescaled_discount(period_discount: i64, old_price: i64, new_price: i64) -> i64 {
    if period_discount <= 0 || old_price <= 0 || new_price <= 0 {
        return 0;
    }
    let numerator = i128::from(period_discount) * i128::from(new_price);
    let old = i128::from(old_price);
    let scaled = (2 * numerator + old) / (2 * old);
    i64::try_from(scaled).unwrap_or(i64::MAX).min(new_price)
}

/// The invoice of one billing period of a plan, less `discount`'s share of it.
pub fn period_invoice(
    name: &str,
    price: Price,
    discount: Option<&Discount>,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let description = match price.units() {
        Some(units) if units != 1 => format!("{name} × {units}"),
        _ => name.to_string(),
    };
    settle(
        vec![InvoiceLine {
            description,
            amount: price.per_period(),
        }],
        Discounted::of_period(discount, price.per_period()),
        credit_balance,
        taxation,
    )
}

/// A change of price or quantity in the middle of a paid period: the difference of the paid
/// shares for the time left, `(new' − old') × remaining / period`, rounded half-up once, where
/// `old' = old − period_discount` and `new'` is the new price less the discount rescaled to it
/// ([`rescaled_discount`]). Without a discount that is `(new − old) × remaining / period`.
pub fn price_change_invoice(
    old: Price,
    new: Price,
    period: Period,
    now: DateTime<Utc>,
    period_discount: i64,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let new_discount = rescaled_discount(period_discount, old.per_period(), new.per_period());
    let amount = prorate(
        paid_share(old.per_period(), period_discount),
        paid_share(new.per_period(), new_discount),
        period.remaining_seconds(now),
        period.seconds(),
    );
    let description = if amount >= 0 {
        "Price change: remaining time of the current period"
    } else {
        "Price change: unused time of the current period, credited"
    };
    settle(
        vec![InvoiceLine {
            description: description.into(),
            amount,
        }],
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
    (unused > 0).then(|| InvoiceLine {
        description: description.into(),
        amount: -unused,
    })
}

/// The invoice of a pause at `now` in a paid `period`: its unused paid time credited (taxes
/// included, as for a downgrade). `None` when none of the period is left.
pub fn pause_invoice(
    price: Price,
    period: Period,
    now: DateTime<Utc>,
    period_discount: i64,
    credit_balance: i64,
    taxation: &Taxation,
) -> Option<InvoicePlan> {
    let line = unused_time_line(
        "Unused time until the pause, credited",
        price,
        period,
        now,
        period_discount,
    )?;
    Some(settle(
        vec![line],
        Discounted::default(),
        credit_balance,
        taxation,
    ))
}

/// A change of interval: the old period ends now, its unused paid time is credited, and the new
/// period starting now is charged in full, less `discount`'s share of it (minus credit).
/// Returns the plan and the new period.
pub fn interval_change_invoice(
    change: &IntervalChange<'_>,
    credit_balance: i64,
    taxation: &Taxation,
) -> Option<(InvoicePlan, Period)> {
    let new_period = period_starting(change.now, change.new_cycle)?;
    let mut lines = vec![InvoiceLine {
        description: format!("{}: new billing cycle", change.name),
        amount: change.new.per_period(),
    }];
    lines.extend(unused_time_line(
        "Unused time of the previous billing cycle",
        change.old,
        change.period,
        change.now,
        change.period_discount,
    ));
    let discounted = Discounted::of_period(change.discount, change.new.per_period());
    Some((
        settle(lines, discounted, credit_balance, taxation),
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
mod tests;
