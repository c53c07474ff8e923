//! The invoice rules with examples, and their properties.

use super::*;
use crate::calendar::{BillingCycle, IntervalType, Period};
use crate::coupon::{CouponDuration, CouponOff};
use crate::tax::{parse_percentage, TaxRate};
use chrono::TimeZone;
use chrono::Utc;
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
fn a_taxed_downgrade_is_a_credit_note_of_its_taxed_amount() {
    let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
    let plan = price_change(
        price(2000, 1),
        price(1000, 1),
        period(),
        now,
        0,
        0,
        &taxed(&[("10", false)]),
    );
    assert_eq!(plan.invoice, None);
    let credit = plan.credit.unwrap();
    assert_eq!(credit.amount, 550);
    assert!(credit.reason.starts_with("Price change:"));
    assert_eq!(plan.net, -550);
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
    let plan = price_change(price(1000, 1), price(2000, 1), period(), now, 0, 0, &none());
    assert_eq!(plan.credit, None);
    assert_eq!(plan.invoice.as_ref().unwrap().total, 500);
    assert_eq!(plan.amount_due(), 500);
}

#[test]
fn downgrade_becomes_credit() {
    let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
    let plan = price_change(
        price(2000, 1),
        price(1000, 1),
        period(),
        now,
        0,
        100,
        &none(),
    );
    assert_eq!(plan.amount_due(), 0);
    assert_eq!(plan.invoice, None);
    assert_eq!(plan.credit.unwrap().amount, 500);
    assert_eq!(plan.credit_after, 600);
}

#[test]
fn interval_change_credits_unused_time() {
    let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
    let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
    let (plan, new_period) = interval_change(
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
    // 15 of 30 days unused: a credit note of 1500; the new week is invoiced in full, 800,
    // paid by that credit, which leaves 700.
    assert_eq!(plan.credit.unwrap().amount, 1500);
    let invoice = plan.invoice.unwrap();
    assert_eq!(invoice.subtotal, 800);
    assert_eq!(invoice.total, 800);
    assert_eq!(invoice.credit_applied, 800);
    assert_eq!(invoice.amount_due, 0);
    assert_eq!(plan.net, -700);
    assert_eq!(plan.credit_after, 700);
}

#[test]
fn a_taxed_interval_change_conserves_the_net() {
    let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
    let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
    let vat = taxed(&[("19", false)]);
    let (plan, _) = interval_change(
        &IntervalChange {
            name: "Gold",
            old: price(3001, 1),
            period_discount: 0,
            period: period(),
            new: price(1001, 1),
            new_cycle: &weekly,
            discount: None,
            now,
        },
        300,
        &vat,
    )
    .unwrap();
    // One invoice would have been 1001 − 1501 = −500, taxed −95: −595. The new week's invoice
    // is 1001 + 190 = 1191, so the credit note carries 1191 + 595 = 1786 (1501 unused, 285 of
    // its tax).
    let invoice = plan.invoice.unwrap();
    assert_eq!(invoice.total, 1191);
    assert_eq!(plan.credit.unwrap().amount, 1786);
    assert_eq!(plan.net, -595);
    assert_eq!(invoice.credit_applied, 1191);
    assert_eq!(plan.credit_after, 300 + 595);
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
    let upgrade = price_change(price(5000, 1), price(8000, 1), period(), now, 1000, 0, &vat)
        .invoice
        .unwrap();
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
    let up = price_change(
        price(2000, 1),
        price(4000, 1),
        period(),
        now,
        1000,
        0,
        &none(),
    );
    assert_eq!(up.invoice.unwrap().subtotal, 500);
    assert_eq!(rescaled_discount(1000, 2000, 4000), 2000);
    // A free period credits nothing when it ends early.
    assert_eq!(
        pause_credit(price(2000, 1), period(), now, 2000, &none()),
        None
    );
    let paused = pause_credit(price(2000, 1), period(), now, 500, &none()).unwrap();
    assert_eq!(paused.amount, 750);
    assert!(paused.reason.starts_with("Pause:"));
}

#[test]
fn an_interval_change_discounts_the_new_period_only() {
    let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
    let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
    let half = coupon(
        CouponOff::PercentOff(rust_decimal::Decimal::new(50, 0)),
        CouponDuration::Forever,
    );
    let (plan, _) = interval_change(
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
    let invoice = plan.invoice.unwrap();
    assert_eq!(invoice.subtotal, 1000);
    assert_eq!(invoice.discount, 500);
    assert_eq!(invoice.total, 500);
    assert_eq!(plan.credit.unwrap().amount, 750);
    assert_eq!(plan.net, -250);
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
        if let Some(credit) = pause_credit(price(total, 1), period(), now, period_discount, &none()) {
            prop_assert!(credit.amount <= total - period_discount);
            prop_assert!(credit.amount > 0);
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
    fn settlement_conserves_money(amounts in proptest::collection::vec(0i64..100_000, 1..5), credit in 0i64..200_000) {
        let lines = amounts.iter().map(|a| InvoiceLine::new(String::new(), *a)).collect();
        let plan = settle(lines, Discounted::default(), credit, &taxed(&[("19", false)]));
        prop_assert!(plan.total >= 0 && plan.amount_due >= 0 && plan.credit_after >= 0);
        // Money in equals money out: what is owed is paid by the card plus the credit consumed.
        prop_assert_eq!(plan.total, plan.amount_due + credit - plan.credit_after);
        prop_assert_eq!(plan.total, plan.amount_due + plan.credit_applied);
        let added: i64 = plan.taxes.iter().map(|t| t.amount).sum();
        prop_assert_eq!(plan.total, plan.subtotal - plan.discount + added);
    }
}
