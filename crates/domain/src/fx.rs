//! Conversion to US dollars for the `UsdAmount` of transaction notifications: a rate table
//! (units of USD per one unit of the currency) with a rate for **every** currency recur accepts,
//! so a notification always carries a `UsdAmount`. The built-in reference table covers them all;
//! the operator's `RECUR_USD_RATES` replaces the rates it names and keeps the others.

use std::collections::BTreeMap;

use rust_decimal::{Decimal, RoundingStrategy};

use crate::money::{minor_to_decimal, Currency};

/// The reference rates recur ships with, as `CODE=USD per unit`, one for every currency
/// [`Currency::accepted`] lists. They are approximate reference values, not a market feed:
/// operators who report in dollars set their own with `RECUR_USD_RATES`. Pegged currencies carry
/// their peg; a superseded code recur still accepts (`HRK`, `SLL`, `VES`, `ZWL`) carries its
/// successor's rate at the official conversion.
#[rustfmt::skip]
const REFERENCE_RATES: &str = "AED=0.2723,AFN=0.014,ALL=0.011,AMD=0.0026,AOA=0.0011,ARS=0.001,AUD=0.66,AWG=0.5587,\
AZN=0.5882,BAM=0.55,BBD=0.5,BDT=0.0084,BGN=0.55,BHD=2.6596,BIF=0.00034,BMD=1,BND=0.74,\
BOB=0.1447,BRL=0.20,BSD=1,BTN=0.012,BWP=0.074,BYN=0.31,BZD=0.5,CAD=0.73,CDF=0.00035,\
CHF=1.13,CLP=0.00106,CNY=0.14,COP=0.00024,CRC=0.0019,CUC=1,CUP=0.0417,CVE=0.0098,CZK=0.043,\
DJF=0.0056,DKK=0.145,DOP=0.0167,DZD=0.0074,EGP=0.0206,ERN=0.0667,ETB=0.0083,EUR=1.08,\
FJD=0.44,FKP=1.27,GBP=1.27,GEL=0.37,GHS=0.065,GIP=1.27,GMD=0.0143,GNF=0.000116,GTQ=0.129,\
GYD=0.0048,HKD=0.128,HNL=0.04,HRK=0.1433,HTG=0.0076,HUF=0.0028,IDR=0.000063,ILS=0.27,\
INR=0.012,IQD=0.00076,IRR=0.0000238,ISK=0.0072,JMD=0.0064,JOD=1.41,JPY=0.0067,KES=0.0077,\
KGS=0.0116,KHR=0.000245,KMF=0.0022,KPW=0.00111,KRW=0.00073,KWD=3.25,KYD=1.2,KZT=0.0021,\
LAK=0.0000457,LBP=0.0000112,LKR=0.0033,LRD=0.0052,LSL=0.054,LYD=0.206,MAD=0.1,MDL=0.056,\
MGA=0.00022,MKD=0.0175,MMK=0.00048,MNT=0.00029,MOP=0.124,MRU=0.025,MUR=0.0217,MVR=0.0649,\
MWK=0.00058,MXN=0.058,MYR=0.22,MZN=0.0157,NAD=0.054,NGN=0.00065,NIO=0.0272,NOK=0.093,\
NPR=0.0075,NZD=0.60,OMR=2.6008,PAB=1,PEN=0.266,PGK=0.255,PHP=0.0172,PKR=0.0036,PLN=0.25,\
PYG=0.00013,QAR=0.2747,RON=0.22,RSD=0.0092,RUB=0.011,RWF=0.00075,SAR=0.2667,SBD=0.119,\
SCR=0.073,SDG=0.00166,SEK=0.095,SGD=0.74,SHP=1.27,SLE=0.0444,SLL=0.0000444,SOS=0.00175,\
SRD=0.029,SSP=0.00077,STN=0.0441,SVC=0.1143,SYP=0.0000769,SZL=0.054,THB=0.028,TJS=0.094,\
TMT=0.2857,TND=0.32,TOP=0.42,TRY=0.030,TTD=0.147,TWD=0.031,TZS=0.00038,UAH=0.024,\
UGX=0.00027,USD=1,UYU=0.025,UZS=0.000079,VED=0.0274,VES=0.0000000274,VND=0.00004,VUV=0.0084,\
WST=0.36,XAF=0.001646,XCD=0.3704,XCG=0.5587,XOF=0.001646,XPF=0.00905,YER=0.004,ZAR=0.054,\
ZMW=0.038,ZWG=0.073,ZWL=0.0000292";

/// The largest rate a table may hold. No currency is worth a million dollars a unit, and the
/// bound keeps the conversion of any amount far inside what a [`Decimal`] holds.
const MAX_RATE: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

/// USD per unit of each currency; holds a rate for every currency recur accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsdRates(BTreeMap<&'static str, Decimal>);

impl UsdRates {
    /// The reference table with the rates of `overrides` in place: `CODE=RATE` pairs separated by
    /// commas (`EUR=1.08,GBP=1.27`; empty for the reference table alone). Codes must be currencies
    /// recur accepts, rates positive decimals of at most 1,000,000; `USD` is always 1. A table
    /// that would lack the rate of an accepted currency is refused, naming the codes: recur then
    /// does not start, rather than notify without a `UsdAmount`.
    pub fn parse(overrides: &str) -> Result<UsdRates, String> {
        let mut rates = pairs(REFERENCE_RATES).map_err(|why| format!("reference table: {why}"))?;
        rates.extend(pairs(overrides)?);
        rates.insert("USD", Decimal::ONE);
        let missing: Vec<&str> = Currency::accepted()
            .map(|currency| currency.code())
            .filter(|code| !rates.contains_key(code))
            .collect();
        if !missing.is_empty() {
            return Err(format!("no USD rate for {}", missing.join(", ")));
        }
        Ok(UsdRates(rates))
    }

    /// `minor` units of `currency` in US dollars, rounded half away from zero to the cent.
    pub fn to_usd(&self, minor: i64, currency: Currency) -> Decimal {
        // `parse` refuses a table without the rate of an accepted currency, so the default is
        // never used; the rate bound keeps the product of any `i64` amount exact.
        let rate = self.0.get(currency.code()).copied().unwrap_or_default();
        minor_to_decimal(minor, currency)
            .saturating_mul(rate)
            .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
    }
}

/// The `CODE=RATE` pairs of `text`, checked.
fn pairs(text: &str) -> Result<BTreeMap<&'static str, Decimal>, String> {
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
        if rate <= Decimal::ZERO || rate > MAX_RATE {
            return Err(format!(
                "the rate of {} must be positive and at most {MAX_RATE}",
                currency.code()
            ));
        }
        rates.insert(currency.code(), rate);
    }
    Ok(rates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    fn usd(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn converts_with_the_currency_minor_unit() {
        let rates = UsdRates::parse("EUR=1.08,JPY=0.0067,BHD=2.6596").unwrap();
        assert_eq!(rates.to_usd(1000, currency("EUR")), usd("10.80"));
        assert_eq!(rates.to_usd(1000, currency("JPY")), usd("6.70"));
        assert_eq!(rates.to_usd(1500, currency("BHD")), usd("3.99"));
        assert_eq!(rates.to_usd(4990, currency("USD")), usd("49.90"));
    }

    #[test]
    fn the_reference_table_has_a_rate_for_every_accepted_currency() {
        let reference = pairs(REFERENCE_RATES).unwrap();
        let accepted: Vec<&str> = Currency::accepted().map(|c| c.code()).collect();
        let listed: Vec<&str> = reference.keys().copied().collect();
        assert_eq!(listed, accepted, "one rate per accepted currency, no other");
        assert!(UsdRates::parse("").is_ok());
    }

    #[test]
    fn overrides_replace_only_the_rates_they_name() {
        let rates = UsdRates::parse("EUR=1.10, GBP = 1.30").unwrap();
        assert_eq!(rates.to_usd(1000, currency("EUR")), usd("11.00"));
        assert_eq!(rates.to_usd(1000, currency("GBP")), usd("13.00"));
        assert_eq!(
            rates.to_usd(100_000, currency("THB")),
            usd("28.00"),
            "the reference rate of a currency the operator did not name"
        );
        let usd_override = UsdRates::parse("USD=2").unwrap();
        assert_eq!(usd_override.to_usd(100, currency("USD")), usd("1.00"));
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(UsdRates::parse("EUR").is_err());
        assert!(UsdRates::parse("XYZ=1").is_err());
        assert!(
            UsdRates::parse("XAU=2300").is_err(),
            "not an accepted currency"
        );
        assert!(UsdRates::parse("EUR=-1").is_err());
        assert!(UsdRates::parse("EUR=0").is_err());
        assert!(UsdRates::parse("EUR=1000000.01").is_err());
        assert!(UsdRates::parse("EUR=abc").is_err());
        assert!(UsdRates::parse("EUR=1000000").is_ok());
    }

    proptest! {
        #[test]
        fn usd_is_identity_and_conversion_is_monotonic(a in 0i64..10_000_000_000, b in 0i64..10_000_000_000) {
            let rates = UsdRates::parse("").unwrap();
            let usd = currency("USD");
            prop_assert_eq!(rates.to_usd(a, usd), minor_to_decimal(a, usd));
            let eur = currency("EUR");
            let (low, high) = (a.min(b), a.max(b));
            prop_assert!(rates.to_usd(low, eur) <= rates.to_usd(high, eur));
        }

        #[test]
        fn any_amount_converts_exactly_at_the_largest_rate(
            minor in any::<i64>(),
            code in prop::sample::select(vec!["JPY", "EUR", "BHD"]),
        ) {
            let rates = UsdRates::parse(&format!("{code}=1000000")).unwrap();
            let currency = currency(code);
            let exact = minor_to_decimal(minor, currency).checked_mul(MAX_RATE);
            prop_assert!(exact.is_some());
            prop_assert_eq!(
                Some(rates.to_usd(minor, currency)),
                exact.map(|d| d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
            );
        }
    }
}
