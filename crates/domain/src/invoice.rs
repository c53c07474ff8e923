//! What an invoice says: its lines, and how the membership's credit settles it (DESIGN §4).
//!
//! Every invoice is a list of lines whose sum is the `subtotal`. Taxes apply after the discount
//! ([`crate::tax`]): `total = subtotal − discount + exclusive taxes` (inclusive taxes are
//! contained). A positive total is settled with credit first and the rest is due from the
//! payment method; a negative total (a downgrade) is added to the credit and nothing is due.
//! Credit used is its own line.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar::{period_starting, BillingCycle, Period};
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
    /// Taken off the subtotal before taxes (coupons: none yet).
    pub discount: i64,
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

/// Settles `lines`, taxed by `taxation`, against `credit_balance`: credit first, the rest due;
/// a negative total becomes credit.
pub fn settle(
    mut lines: Vec<InvoiceLine>,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let subtotal: i64 = lines.iter().map(|l| l.amount).sum();
    let discount = 0;
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
        taxes,
        total,
        reverse_charge,
        credit_applied: settlement.credit_used,
        amount_due: settlement.charged,
        credit_after: settlement.credit_left,
    }
}

/// The invoice of one billing period of a plan.
pub fn period_invoice(
    name: &str,
    price: Price,
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
        credit_balance,
        taxation,
    )
}

/// A change of price or quantity in the middle of a paid period: the difference for the time
/// left, `(new − old) × remaining / period`, rounded half-up once.
pub fn price_change_invoice(
    old: Price,
    new: Price,
    period: Period,
    now: DateTime<Utc>,
    credit_balance: i64,
    taxation: &Taxation,
) -> InvoicePlan {
    let amount = prorate(
        old.per_period(),
        new.per_period(),
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
        credit_balance,
        taxation,
    )
}

/// A change of interval: the old period ends now, its unused time is credited, and the new
/// period starting now is charged in full (minus credit). Returns the plan and the new period.
// The change (old and new price, period, cycle, time) and the account (credit, taxation) are
// all inputs of the one rule.
#[allow(clippy::too_many_arguments)]
pub fn interval_change_invoice(
    name: &str,
    old: Price,
    new: Price,
    period: Period,
    new_cycle: &BillingCycle,
    now: DateTime<Utc>,
    credit_balance: i64,
    taxation: &Taxation,
) -> Option<(InvoicePlan, Period)> {
    let new_period = period_starting(now, new_cycle)?;
    let unused = unused_credit(
        old.per_period(),
        period.remaining_seconds(now),
        period.seconds(),
    );
    let mut lines = vec![InvoiceLine {
        description: format!("{name}: new billing cycle"),
        amount: new.per_period(),
    }];
    if unused > 0 {
        lines.push(InvoiceLine {
            description: "Unused time of the previous billing cycle".into(),
            amount: -unused,
        });
    }
    Some((settle(lines, credit_balance, taxation), new_period))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::IntervalType;
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
        let plan = period_invoice("Gold", price(1190, 1), 0, &taxed(&[("19", true)]));
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
        let plan = period_invoice("Gold", price(1000, 1), 2500, &none());
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.credit_applied, 1000);
        assert_eq!(plan.credit_after, 1500);
        assert_eq!(plan.lines.last().unwrap().description, CREDIT_LINE);
        assert_eq!(plan.lines.iter().map(|l| l.amount).sum::<i64>(), 0);
    }

    #[test]
    fn partial_credit() {
        let plan = period_invoice("Gold", price(1000, 2), 300, &none());
        assert_eq!(plan.subtotal, 2000);
        assert_eq!(plan.amount_due, 1700);
        assert_eq!(plan.credit_after, 0);
        assert_eq!(plan.lines[0].description, "Gold × 2");
    }

    #[test]
    fn upgrade_half_way_charges_half_the_difference() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let plan = price_change_invoice(price(1000, 1), price(2000, 1), period(), now, 0, &none());
        assert_eq!(plan.amount_due, 500);
    }

    #[test]
    fn downgrade_becomes_credit() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let plan =
            price_change_invoice(price(2000, 1), price(1000, 1), period(), now, 100, &none());
        assert_eq!(plan.amount_due, 0);
        assert_eq!(plan.subtotal, -500);
        assert_eq!(plan.credit_after, 600);
    }

    #[test]
    fn interval_change_credits_unused_time() {
        let now = Utc.with_ymd_and_hms(2026, 4, 16, 0, 0, 0).unwrap();
        let weekly = BillingCycle::new(IntervalType::Weekly, 1).unwrap();
        let (plan, new_period) = interval_change_invoice(
            "Gold",
            price(3000, 1),
            price(800, 1),
            period(),
            &weekly,
            now,
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

    proptest! {
        #[test]
        fn settlement_conserves_money(amounts in proptest::collection::vec(-100_000i64..100_000, 1..5), credit in 0i64..200_000) {
            let lines = amounts.iter().map(|a| InvoiceLine { description: String::new(), amount: *a }).collect();
            let plan = settle(lines, credit, &taxed(&[("19", false)]));
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
