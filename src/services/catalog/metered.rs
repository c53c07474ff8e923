//! The terms of a metered price (DESIGN §19): the meter whose usage it bills in arrears, and
//! how a period's quantity is priced: per unit (`unitAmount`, up to 12 decimal places), per
//! started package (`packageSize` with `unitAmount`), or in graduated or volume tiers
//! (`tiers` with `tiersMode`).

use recur_domain::usage::pricing::{self, MeteredPricing, Tier, TiersMode};
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use crate::http::input::Field;
use crate::services::fields::decimal_value;

/// The metered terms of a new price as given.
#[derive(Debug, Default)]
pub struct MeteredInput {
    /// The meter (`mtr_…`) whose usage the price bills; absent for a fixed price.
    pub meter_id: Field<String>,
    /// The tiers of a tiered price.
    pub tiers: Field<Vec<Field<TierInput>>>,
    /// `graduated` or `volume`, with `tiers`.
    pub tiers_mode: Field<String>,
    /// The units of one package, for a price per started package.
    pub package_size: Field<i64>,
}

impl MeteredInput {
    /// The metered terms the body names, each with whether it is given: for a fixed price,
    /// every one given is refused.
    pub fn named(&self) -> [(&'static str, bool); 3] {
        [
            ("tiers", self.tiers.is_given()),
            ("tiersMode", self.tiers_mode.is_given()),
            ("packageSize", self.package_size.is_given()),
        ]
    }
}

/// One tier as given.
#[derive(Debug, Default)]
pub struct TierInput {
    /// The last quantity the tier covers (inclusive); `null` for the last tier.
    pub up_to: Field<serde_json::Value>,
    /// The price per unit within the tier, a decimal string.
    pub unit_amount: Field<String>,
    /// A flat amount added once the quantity reaches into the tier (graduated) or lies in it
    /// (volume), a decimal string.
    pub flat_amount: Field<String>,
}

/// How a metered price given as `metered` (its `meterId` present) and `unit_amount` prices a
/// quantity, or `None` with every failing field added to `errors`.
pub fn pricing(
    metered: MeteredInput,
    unit_amount: Field<String>,
    errors: &mut FieldErrors,
) -> Option<MeteredPricing> {
    let tiered = metered.tiers.is_given() || metered.tiers_mode.is_given();
    if tiered {
        if unit_amount.is_given() {
            errors.add(
                "unitAmount",
                "must be absent with tiers: each tier has its unitAmount",
            );
        }
        if metered.package_size.is_given() {
            errors.add("packageSize", "must be absent with tiers");
        }
        return tiers(metered.tiers, metered.tiers_mode, errors);
    }
    let unit = decimal_text(unit_amount, "unitAmount", true, errors);
    match metered.package_size {
        Field::Absent => unit.map(|unit_amount| MeteredPricing::PerUnit { unit_amount }),
        size => {
            let size = size.required("packageSize", errors);
            let size = size.and_then(|size| {
                errors.check("packageSize", MeteredPricing::package(size, Decimal::ZERO))
            });
            match (size, unit) {
                (Some(MeteredPricing::Package { size, .. }), Some(unit_amount)) => {
                    Some(MeteredPricing::Package { size, unit_amount })
                }
                _ => None,
            }
        }
    }
}

/// `tiers` and `tiersMode`, both required once either is given.
fn tiers(
    tiers: Field<Vec<Field<TierInput>>>,
    mode: Field<String>,
    errors: &mut FieldErrors,
) -> Option<MeteredPricing> {
    let mode = mode
        .required("tiersMode", errors)
        .and_then(|m| errors.check("tiersMode", TiersMode::parse(&m)));
    let given = tiers.required("tiers", errors)?;
    let mut failed = FieldErrors::new();
    let mut read = Vec::with_capacity(given.len());
    for (i, tier) in given.into_iter().enumerate() {
        let path = format!("tiers[{i}]");
        let Some(tier) = tier.required(&path, &mut failed) else {
            continue;
        };
        let up_to = match tier.up_to {
            Field::Absent | Field::Null => Some(None),
            Field::Invalid(message) => {
                failed.add(format!("{path}.upTo"), message);
                None
            }
            Field::Present(value) => failed
                .check(&format!("{path}.upTo"), decimal_value(&value))
                .map(Some),
        };
        let unit = decimal_text(
            tier.unit_amount,
            &format!("{path}.unitAmount"),
            true,
            &mut failed,
        );
        let flat = decimal_text(
            tier.flat_amount,
            &format!("{path}.flatAmount"),
            false,
            &mut failed,
        );
        if let (Some(up_to), Some(unit_amount)) = (up_to, unit) {
            read.push(Tier {
                up_to,
                unit_amount,
                flat_amount: flat.unwrap_or(Decimal::ZERO),
            });
        }
    }
    let clean = failed.is_empty();
    errors.append(failed);
    let (Some(mode), true) = (mode, clean) else {
        return None;
    };
    match MeteredPricing::tiered(mode, read) {
        Ok(pricing) => Some(pricing),
        Err(failures) => {
            for (field, message) in failures {
                errors.add(&field, message);
            }
            None
        }
    }
}

/// A decimal string of a metered price (`unitAmount`, `flatAmount`): required or optional.
fn decimal_text(
    field: Field<String>,
    path: &str,
    required: bool,
    errors: &mut FieldErrors,
) -> Option<Decimal> {
    let text = if required {
        field.required(path, errors)?
    } else {
        field.optional(path, errors)?
    };
    errors.check(path, pricing::unit_amount(&text))
}
