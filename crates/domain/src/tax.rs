//! Tax rates and the taxes of an invoice (DESIGN §14).
//!
//! A rate's percentage is a decimal `0 ≤ p ≤ 100` with at most four decimal places; the
//! arithmetic is exact: `p` is scaled by 10⁴ into an integer and every tax is one `i128`
//! division rounded half away from zero into minor units, per rate.
//!
//! - Exclusive: `tax = round(base × p / 100)`, `base = subtotal − discount`, added to the total.
//! - Inclusive: `tax = round(total × p / (100 + Σp))`, contained in the total. With one rate that
//!   is `total × p / (100 + p)`; with several, the sum of the percentages is the divisor, so the
//!   net is `total / (1 + Σp/100)` and `net + Σtax = total`.
//!
//! Negative amounts (a downgrade's credit, before it becomes a credit note) are taxed
//! symmetrically: `tax(−a) = −tax(a)`.
//!
//! Which rates a membership may bill with is [`rate_set`]'s rule.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

mod rate_set;

pub use rate_set::{
    rate_id_path, rate_set, requested_rate_ids, FoundRate, MAX_RATES_PER_MEMBERSHIP, TAX_RATE_IDS,
};

/// The member states of the European Union (ISO 3166-1 alpha-2 codes). This is the EU's
/// membership, a political fact, not an ISO table: no crate carries it. Greece is `GR` here (the
/// EU's own VAT prefix `EL` is not a country code).
pub const EU_MEMBER_STATES: [&str; 27] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
];

/// Whether `country` (ISO alpha-2, any case) is an EU member state.
pub fn is_eu_member(country: &str) -> bool {
    EU_MEMBER_STATES
        .iter()
        .any(|c| c.eq_ignore_ascii_case(country))
}

/// The percentage scale: `p` is stored as `p × 10⁴`.
const SCALE: i128 = 10_000;
/// 100 % on the scale.
const HUNDRED: i128 = 100 * SCALE;

/// Why a percentage is refused.
pub const PERCENTAGE_RULE: &str =
    "must be a decimal number from 0 to 100 with at most 4 decimal places";

/// Parses and checks a rate's percentage: a decimal `0 ≤ p ≤ 100`, at most 4 decimal places
/// (trailing zeros do not count). Returns it normalized, or [`PERCENTAGE_RULE`].
pub fn parse_percentage(text: &str) -> Result<Decimal, &'static str> {
    let text = text.trim();
    if text.is_empty() || text.contains(['e', 'E']) {
        return Err(PERCENTAGE_RULE);
    }
    let value = Decimal::from_str(text)
        .map_err(|_| PERCENTAGE_RULE)?
        .normalize();
    if value.is_sign_negative() && !value.is_zero()
        || value > Decimal::ONE_HUNDRED
        || value.scale() > 4
    {
        return Err(PERCENTAGE_RULE);
    }
    Ok(value)
}

/// A percentage on the 10⁴ scale (a valid one is 0‥=1 000 000).
fn scaled(percentage: Decimal) -> i128 {
    let mut p = percentage;
    p.rescale(4);
    p.mantissa()
}

/// `numerator / denominator` rounded half away from zero; `denominator > 0`.
fn round_div(numerator: i128, denominator: i128) -> i128 {
    let magnitude = (2 * numerator.abs() + denominator) / (2 * denominator);
    if numerator < 0 {
        -magnitude
    } else {
        magnitude
    }
}

fn to_minor(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

/// The exclusive tax of `base` minor units at `percentage`: `round(base × p / 100)`.
pub fn exclusive_tax(base: i64, percentage: Decimal) -> i64 {
    to_minor(round_div(i128::from(base) * scaled(percentage), HUNDRED))
}

/// The inclusive taxes contained in `total` minor units, one per percentage, in order:
/// `round(total × pᵢ / (100 + Σp))`.
pub fn inclusive_taxes(total: i64, percentages: &[Decimal]) -> Vec<i64> {
    let divisor = HUNDRED + percentages.iter().map(|p| scaled(*p)).sum::<i128>();
    percentages
        .iter()
        .map(|p| to_minor(round_div(i128::from(total) * scaled(*p), divisor)))
        .collect()
}

/// A tax rate as a membership bills with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaxRate {
    /// Public key, `txr_…`.
    pub tax_rate_id: String,
    /// What the invoice calls it.
    pub name: String,
    /// Percentage, 0‥=100, at most 4 decimal places.
    pub percentage: Decimal,
    /// Contained in the price (`true`) or added to it.
    pub inclusive: bool,
    /// ISO alpha-2 country the rate belongs to; `None` applies everywhere.
    pub country: Option<String>,
}

impl TaxRate {
    /// Whether it is an *EU rate*: its country is an EU member state.
    pub fn is_eu_rate(&self) -> bool {
        self.country.as_deref().is_some_and(is_eu_member)
    }
}

/// Who sells and who buys, as the reverse-charge rule reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parties {
    /// The merchant's `country` (settings), if set.
    pub merchant_country: Option<String>,
    /// The customer's `countryCode`.
    pub customer_country: Option<String>,
    /// Whether the customer has an `eu_vat` entry in `taxIds`.
    pub customer_has_eu_vat: bool,
}

impl Parties {
    /// Reverse charge: merchant and customer are in different EU member states and the customer
    /// has an EU VAT id.
    pub fn reverse_charge(&self) -> bool {
        match (&self.merchant_country, &self.customer_country) {
            (Some(merchant), Some(customer)) => {
                self.customer_has_eu_vat
                    && is_eu_member(merchant)
                    && is_eu_member(customer)
                    && !merchant.eq_ignore_ascii_case(customer)
            }
            _ => false,
        }
    }
}

/// The rates an invoice applies and whether it is reverse-charged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Taxation {
    /// The rates that apply, in the membership's order.
    pub rates: Vec<TaxRate>,
    /// EU rates were skipped by the reverse-charge rule.
    pub reverse_charge: bool,
}

impl Taxation {
    /// No taxes.
    pub fn none() -> Taxation {
        Taxation::default()
    }

    /// The membership's `rates` as they apply between `parties`: under reverse charge the EU
    /// rates are skipped; a rate without `country` always applies.
    pub fn new(rates: &[TaxRate], parties: &Parties) -> Taxation {
        let reverse_charge = parties.reverse_charge();
        Taxation {
            rates: rates
                .iter()
                .filter(|r| !(reverse_charge && r.is_eu_rate()))
                .cloned()
                .collect(),
            reverse_charge,
        }
    }

    /// The tax of each rate on an invoice whose amount after discount is `base`: for exclusive
    /// rates `base` is the net, for inclusive ones it is the total.
    pub fn taxes(&self, base: i64) -> Vec<InvoiceTax> {
        let inclusive: Vec<Decimal> = self
            .rates
            .iter()
            .filter(|r| r.inclusive)
            .map(|r| r.percentage)
            .collect();
        let mut contained = inclusive_taxes(base, &inclusive).into_iter();
        self.rates
            .iter()
            .map(|rate| InvoiceTax {
                tax_rate_id: rate.tax_rate_id.clone(),
                name: rate.name.clone(),
                percentage: rate.percentage,
                inclusive: rate.inclusive,
                amount: if rate.inclusive {
                    contained.next().unwrap_or(0)
                } else {
                    exclusive_tax(base, rate.percentage)
                },
            })
            .collect()
    }
}

/// One rate's tax on an invoice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceTax {
    /// The rate's key.
    pub tax_rate_id: String,
    /// The rate's name when invoiced.
    pub name: String,
    /// The rate's percentage.
    pub percentage: Decimal,
    /// Contained in the total.
    pub inclusive: bool,
    /// Minor units; negative on a credit.
    pub amount: i64,
}

#[cfg(test)]
mod tests;
