//! Conversion to US dollars for the `UsdAmount` of transaction notifications: a rate table
//! (units of USD per one unit of the currency) configured by the operator, with a built-in
//! default.

use std::collections::BTreeMap;

use rust_decimal::{Decimal, RoundingStrategy};

use crate::money::{minor_to_decimal, Currency};

/// The rates recur ships with, as `CODE=USD per unit`. Operators replace them with
/// `RECUR_USD_RATES`; they are reference values, not a market feed.
pub const DEFAULT_RATES: &str = "USD=1,EUR=1.08,GBP=1.27,CHF=1.13,JPY=0.0067,CAD=0.73,AUD=0.66,\
NZD=0.60,SEK=0.095,NOK=0.093,DKK=0.145,PLN=0.25,CZK=0.043,HUF=0.0028,RON=0.22,BGN=0.55,\
TRY=0.030,ILS=0.27,AED=0.2723,SAR=0.2667,BHD=2.6596,KWD=3.25,INR=0.012,CNY=0.14,HKD=0.128,\
SGD=0.74,KRW=0.00073,MXN=0.058,BRL=0.20,ZAR=0.054";

/// USD per unit of each currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsdRates(BTreeMap<&'static str, Decimal>);

impl UsdRates {
    /// Parses `CODE=RATE` pairs separated by commas (`EUR=1.08,GBP=1.27`). Codes must be ISO 4217
    /// currencies, rates positive decimals; `USD` is always 1.
    pub fn parse(text: &str) -> Result<UsdRates, String> {
        let mut rates = BTreeMap::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (code, rate) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not CODE=RATE"))?;
            let currency = Currency::parse(code.trim()).map_err(|e| format!("{code:?}: {e}"))?;
            let rate: Decimal = rate
                .trim()
                .parse()
                .map_err(|_| format!("{rate:?} is not a decimal rate"))?;
            if rate <= Decimal::ZERO {
                return Err(format!("the rate of {} must be positive", currency.code()));
            }
            rates.insert(currency.code(), rate);
        }
        rates.insert("USD", Decimal::ONE);
        Ok(UsdRates(rates))
    }

    /// The built-in table.
    pub fn builtin() -> UsdRates {
        UsdRates::parse(DEFAULT_RATES).expect("the built-in rate table parses")
    }

    /// `minor` units of `currency` in US dollars, rounded half-up to the cent; `None` when the
    /// table has no rate for the currency.
    pub fn to_usd(&self, minor: i64, currency: Currency) -> Option<Decimal> {
        let rate = self.0.get(currency.code())?;
        let usd = minor_to_decimal(minor, currency).checked_mul(*rate)?;
        Some(usd.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
    }

    /// Whether the table converts `currency`.
    pub fn knows(&self, currency: Currency) -> bool {
        self.0.contains_key(currency.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn converts_with_the_currency_minor_unit() {
        let rates = UsdRates::parse("EUR=1.08,JPY=0.0067,BHD=2.6596").unwrap();
        assert_eq!(
            rates.to_usd(1000, currency("EUR")),
            Some("10.80".parse().unwrap())
        );
        assert_eq!(
            rates.to_usd(1000, currency("JPY")),
            Some("6.70".parse().unwrap())
        );
        assert_eq!(
            rates.to_usd(1500, currency("BHD")),
            Some("3.99".parse().unwrap())
        );
        assert_eq!(
            rates.to_usd(4990, currency("USD")),
            Some("49.90".parse().unwrap())
        );
        assert_eq!(rates.to_usd(100, currency("GBP")), None);
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(UsdRates::parse("EUR").is_err());
        assert!(UsdRates::parse("XYZ=1").is_err());
        assert!(UsdRates::parse("EUR=-1").is_err());
        assert!(UsdRates::parse("EUR=abc").is_err());
        assert!(UsdRates::parse("").unwrap().knows(currency("USD")));
    }

    #[test]
    fn the_builtin_table_parses() {
        let rates = UsdRates::builtin();
        assert!(rates.knows(currency("EUR")) && rates.knows(currency("JPY")));
    }

    proptest! {
        #[test]
        fn usd_is_identity_and_conversion_is_monotonic(a in 0i64..10_000_000_000, b in 0i64..10_000_000_000) {
            let rates = UsdRates::builtin();
            let usd = currency("USD");
            prop_assert_eq!(rates.to_usd(a, usd), Some(minor_to_decimal(a, usd)));
            let eur = currency("EUR");
            let (low, high) = (a.min(b), a.max(b));
            prop_assert!(rates.to_usd(low, eur) <= rates.to_usd(high, eur));
        }
    }
}
