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
mod tests {
    use super::*;
    use crate::calendar::IntervalType;
    use crate::coupon::{CouponDuration, CouponOff};
    use crate::tax::{parse_percentage, TaxRate};
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn none() -> Taxation {
        Taxation::none()
    }

    fn taxed(rates: &[(&str, bool)]) -> Taxation {
        Taxation {
            rates: rates
                .iter()
                .enumerate()
                .map(|(i, (p, inclusive))| TaxRate {
                    tax_rate_id: format!("txr_{i}"),
                    name: format!("Tax {i}"),
                    percentage: parse_percentage(p).unwrap(),
                    inclusive: *inclusive,
                    country: None,
                })
                .collect(),
            reverse_charge: false,
        }
    }

    #[test]
    fn exclusive_taxes_are_added_and_credit_settles_the_total() {
        let plan = period_invoice(
            "Gold",
            price(1000, 1),
            None,
            300,
            &taxed(&[("19", false), ("7", false)]),
        );
        assert_eq!(plan.subtotal, 1000);
        assert_eq!(
            plan.taxes.iter().map(|t| t.amount).collect::<Vec<_>>(),
            [190, 70]
        );
        assert_eq!(plan.total, 1260);
        assert_eq!(plan.credit_applied, 300);
        assert_eq!(plan.amount_due, 960);
    }

    #[test]
    fn inclusive_taxes_are_contained() {
        let plan = period_invoice("Gold", price(1190, 1), None, 0, &taxed(&[("19", true)]));
        assert_eq!(plan.taxes[0].amount, 190);
        assert_eq!(plan.total, 1190);
        assert_eq!(plan.amount_due, 1190);
    }

    #[test]
    fn a_taxed_downgrade_credits_its_total() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let plan = price_change_invoice(
            price(2000, 1),
            price(1000, 1),
            period(),
            now,
            0,
            0,
            &taxed(&[("10", false)]),
        );
        assert_eq!(plan.subtotal, -500);
        assert_eq!(plan.taxes[0].amount, -50);
        assert_eq!(plan.total, -550);
        assert_eq!(plan.credit_after, 550);
    }

    fn price(per_unit: i64, quantity: i64) -> Price {
        Price {
            total: per_unit * quantity,
            per_unit: Some(per_unit),
            quantity: Some(quantity),
        }
    }

    fn period() -> Period {
        Period {
            start: Utc.with_ymd_and_hms(2026, 4, 1, 0, 0, 0).unwrap(),
            end: Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap(),
        }
    }

    #[test]
    fn credit_covers_a_whole_period() {
        let plan = period_invoice("Gold", price(1000, 1), None, 2500, &none());
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.credit_applied, 1000);
        assert_eq!(plan.credit_after, 1500);
        assert_eq!(plan.lines.last().unwrap().description, CREDIT_LINE);
        assert_eq!(plan.lines.iter().map(|l| l.amount).sum::<i64>(), 0);
    }

    #[test]
    fn partial_credit() {
        let plan = period_invoice("Gold", price(1000, 2), None, 300, &none());
        assert_eq!(plan.subtotal, 2000);
        assert_eq!(plan.amount_due, 1700);
        assert_eq!(plan.credit_after, 0);
        assert_eq!(plan.lines[0].description, "Gold × 2");
    }

    #[test]
    fn upgrade_half_way_charges_half_the_difference() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let plan =
            price_change_invoice(price(1000, 1), price(2000, 1), period(), now, 0, 0, &none());
        assert_eq!(plan.amount_due, 500);
    }

    #[test]
    fn downgrade_becomes_credit() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let plan = price_change_invoice(
            price(2000, 1),
            price(1000, 1),
            period(),
            now,
            0,
            100,
            &none(),
        );
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.subtotal, -500);
        assert_eq!(plan.credit_after, 600);
    }

    #[test]
    fn interval_change_credits_unused_time() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
        let (plan, new_period) = interval_change_invoice(
            &IntervalChange {
                name: "Gold",
                old: price(3000, 1),
                period_discount: 0,
                period: period(),
                new: price(800, 1),
                new_cycle: &weekly,
                discount: None,
                now,
            },
            0,
            &none(),
        )
        .unwrap();
        assert_eq!(new_period.start, now);
        assert_eq!(new_period.seconds(), 7 * 86_400);
        // 15 of 30 days unused: 1500 credit against 800 due leaves 700 credit.
        assert_eq!(plan.subtotal, -700);
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.credit_after, 700);
    }

    fn coupon(off: CouponOff, duration: CouponDuration) -> Discount {
        Discount::new(
            AppliedCoupon {
                coupon_id: "cpn_1".into(),
                code: "SPRING".into(),
                off,
            },
            duration,
        )
    }

    #[test]
    fn taxes_apply_after_the_discount() {
        let twenty = coupon(
            CouponOff::PercentOff(rust_decimal::Decimal::new(20, 0)),
            CouponDuration::Once,
        );
        let plan = period_invoice(
            "Gold",
            price(1000, 1),
            Some(&twenty),
            0,
            &taxed(&[("19", false)]),
        );
        assert_eq!(plan.subtotal, 1000);
        assert_eq!(plan.discount, 200);
        assert_eq!(plan.coupon.as_ref().unwrap().code, "SPRING");
        assert_eq!(plan.taxes[0].amount, 152);
        assert_eq!(plan.total, 952);
        assert_eq!(plan.amount_due, 952);
        let inclusive = period_invoice(
            "Gold",
            price(1190, 1),
            Some(&twenty),
            0,
            &taxed(&[("19", true)]),
        );
        assert_eq!(inclusive.discount, 238);
        assert_eq!(inclusive.total, 952);
        assert_eq!(inclusive.taxes[0].amount, 152);
    }

    /// The worked example of docs/billing.md ("Coupons and discounts").
    #[test]
    fn the_documented_coupon_example() {
        let twenty = coupon(
            CouponOff::PercentOff(rust_decimal::Decimal::new(20, 0)),
            CouponDuration::Forever,
        );
        let vat = taxed(&[("19", false)]);
        let first = period_invoice("Gold", price(5000, 1), Some(&twenty), 0, &vat);
        assert_eq!((first.subtotal, first.discount), (5000, 1000));
        assert_eq!((first.taxes[0].amount, first.total), (760, 4760));
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let upgrade =
            price_change_invoice(price(5000, 1), price(8000, 1), period(), now, 1000, 0, &vat);
        assert_eq!((upgrade.subtotal, upgrade.discount), (1200, 0));
        assert_eq!((upgrade.taxes[0].amount, upgrade.total), (228, 1428));
    }

    #[test]
    fn an_amount_off_never_makes_a_period_negative() {
        let big = coupon(CouponOff::AmountOff(5000), CouponDuration::Forever);
        let plan = period_invoice("Gold", price(999, 1), Some(&big), 100, &none());
        assert_eq!(plan.discount, 999);
        assert_eq!(plan.total, 0);
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.credit_applied, 0);
        assert_eq!(plan.credit_after, 100);
    }

    #[test]
    fn a_discounted_period_is_changed_and_credited_at_its_paid_share() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        // 2000 a period, half of it discounted: an upgrade to 4000 charges half the difference
        // for the half period left.
        let up = price_change_invoice(
            price(2000, 1),
            price(4000, 1),
            period(),
            now,
            1000,
            0,
            &none(),
        );
        assert_eq!(up.subtotal, 500);
        assert_eq!(rescaled_discount(1000, 2000, 4000), 2000);
        // A free period credits nothing when it ends early.
        assert_eq!(
            pause_invoice(price(2000, 1), period(), now, 2000, 0, &none()),
            None
        );
        let paused = pause_invoice(price(2000, 1), period(), now, 500, 0, &none()).unwrap();
        assert_eq!(paused.subtotal, -750);
        assert_eq!(paused.credit_after, 750);
    }

    #[test]
    fn an_interval_change_discounts_the_new_period_only() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
        let half = coupon(
            CouponOff::PercentOff(rust_decimal::Decimal::new(50, 0)),
            CouponDuration::Forever,
        );
        let (plan, _) = interval_change_invoice(
            &IntervalChange {
                name: "Gold",
                old: price(3000, 1),
                period_discount: 1500,
                period: period(),
                new: price(1000, 1),
                new_cycle: &weekly,
                discount: Some(&half),
                now,
            },
            0,
            &none(),
        )
        .unwrap();
        // New week 1000 − 500 discount; unused: half of the 1500 paid.
        assert_eq!(plan.subtotal, 1000 - 750);
        assert_eq!(plan.discount, 500);
        assert_eq!(plan.total, -250);
        assert_eq!(plan.credit_after, 250);
    }

    proptest! {
        /// Ending a period early never credits more than was paid for it.
        #[test]
        fn unused_time_is_at_most_what_was_paid(
            total in 1i64..10_000_000,
            share in 0u32..=100,
            offset in 0i64..=30 * 86_400,
        ) {
            let period_discount = total * i64::from(share) / 100;
            let now = period().start + chrono::TimeDelta::seconds(offset);
            if let Some(plan) = pause_invoice(price(total, 1), period(), now, period_discount, 0, &none()) {
                prop_assert!(-plan.subtotal <= total - period_discount);
                prop_assert!(plan.subtotal < 0);
            }
        }

        /// Rescaling keeps the discount's share of the price and never exceeds the new price.
        #[test]
        fn a_rescaled_discount_keeps_its_share(
            old in 1i64..10_000_000,
            new in 1i64..10_000_000,
            share in 0u32..=100,
        ) {
            let discount = old * i64::from(share) / 100;
            let scaled = rescaled_discount(discount, old, new);
            prop_assert!((0..=new).contains(&scaled));
            let exact = i128::from(discount) * i128::from(new);
            prop_assert!((i128::from(scaled) * i128::from(old) - exact).abs() <= i128::from(old));
        }

        #[test]
        fn settlement_conserves_money(amounts in proptest::collection::vec(-100_000i64..100_000, 1..5), credit in 0i64..200_000) {
            let lines = amounts.iter().map(|a| InvoiceLine { description: String::new(), amount: *a }).collect();
            let plan = settle(lines, Discounted::default(), credit, &taxed(&[("19", false)]));
            prop_assert!(plan.amount_due >= 0 && plan.credit_after >= 0);
            // Money in equals money out: what was owed is paid by card or credit, or credited.
            // What is owed is paid by the card plus the credit consumed (or, negative, credited).
            prop_assert_eq!(plan.total, plan.amount_due + credit - plan.credit_after);
            prop_assert_eq!(plan.total.max(0), plan.amount_due + plan.credit_applied);
            let added: i64 = plan.taxes.iter().map(|t| t.amount).sum();
            prop_assert_eq!(plan.total, plan.subtotal - plan.discount + added);
        }
    }
}
