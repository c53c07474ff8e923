//! Exact fixed-point arithmetic for metered amounts.
//!
//! A quantity and a price each have up to 12 decimal places, so their product has up to 24. A
//! [`Decimal`] holds 28 significant digits and rounds what is beyond, which a large quantity
//! times a price with many decimals can reach; here no digit is ever dropped. All values are
//! non-negative, and every operation that could overflow is checked: an overflow always means
//! an amount far above any bound, and is reported as `None`.

use rust_decimal::Decimal;

/// `10^12`: a [`Fixed`]'s fraction unit.
const E12: u128 = 1_000_000_000_000;

/// `10^24`: an [`Exact`]'s fraction unit.
const E24: u128 = E12 * E12;

/// A non-negative quantity or price with at most 12 decimal places: `whole` units and `frac`
/// 10^-12ths (below 10^12). The field order makes the derived ordering the numeric one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Fixed {
    whole: u128,
    frac: u128,
}

impl Fixed {
    /// Zero.
    pub(super) const ZERO: Fixed = Fixed { whole: 0, frac: 0 };

    /// `d` exactly; `None` when it is negative or has more than 12 decimal places (trailing
    /// zeros not counted).
    pub(super) fn from_decimal(d: Decimal) -> Option<Fixed> {
        let d = d.normalize();
        if d.is_sign_negative() || d.scale() > 12 {
            return None;
        }
        let mantissa = d.mantissa().unsigned_abs();
        let unit = 10u128.pow(d.scale());
        Some(Fixed {
            whole: mantissa / unit,
            frac: mantissa % unit * (E12 / unit),
        })
    }

    /// The whole number `n`.
    pub(super) fn whole(n: u128) -> Fixed {
        Fixed { whole: n, frac: 0 }
    }

    /// Whether this is zero.
    pub(super) fn is_zero(self) -> bool {
        self == Fixed::ZERO
    }

    /// `self − other`, or zero when `other` is larger.
    pub(super) fn minus(self, other: Fixed) -> Fixed {
        if self <= other {
            return Fixed::ZERO;
        }
        if self.frac >= other.frac {
            Fixed {
                whole: self.whole - other.whole,
                frac: self.frac - other.frac,
            }
        } else {
            Fixed {
                whole: self.whole - other.whole - 1,
                frac: self.frac + E12 - other.frac,
            }
        }
    }

    /// How many packages of `size` (at least 1) it takes to hold this quantity: ⌈self / size⌉.
    pub(super) fn packages(self, size: u128) -> u128 {
        let size = size.max(1);
        let started = self.whole % size != 0 || self.frac != 0;
        self.whole / size + u128::from(started)
    }
}

/// A non-negative amount held exactly: `whole` major units and `frac` 10^-24ths (below 10^24).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Exact {
    whole: u128,
    frac: u128,
}

impl Exact {
    /// `a × b`, exactly.
    pub(super) fn product(a: Fixed, b: Fixed) -> Option<Exact> {
        let whole = a.whole.checked_mul(b.whole)?;
        // The cross terms count 10^-12ths; the product of the fractions, 10^-24ths (below 10^24).
        let cross = a
            .whole
            .checked_mul(b.frac)?
            .checked_add(a.frac.checked_mul(b.whole)?)?;
        let tiny = a.frac * b.frac;
        let frac = cross % E12 * E12 + tiny;
        Some(Exact {
            whole: whole.checked_add(cross / E12)?.checked_add(frac / E24)?,
            frac: frac % E24,
        })
    }

    /// `a`, exactly.
    pub(super) fn of(a: Fixed) -> Exact {
        Exact {
            whole: a.whole,
            frac: a.frac * E12,
        }
    }

    /// `self + other`.
    pub(super) fn plus(self, other: Exact) -> Option<Exact> {
        let frac = self.frac + other.frac;
        Some(Exact {
            whole: self
                .whole
                .checked_add(other.whole)?
                .checked_add(frac / E24)?,
            frac: frac % E24,
        })
    }

    /// The amount cut (not rounded) to `exponent + 1` decimal places, as a [`Decimal`] to round
    /// to `exponent` places: rounding half-up looks at the first digit past the last kept one
    /// only, so the cut value rounds to exactly what the exact amount does. `None` when the
    /// amount does not fit a `Decimal` (far above any bound).
    pub(super) fn to_be_rounded(self, exponent: u32) -> Option<Decimal> {
        let places = exponent.checked_add(1).filter(|p| *p <= 24)?;
        let kept = self.frac / 10u128.pow(24 - places);
        let mantissa = self
            .whole
            .checked_mul(10u128.pow(places))?
            .checked_add(kept)?;
        Decimal::try_from_i128_with_scale(i128::try_from(mantissa).ok()?, places).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn fixed(s: &str) -> Fixed {
        Fixed::from_decimal(Decimal::from_str(s).unwrap()).unwrap()
    }

    fn exact_text(e: Exact) -> String {
        format!("{}.{:024}", e.whole, e.frac)
    }

    #[test]
    fn fixed_values_are_exact() {
        assert_eq!(
            fixed("12.50"),
            Fixed {
                whole: 12,
                frac: 500_000_000_000
            }
        );
        assert_eq!(fixed("0.000000000001"), Fixed { whole: 0, frac: 1 });
        assert_eq!(fixed("1000.000"), Fixed::whole(1000));
        assert_eq!(Fixed::from_decimal(Decimal::from_str("-1").unwrap()), None);
        assert_eq!(
            Fixed::from_decimal(Decimal::from_str("0.0000000000001").unwrap()),
            None
        );
        assert_eq!(
            Fixed::from_decimal(Decimal::from_str("-0").unwrap()),
            Some(Fixed::ZERO)
        );
        assert_eq!(fixed("3.25").minus(fixed("1.5")), fixed("1.75"));
        assert_eq!(fixed("3.25").minus(fixed("1.75")), fixed("1.5"));
        assert_eq!(fixed("1").minus(fixed("3")), Fixed::ZERO);
        assert_eq!(fixed("200").packages(100), 2);
        assert_eq!(fixed("200.000000000001").packages(100), 3);
        assert_eq!(fixed("0.5").packages(100), 1);
        assert_eq!(Fixed::ZERO.packages(100), 0);
    }

    #[test]
    fn products_keep_every_digit() {
        // 28 significant digits would round this product; it has 42.
        let q = fixed("999999999999999.999999999999");
        let u = fixed("999999999.999999999999");
        let product = Exact::product(q, u).unwrap();
        // (10^15 − 10^-12) × (10^9 − 10^-12) = 10^24 − 10^3 − 10^-3 + 10^-24
        assert_eq!(
            exact_text(product),
            "999999999999999999998999.999000000000000000000001"
        );
        assert_eq!(
            exact_text(Exact::product(fixed("0.5"), fixed("0.5")).unwrap()),
            format!("0.25{}", "0".repeat(22))
        );
        let sum = Exact::of(fixed("0.75"))
            .plus(Exact::of(fixed("0.25")))
            .unwrap();
        assert_eq!(sum, Exact::of(Fixed::whole(1)));
        assert_eq!(Exact::product(Fixed::whole(u128::MAX), fixed("2")), None);
    }

    #[test]
    fn cutting_for_rounding_keeps_one_more_digit() {
        let e = Exact::product(fixed("1234"), fixed("0.0025")).unwrap();
        assert_eq!(
            e.to_be_rounded(2),
            Some(Decimal::from_str("3.085").unwrap())
        );
        let e = Exact::product(fixed("0.004999999999"), fixed("1")).unwrap();
        assert_eq!(
            e.to_be_rounded(2),
            Some(Decimal::from_str("0.004").unwrap())
        );
        assert_eq!(e.to_be_rounded(0), Some(Decimal::from_str("0.0").unwrap()));
        assert_eq!(
            Exact::of(Fixed::whole(u128::MAX / 2)).to_be_rounded(2),
            None
        );
    }

    proptest! {
        /// Where a Decimal holds the product exactly, the fixed-point product is the same.
        #[test]
        fn products_agree_with_decimal(
            a in (0i64..1_000_000_000_000, 0u32..=12),
            b in (0i64..1_000_000_000, 0u32..=12),
        ) {
            let (a, b) = (Decimal::new(a.0, a.1), Decimal::new(b.0, b.1));
            let product = Exact::product(Fixed::from_decimal(a).unwrap(), Fixed::from_decimal(b).unwrap()).unwrap();
            let text = exact_text(product);
            let text = text.trim_end_matches('0').trim_end_matches('.');
            prop_assert_eq!(Decimal::from_str(text).unwrap(), a * b);
        }
    }
}
