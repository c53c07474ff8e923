//! A membership's price: what every period is charged (`totalAmount`) and the parts it was given
//! as (`pricePerUnit`, `quantity`), and how an update of a part moves the price.
//!
//! The spec relates the parts to the total only when both are given (their product is the
//! total). A part that was not given is implied by the total: the quantity is
//! `totalAmount / pricePerUnit`, the unit price `totalAmount / quantity`, and with neither the
//! plan is one unit of `totalAmount`. An implied part need not be a whole number of units or
//! minor units; it is never stored, only used when the other part changes.

use serde::{Deserialize, Serialize};

use crate::money::{format_amount, Currency, MAX_AMOUNT_MINOR};

/// A membership's price per period and its parts, in minor units of its currency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// The price per period (`totalAmount`): what each period is charged and what proration
    /// compares.
    pub total: i64,
    /// `pricePerUnit`, when given.
    pub per_unit: Option<i64>,
    /// `quantity`, when given.
    pub quantity: Option<i64>,
}

impl Price {
    /// The price of a create body: `totalAmount` is the price per period. When `pricePerUnit`
    /// and `quantity` are both given, their product must be exactly the total (DESIGN §2); a
    /// part given alone is kept as it is, with no rule relating it to the total.
    pub fn of_plan(
        total: i64,
        per_unit: Option<i64>,
        quantity: Option<i64>,
    ) -> Result<Self, String> {
        if let (Some(per_unit), Some(quantity)) = (per_unit, quantity) {
            if per_unit.checked_mul(quantity) != Some(total) {
                return Err("must equal pricePerUnit multiplied by quantity".into());
            }
        }
        Ok(Self {
            total,
            per_unit,
            quantity,
        })
    }

    /// The amount charged per period.
    pub fn per_period(&self) -> i64 {
        self.total
    }

    /// The unit price, given or implied, when it is a whole number of minor units.
    pub fn unit_price(&self) -> Option<i64> {
        match (self.per_unit, self.quantity) {
            (Some(per_unit), _) => Some(per_unit),
            (None, Some(quantity)) => whole_quotient(self.total, quantity),
            (None, None) => Some(self.total),
        }
    }

    /// The number of units, given or implied, when it is whole.
    pub fn units(&self) -> Option<i64> {
        match (self.quantity, self.per_unit) {
            (Some(quantity), _) => Some(quantity),
            (None, Some(per_unit)) => whole_quotient(self.total, per_unit),
            (None, None) => Some(1),
        }
    }

    /// The price after an update giving a new `per_unit` and/or `quantity`. The part not given
    /// keeps its value, given or implied, so the new total is the new part times the other
    /// part: `pricePerUnit × quantity`, exact when the other part was given (or is implied
    /// whole), else the total scaled by the part's change (`total × new / old`), rounded half up
    /// to the minor unit. The new total must lie between one minor unit and
    /// [`MAX_AMOUNT_MINOR`]. Nothing given: the price as it is.
    pub fn updated(
        &self,
        per_unit: Option<i64>,
        quantity: Option<i64>,
        currency: Currency,
    ) -> Result<Self, String> {
        let total = i128::from(self.total);
        let new_total = match (per_unit, quantity) {
            (None, None) => return Ok(*self),
            (Some(p), Some(q)) => i128::from(p) * i128::from(q),
            (Some(p), None) => match (self.quantity, self.per_unit) {
                (Some(q), _) => i128::from(p) * i128::from(q),
                (None, Some(old)) => scaled(total, p, old),
                (None, None) => i128::from(p),
            },
            (None, Some(q)) => match (self.per_unit, self.quantity) {
                (Some(p), _) => i128::from(p) * i128::from(q),
                (None, Some(old)) => scaled(total, q, old),
                (None, None) => total * i128::from(q),
            },
        };
        let bound = |word: &str, amount: i64| {
            format!(
                "gives a price per period (pricePerUnit × quantity) {word} {}",
                format_amount(amount, currency)
            )
        };
        if new_total > i128::from(MAX_AMOUNT_MINOR) {
            return Err(bound("above", MAX_AMOUNT_MINOR));
        }
        if new_total < 1 {
            return Err(bound("below", 1));
        }
        Ok(Self {
            total: i64::try_from(new_total).map_err(|_| bound("above", MAX_AMOUNT_MINOR))?,
            per_unit: per_unit.or(self.per_unit),
            quantity: quantity.or(self.quantity),
        })
    }
}

/// `dividend / divisor` when it is a whole number.
fn whole_quotient(dividend: i64, divisor: i64) -> Option<i64> {
    (dividend.checked_rem(divisor) == Some(0)).then(|| dividend / divisor)
}

/// `total × new / old`, rounded half up; `old` is a stored part, at least 1.
fn scaled(total: i128, new: i64, old: i64) -> i128 {
    let old = i128::from(old.max(1));
    (2 * total * i128::from(new) + old) / (2 * old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn price(total: i64, per_unit: Option<i64>, quantity: Option<i64>) -> Price {
        Price {
            total,
            per_unit,
            quantity,
        }
    }

    #[test]
    fn only_both_parts_are_held_to_the_total() {
        assert_eq!(
            Price::of_plan(3000, Some(1000), Some(3)),
            Ok(price(3000, Some(1000), Some(3)))
        );
        assert!(Price::of_plan(3001, Some(1000), Some(3)).is_err());
        assert!(Price::of_plan(i64::MAX, Some(i64::MAX), Some(2)).is_err());
        // A part alone says nothing about the total: the total is the price per period.
        assert_eq!(
            Price::of_plan(600, Some(500), None).unwrap().per_period(),
            600
        );
        assert_eq!(
            Price::of_plan(601, None, Some(3)).unwrap().per_period(),
            601
        );
        assert_eq!(Price::of_plan(500, None, None).unwrap().per_period(), 500);
    }

    #[test]
    fn implied_parts_are_shown_when_whole() {
        assert_eq!(price(600, None, Some(3)).unit_price(), Some(200));
        assert_eq!(price(601, None, Some(3)).unit_price(), None);
        assert_eq!(price(600, Some(200), None).units(), Some(3));
        assert_eq!(price(600, Some(500), None).units(), None);
        assert_eq!(price(600, None, None).units(), Some(1));
        assert_eq!(price(600, None, None).unit_price(), Some(600));
    }

    #[test]
    fn an_update_keeps_the_other_part() {
        let both = price(3000, Some(1000), Some(3));
        assert_eq!(
            both.updated(None, Some(5), eur()),
            Ok(price(5000, Some(1000), Some(5)))
        );
        assert_eq!(
            both.updated(Some(1200), None, eur()),
            Ok(price(3600, Some(1200), Some(3)))
        );
        // Total alone: one unit of the total.
        let total = price(10000, None, None);
        assert_eq!(
            total.updated(Some(1000), None, eur()),
            Ok(price(1000, Some(1000), None))
        );
        assert_eq!(
            total.updated(None, Some(3), eur()),
            Ok(price(30000, None, Some(3)))
        );
        // Unit price alone: 7.00 a unit, 30.00 a period; the same units at 14.00 cost 60.00.
        let unit = price(3000, Some(700), None);
        assert_eq!(
            unit.updated(Some(1400), None, eur()),
            Ok(price(6000, Some(1400), None))
        );
        assert_eq!(
            unit.updated(None, Some(4), eur()),
            Ok(price(2800, Some(700), Some(4)))
        );
        // Quantity alone: 100.00 for 3 units; 4 units at the same unit price, rounded half up.
        let units = price(10000, None, Some(3));
        assert_eq!(
            units.updated(None, Some(4), eur()),
            Ok(price(13333, None, Some(4)))
        );
        assert_eq!(
            price(1, None, Some(2)).updated(None, Some(3), eur()),
            Ok(price(2, None, Some(3)))
        );
        assert_eq!(unit.updated(None, None, eur()), Ok(unit));
    }

    #[test]
    fn an_updated_total_is_bounded() {
        let both = price(MAX_AMOUNT_MINOR, Some(MAX_AMOUNT_MINOR), Some(1));
        assert_eq!(
            both.updated(None, Some(2), eur()),
            Err("gives a price per period (pricePerUnit × quantity) above 9999999999999.99".into())
        );
        assert!(both
            .updated(Some(MAX_AMOUNT_MINOR), Some(1_000_000_000), eur())
            .is_err());
        // A unit price of 1000.00 for a total of 0.01: a unit price of 0.01 rounds to nothing.
        let tiny = price(1, Some(100_000), None);
        assert_eq!(
            tiny.updated(Some(1), None, eur()),
            Err("gives a price per period (pricePerUnit × quantity) below 0.01".into())
        );
    }

    proptest! {
        /// Whenever the part an update leaves alone is whole (given, or implied whole), the new
        /// total is exactly the new unit price times the quantity, and the parts shown are the
        /// ones that multiply to it.
        #[test]
        fn a_whole_other_part_gives_an_exact_product(
            unit in 1i64..100_000,
            units in 1i64..1_000,
            given in 0u8..4,
            new_unit in proptest::option::of(1i64..100_000),
            new_units in proptest::option::of(1i64..1_000),
        ) {
            let per_unit = (given & 1 == 1).then_some(unit);
            let quantity = (given & 2 == 2).then_some(units);
            let total = match (per_unit, quantity) {
                (None, None) => unit,
                _ => unit * units,
            };
            let before = Price::of_plan(total, per_unit, quantity).unwrap();
            let after = before.updated(new_unit, new_units, eur()).unwrap();
            let (Some(u), Some(n)) = (after.unit_price(), after.units()) else {
                return Err(TestCaseError::fail("whole parts stay whole"));
            };
            prop_assert_eq!(after.total, u * n);
            prop_assert_eq!(u, new_unit.or(before.unit_price()).unwrap());
            prop_assert_eq!(n, new_units.or(before.units()).unwrap());
        }
    }
}
