//! A metered price as a membership carries it: the terms copied when the price was given
//! (`meteredPriceIds`), so that every period is billed on the terms it was sold on, and the
//! usage line they make of a period's totals.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::meter::Aggregation;
use super::pricing::MeteredPricing;
use super::totals::Totals;
use crate::invoice::{InvoiceLine, LineUsage};
use crate::money::Currency;

/// One metered price of a membership, with its meter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeteredTerm {
    /// The catalog price (`price_…`).
    pub price_key: String,
    /// The meter's internal id.
    pub meter_id: i64,
    /// The meter (`mtr_…`).
    pub meter_key: String,
    /// The meter's code, which events name.
    pub meter_code: String,
    /// The meter's name when the price was given: what the usage line says it bills.
    pub meter_name: String,
    /// How the meter's events add up.
    pub aggregation: Aggregation,
    /// The event property it reads (none for `count`).
    pub property: Option<String>,
    /// How a quantity is priced.
    pub pricing: MeteredPricing,
}

/// A meter's usage of a period, priced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PricedUsage {
    /// What the meter's aggregation came to.
    pub quantity: Decimal,
    /// Its price in minor units, rounded once.
    pub amount: i64,
}

impl MeteredTerm {
    /// The quantity of `totals` and its price in `currency`; the error names why it cannot be
    /// priced (an amount beyond what recur bills).
    pub fn priced(&self, totals: &Totals, currency: Currency) -> Result<PricedUsage, String> {
        let quantity = totals.quantity(self.aggregation).normalize();
        let amount = self.pricing.amount(quantity, currency)?;
        Ok(PricedUsage { quantity, amount })
    }

    /// The invoice line billing `usage` in arrears: the meter's name and quantity.
    pub fn line(&self, usage: &PricedUsage) -> InvoiceLine {
        InvoiceLine {
            description: format!("{} × {}", self.meter_name, usage.quantity),
            amount: usage.amount,
            usage: Some(LineUsage {
                meter_code: self.meter_code.clone(),
                quantity: usage.quantity,
            }),
        }
    }
}
