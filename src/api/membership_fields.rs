//! The create body's `pricingInfo` and `billingCycle` as the OpenAPI document shows them; the
//! service reads them ([`crate::services::memberships::terms`]).

use serde::Deserialize;
use utoipa::ToSchema;

use super::field_schemas::{CurrencyCode, IntervalCount, Quantity, UnitPrice};
use crate::http::input::Field;
use crate::services::memberships::{CycleInput, PricingInput};

/// `pricingInfo` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct PricingInfoInput {
    /// ISO 4217 code.
    #[serde(default)]
    #[schema(required = true, value_type = CurrencyCode)]
    pub currency: Field<String>,
    /// The price per period: a decimal string > 0 with at most the currency's decimals.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "29.97", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    pub total_amount: Field<String>,
    /// Optional, > 0 (a number or a decimal string). With quantity, their product must equal
    /// totalAmount; alone, it is kept as given.
    #[serde(default)]
    #[schema(value_type = Option<UnitPrice>)]
    pub price_per_unit: Field<serde_json::Value>,
    /// Optional integer from 1 to 1,000,000,000.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Field<i64>,
}

/// `billingCycle` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct BillingCycleInput {
    /// Daily, Weekly, Monthly or Annually.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "Monthly", pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    pub interval_type: Field<String>,
    /// Integer ≥ 1, default 1; a cycle is at most 3 years (Daily 1095, Weekly 156, Monthly 36,
    /// Annually 3).
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<serde_json::Value>,
}

impl From<PricingInfoInput> for PricingInput {
    fn from(p: PricingInfoInput) -> Self {
        PricingInput {
            currency: p.currency,
            total_amount: p.total_amount,
            price_per_unit: p.price_per_unit,
            quantity: p.quantity,
        }
    }
}

impl From<BillingCycleInput> for CycleInput {
    fn from(c: BillingCycleInput) -> Self {
        CycleInput {
            interval_type: c.interval_type,
            interval_count: c.interval_count,
        }
    }
}
