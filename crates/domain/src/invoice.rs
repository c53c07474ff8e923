//! What an invoice says: its lines, and how the membership's credit settles it (DESIGN §4).
//!
//! Every invoice is a list of lines whose sum is the `subtotal`. A coupon's discount
//! ([`crate::coupon`]) is taken off the line of the period it bills; taxes apply after the
//! discount ([`crate::tax`]): `total = subtotal − discount + exclusive taxes` (inclusive taxes are
//! contained). The total is never negative: it is settled with credit first and the rest is due
//! from the payment method; credit used is its own line. Money owed back to the customer (a
//! downgrade, unused time) is never a negative invoice but a credit note ([`change`]).
//!
//! Time already paid is valued at what its period was billed after its discount (the period's
//! *paid share*): a price change in a discounted period is charged or credited in the same
//! proportion, and unused time that becomes credit (an interval change, a pause) is credited at
//! what was paid for it, never at the list price.

use serde::{Deserialize, Serialize};

use crate::coupon::{AppliedCoupon, Discount};
use crate::price::Price;
use crate::proration::apply_credit;
use crate::tax::{InvoiceTax, Taxation};

mod change;

pub use change::{
    interval_change, pause_credit, price_change, unused_time_line, ChangePlan, CreditPlan,
    IntervalChange,
};

/// One line of an invoice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLine {
    /// What the line is for.
    pub description: String,
    /// Signed amount in minor units; credit lines are negative.
    pub amount: i64,
    /// The metered usage it bills, for a usage line (DESIGN §19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<LineUsage>,
}

impl InvoiceLine {
    /// A line of `amount` for `description`, billing no usage.
    pub fn new(description: impl Into<String>, amount: i64) -> Self {
        Self {
            description: description.into(),
            amount,
            usage: None,
        }
    }
}

/// What a usage line bills: a meter's quantity over the period it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineUsage {
    /// The meter's code.
    pub meter_code: String,
    /// The quantity its aggregation came to.
    pub quantity: rust_decimal::Decimal,
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
    /// The share of `discount` the period's fixed price bore (the whole discount but for usage
    /// lines): what prices the period's unused time.
    pub period_discount: i64,
    /// The coupon the discount came from, when there is one.
    pub coupon: Option<AppliedCoupon>,
    /// Each applying rate's tax, in the membership's order.
    pub taxes: Vec<InvoiceTax>,
    /// `subtotal − discount + exclusive taxes`: what credit and the card settle; never negative.
    pub total: i64,
    /// EU rates were skipped: the customer accounts for the VAT.
    pub reverse_charge: bool,
    /// Credit consumed by this invoice.
    pub credit_applied: i64,
    /// What the payment method must pay; 0 when credit covers it all.
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

/// `lines` less `discount`, taxed by `taxation`: the taxes and the total
/// (`subtotal − discount + exclusive taxes`).
fn taxed(lines: &[InvoiceLine], discount: i64, taxation: &Taxation) -> (Vec<InvoiceTax>, i64) {
    let subtotal: i64 = lines.iter().map(|l| l.amount).sum();
    let base = subtotal - discount;
    let taxes = taxation.taxes(base);
    let added: i64 = taxes
        .iter()
        .filter(|t| !t.inclusive)
        .map(|t| t.amount)
        .sum();
    (taxes, base + added)
}

/// Settles `lines`, less `discounted`, taxed by `taxation`, against `credit_balance`: credit
/// first, the rest due. The lines less the discount are never negative (a period's price, a
/// price increase: what a change credits is a [`CreditPlan`]), so neither is the total.
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
    let (taxes, total) = taxed(&lines, discount, taxation);
    debug_assert!(total >= 0, "an invoice is never negative (DESIGN §4)");
    let settlement = apply_credit(total, credit_balance);
    if settlement.credit_used > 0 {
        lines.push(InvoiceLine::new(CREDIT_LINE, -settlement.credit_used));
    }
    InvoicePlan {
        lines,
        subtotal,
        discount,
        period_discount: discount,
        coupon,
        taxes,
        total,
        reverse_charge: taxation.reverse_charge,
        credit_applied: settlement.credit_used,
        amount_due: settlement.charged,
        credit_after: settlement.credit_left,
    }
}

/// The paid share of a period billed `price` per period with `period_discount` taken off: the
/// price less the discount, at least 0.
pub(crate) fn paid_share(price: i64, period_discount: i64) -> i64 {
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
    period_invoice_with_usage(name, price, Vec::new(), discount, credit_balance, taxation)
}

/// The invoice of one billing period of a plan in advance, with `usage` lines billing the
/// period that ended in arrears (DESIGN §19). The coupon's discount applies to all the lines
/// as to one amount; the share the fixed price bears alone (the discount of the period line
/// on its own) is the plan's `period_discount`.
pub fn period_invoice_with_usage(
    name: &str,
    price: Price,
    usage: Vec<InvoiceLine>,
    discount: Option<&Discount>,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let description = match price.units() {
        Some(units) if units != 1 => format!("{name} × {units}"),
        _ => name.to_string(),
    };
    let fixed = price.per_period();
    let used: i64 = usage.iter().map(|l| l.amount).sum();
    let mut lines = Vec::with_capacity(usage.len() + 2);
    lines.push(InvoiceLine::new(description, fixed));
    lines.extend(usage);
    let discounted = Discounted::of_period(discount, fixed.saturating_add(used));
    let period_discount = Discounted::of_period(discount, fixed)
        .amount
        .min(discounted.amount);
    let mut plan = settle(lines, discounted, credit_balance, taxation);
    plan.period_discount = period_discount;
    plan
}

/// An invoice of `usage` lines alone, in arrears (a membership's final invoice, DESIGN §19):
/// the coupon's discount applies to them as to one amount, taxes after it, credit first.
pub fn usage_invoice(
    usage: Vec<InvoiceLine>,
    discount: Option<&Discount>,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let used: i64 = usage.iter().map(|l| l.amount).sum();
    let discounted = Discounted::of_period(discount, used);
    let mut plan = settle(usage, discounted, credit_balance, taxation);
    plan.period_discount = 0;
    plan
}

#[cfg(test)]
mod tests;
