//! Metered prices: how a period's quantity becomes the amount of its invoice line.
//!
//! Three models: a price per unit (`unitAmount`), a price per started package (`packageSize`
//! and `unitAmount`), and tiers (`tiers` with `tiersMode` `graduated` or `volume`). Prices are in
//! major units of the currency, as the API gives them (`"0.0025"` EUR), with up to 12 decimal
//! places.
//!
//! A line's amount is computed exactly (no digit of a quantity or price is ever rounded away)
//! and rounded half-up to the currency's minor unit once, at the end: 1000 calls at 0.004 EUR
//! come to 4.00 EUR, although each call alone would round to 0.00. A quantity of 0 costs 0 in
//! every model: no usage, no charge, even where a tier has a flat amount.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::text::Read;
use crate::money::{format_amount, round_half_up, Currency, MAX_AMOUNT_MINOR};

mod fixed;

use fixed::{Exact, Fixed};

/// Most tiers of a tiered price.
pub const MAX_TIERS: usize = 100;

/// The largest `packageSize`.
pub const MAX_PACKAGE_SIZE: i64 = 1_000_000_000;

/// Most decimal places of a price or a tier bound, trailing zeros not counted.
const MAX_DECIMALS: i64 = 12;

/// A tier's `upTo` is below this, as the values of events are.
const BOUND_LIMIT: i64 = 1_000_000_000_000_000;

/// How the tiers of a tiered price apply to a quantity. Serialized as `"graduated"` or
/// `"volume"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TiersMode {
    /// Each tier prices the units that fall within it; the amounts of the tiers add up.
    Graduated,
    /// The tier the whole quantity falls in prices every unit.
    Volume,
}

impl TiersMode {
    /// Parses `tiersMode`: exactly `graduated` or `volume`.
    pub fn parse(input: &str) -> Result<TiersMode, String> {
        match input {
            "graduated" => Ok(TiersMode::Graduated),
            "volume" => Ok(TiersMode::Volume),
            _ => Err("must be graduated or volume".into()),
        }
    }

    /// The stored and answered name.
    pub fn as_str(&self) -> &'static str {
        match self {
            TiersMode::Graduated => "graduated",
            TiersMode::Volume => "volume",
        }
    }
}

/// One tier of a tiered price. Amounts are in major units of the currency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier {
    /// The last quantity the tier covers, inclusive; `None` (JSON `null`) on the last tier,
    /// which covers every quantity above the tier before it.
    pub up_to: Option<Decimal>,
    /// The price of each unit in the tier.
    pub unit_amount: Decimal,
    /// A flat amount charged once when the tier applies (0 when none).
    #[serde(default)]
    pub flat_amount: Decimal,
}

/// A metered price. Stored as JSON tagged by `model` (`per_unit`, `package`, `tiered`), with
/// camelCase fields and decimals as strings, and read back as it was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum MeteredPricing {
    /// `unitAmount` for each unit.
    #[serde(rename_all = "camelCase")]
    PerUnit {
        /// The price of one unit.
        unit_amount: Decimal,
    },
    /// `unitAmount` for each started package of `size` units.
    #[serde(rename_all = "camelCase")]
    Package {
        /// Units in a package (`packageSize`), 1 to [`MAX_PACKAGE_SIZE`].
        size: i64,
        /// The price of one package.
        unit_amount: Decimal,
    },
    /// Tiers of units, applied as `mode` says.
    #[serde(rename_all = "camelCase")]
    Tiered {
        /// Graduated or volume.
        mode: TiersMode,
        /// 1 to [`MAX_TIERS`] tiers, in increasing `upTo`, the last without one.
        tiers: Vec<Tier>,
    },
}

/// A price (`unitAmount`, `flatAmount`): a plain decimal string (digits and an optional `.`, no
/// sign, exponent or spaces), from 0 to 1000000000, with at most 12 decimal places (trailing
/// zeros not counted). Returned normalized.
pub fn unit_amount(v: &str) -> Result<Decimal, String> {
    let read = Read::plain(v).ok_or_else(|| {
        "must be a decimal number such as 0.0025 (digits and an optional '.', no sign or exponent)"
            .to_string()
    })?;
    if read.decimal_places() > MAX_DECIMALS {
        return Err(format!("must have at most {MAX_DECIMALS} decimal places"));
    }
    read.to_decimal()
        .and_then(price_in_bounds)
        .ok_or_else(|| PRICE_BOUND.into())
}

/// What a price may be, once read: see [`unit_amount`].
const PRICE_BOUND: &str = "must be at most 1000000000";

/// `price` when it is from 0 to 10^9 with at most 12 decimal places.
fn price_in_bounds(price: Decimal) -> Option<Decimal> {
    let price = price.normalize();
    let bound = Decimal::from(1_000_000_000);
    (price >= Decimal::ZERO && price <= bound && i64::from(price.scale()) <= MAX_DECIMALS)
        .then_some(price)
}

impl MeteredPricing {
    /// A tiered price, checked: 1 to [`MAX_TIERS`] tiers (field `tiers`); every tier but the last
    /// has an `upTo` greater than 0 and than the previous tier's, below 10^15 with at most 12
    /// decimal places, and the last has none (`tiers[i].upTo`); every `unitAmount` and
    /// `flatAmount` is a price ([`unit_amount`]'s bounds; `tiers[i].unitAmount`,
    /// `tiers[i].flatAmount`). On failure, every failing field with its message.
    pub fn tiered(
        mode: TiersMode,
        tiers: Vec<Tier>,
    ) -> Result<MeteredPricing, Vec<(String, String)>> {
        let mut errors = Vec::new();
        if tiers.is_empty() || tiers.len() > MAX_TIERS {
            errors.push(("tiers".into(), format!("must have 1 to {MAX_TIERS} tiers")));
        }
        let mut previous: Option<Decimal> = None;
        for (i, tier) in tiers.iter().enumerate() {
            let mut fail = |field: &str, message: String| {
                errors.push((format!("tiers[{i}].{field}"), message));
            };
            let last = i + 1 == tiers.len();
            match (tier.up_to, last) {
                (None, false) => fail("upTo", "must be given on every tier but the last".into()),
                (Some(_), true) => fail(
                    "upTo",
                    "must be null on the last tier, which covers every quantity above the tier before it"
                        .into(),
                ),
                (None, true) => {}
                (Some(up_to), false) => {
                    if let Err(message) = tier_bound(up_to, previous) {
                        fail("upTo", message);
                    }
                    previous = Some(previous.map_or(up_to, |p| p.max(up_to)));
                }
            }
            if price_in_bounds(tier.unit_amount).is_none() {
                fail("unitAmount", PRICE_RULE.into());
            }
            if price_in_bounds(tier.flat_amount).is_none() {
                fail("flatAmount", PRICE_RULE.into());
            }
        }
        if errors.is_empty() {
            Ok(MeteredPricing::Tiered { mode, tiers })
        } else {
            Err(errors)
        }
    }

    /// A package price: `unit_amount` for each started package of `size` units. The error is
    /// the message for `packageSize`: an integer from 1 to [`MAX_PACKAGE_SIZE`].
    pub fn package(size: i64, unit_amount: Decimal) -> Result<MeteredPricing, String> {
        if (1..=MAX_PACKAGE_SIZE).contains(&size) {
            Ok(MeteredPricing::Package { size, unit_amount })
        } else {
            Err(format!("must be an integer from 1 to {MAX_PACKAGE_SIZE}"))
        }
    }

    /// The amount of `quantity` (at least 0, at most 12 decimal places), in minor units of
    /// `currency`: computed exactly, then rounded half-up once
    /// ([`crate::money::round_half_up`]).
    ///
    /// - Per unit: `quantity × unitAmount`.
    /// - Package: `⌈quantity / size⌉ × unitAmount` (a started package is a whole one; the
    ///   quantity may be fractional).
    /// - Graduated: each tier charges the units within it (`min(quantity, upTo)` minus the
    ///   previous tier's `upTo`) times its `unitAmount`, plus its `flatAmount` once when the
    ///   quantity reaches into it; the tiers' charges add up.
    /// - Volume: the first tier whose `upTo` is at least the quantity (`upTo` is inclusive; the
    ///   last tier when none is) charges `quantity × unitAmount + flatAmount`.
    ///
    /// A quantity of 0 is 0 in every model (no usage, no charge, not even a tier's flat
    /// amount). Fails when the amount comes to more than [`MAX_AMOUNT_MINOR`], and on a
    /// quantity or a price outside the rules (which the constructors and [`unit_amount`]
    /// never let in).
    pub fn amount(&self, quantity: Decimal, currency: Currency) -> Result<i64, String> {
        let q = Fixed::from_decimal(quantity).ok_or_else(|| {
            "the quantity must be at least 0 with at most 12 decimal places".to_string()
        })?;
        if q.is_zero() {
            return Ok(0);
        }
        let too_large = || {
            format!(
                "comes to more than {}",
                format_amount(MAX_AMOUNT_MINOR, currency)
            )
        };
        let exact = self.exact(quantity, q)?.ok_or_else(too_large)?;
        exact
            .to_be_rounded(currency.exponent())
            .map(|amount| round_half_up(amount, currency))
            .filter(|minor| *minor <= MAX_AMOUNT_MINOR)
            .ok_or_else(too_large)
    }

    /// The exact amount of the quantity `q` (`quantity` as a [`Decimal`], to compare with tier
    /// bounds); `Ok(None)` when it overflows, which only an amount far above any bound does.
    fn exact(&self, quantity: Decimal, q: Fixed) -> Result<Option<Exact>, String> {
        Ok(match self {
            MeteredPricing::PerUnit { unit_amount } => Exact::product(q, price(*unit_amount)?),
            MeteredPricing::Package { size, unit_amount } => {
                let size = u128::try_from(*size).unwrap_or(0).max(1);
                Exact::product(Fixed::whole(q.packages(size)), price(*unit_amount)?)
            }
            MeteredPricing::Tiered {
                mode: TiersMode::Graduated,
                tiers,
            } => graduated(q, tiers)?,
            MeteredPricing::Tiered {
                mode: TiersMode::Volume,
                tiers,
            } => {
                let tier = tiers
                    .iter()
                    .find(|tier| tier.up_to.is_none_or(|up_to| quantity <= up_to))
                    .or(tiers.last());
                match tier {
                    Some(tier) => charge(q, tier)?,
                    None => Some(Exact::default()),
                }
            }
        })
    }
}

/// The rule of a price, for a tier's `unitAmount` and `flatAmount`.
const PRICE_RULE: &str =
    "must be at least 0 and at most 1000000000, with at most 12 decimal places";

/// A tier's `upTo` after the tier before it ended at `previous`: greater than 0 and than
/// `previous`, below 10^15, at most 12 decimal places.
fn tier_bound(up_to: Decimal, previous: Option<Decimal>) -> Result<(), String> {
    if up_to <= Decimal::ZERO {
        return Err("must be greater than 0".into());
    }
    let within =
        i64::from(up_to.normalize().scale()) <= MAX_DECIMALS && up_to < Decimal::from(BOUND_LIMIT);
    if !within {
        return Err("must be below 1000000000000000 with at most 12 decimal places".into());
    }
    match previous {
        Some(previous) if up_to <= previous => Err(format!(
            "must be greater than the upTo of the tier before it ({})",
            previous.normalize()
        )),
        _ => Ok(()),
    }
}

/// A price of the model as a [`Fixed`]; the error only for prices the rules never let in.
fn price(amount: Decimal) -> Result<Fixed, String> {
    Fixed::from_decimal(amount)
        .filter(|_| price_in_bounds(amount).is_some())
        .ok_or_else(|| {
            "has a price that is not from 0 to 1000000000 with at most 12 decimal places".into()
        })
}

/// The graduated amount of `q`: each tier's units times its price, plus its flat amount when
/// `q` reaches into it.
fn graduated(q: Fixed, tiers: &[Tier]) -> Result<Option<Exact>, String> {
    let mut total = Exact::default();
    let mut below = Fixed::ZERO;
    for tier in tiers {
        if q <= below {
            break;
        }
        let top = match tier.up_to {
            Some(up_to) => q.min(bound(up_to)?),
            None => q,
        };
        if top <= below {
            continue;
        }
        match charge(top.minus(below), tier)?.and_then(|charge| total.plus(charge)) {
            Some(sum) => total = sum,
            None => return Ok(None),
        }
        below = top;
    }
    Ok(Some(total))
}

/// What `tier` charges for `units`: `units × unitAmount + flatAmount`; `Ok(None)` on overflow.
fn charge(units: Fixed, tier: &Tier) -> Result<Option<Exact>, String> {
    let flat = Exact::of(price(tier.flat_amount)?);
    Ok(Exact::product(units, price(tier.unit_amount)?).and_then(|amount| amount.plus(flat)))
}

/// A tier's `upTo` as a [`Fixed`]; the error only for bounds the rules never let in.
fn bound(up_to: Decimal) -> Result<Fixed, String> {
    Fixed::from_decimal(up_to).ok_or_else(|| {
        "has a tier whose upTo is negative or has more than 12 decimal places".into()
    })
}

#[cfg(test)]
mod tests;
