//! Money: ISO 4217 currencies and exact amounts held as integer minor units.
//!
//! Amounts never pass through floating point. A decimal string such as `"10.50"` becomes the
//! integer `1050` (USD cents); the number of minor-unit digits is the currency's ISO 4217
//! exponent (JPY 0, USD 2, BHD 3).

use std::fmt;
use std::str::FromStr;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest amount any input may hold, in minor units of its currency: 15 digits
/// (9,999,999,999,999.99 USD, 999,999,999,999,999 JPY, 999,999,999,999.999 BHD). Far beyond any
/// real price, yet about 9,000 times below `i64::MAX`, so the sums the billing makes of such
/// amounts (invoice lines, credit, refunds) never overflow; a plan's price per period
/// (`pricePerUnit × quantity`) is held to it too.
pub const MAX_AMOUNT_MINOR: i64 = 999_999_999_999_999;

/// A currency that amounts can be expressed in: an ISO 4217 code with a minor-unit exponent.
///
/// Serialized as its uppercase three-letter code, for example `"USD"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Currency(iso_currency::Currency);

impl Currency {
    /// Parses a three-letter ISO 4217 code, case-insensitively (`"usd"` and `"USD"` both work).
    ///
    /// Rejected: unknown codes, and codes that are not a means of payment: special codes without
    /// a minor unit (`XXX`, `XAU`, `XDR`, …) and fund codes (`CLF`, `UYI`, `UYW`, …).
    pub fn parse(code: &str) -> Result<Currency, MoneyError> {
        if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(MoneyError::UnknownCurrency);
        }
        let inner = iso_currency::Currency::from_code(&code.to_ascii_uppercase())
            .ok_or(MoneyError::UnknownCurrency)?;
        if inner.exponent().is_none() || inner.is_special() || inner.is_fund() {
            return Err(MoneyError::UnknownCurrency);
        }
        Ok(Currency(inner))
    }

    /// Every currency [`Currency::parse`] accepts, in code order.
    pub fn accepted() -> impl Iterator<Item = Currency> {
        (0..26u32.pow(3)).filter_map(|n| {
            let letter = |place: u32| b'A' + (n / 26u32.pow(place) % 26) as u8;
            let code = [letter(2), letter(1), letter(0)];
            std::str::from_utf8(&code)
                .ok()
                .and_then(|code| Currency::parse(code).ok())
        })
    }

    /// The uppercase ISO 4217 code, for example `"USD"`.
    pub fn code(&self) -> &'static str {
        self.0.code()
    }

    /// The currency's symbol (`€`, `$`, `¥`), or its code when it has no symbol of its own.
    pub fn symbol(&self) -> String {
        let symbol = self.0.symbol().symbol;
        if symbol.is_empty() || symbol == "¤" {
            self.code().to_string()
        } else {
            symbol
        }
    }

    /// Number of decimal digits of the minor unit: JPY 0, USD 2, BHD 3.
    pub fn exponent(&self) -> u32 {
        // `parse` only admits currencies that have an exponent, so the default is never used.
        self.0.exponent().map_or(0, u32::from)
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Currency {
    type Err = MoneyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Currency::parse(s)
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Currency::parse(&code).map_err(serde::de::Error::custom)
    }
}

/// Why a currency code or an amount was rejected. The messages are written for an API field
/// error, for example `errors["pricingInfo.totalAmount"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoneyError {
    /// Not a supported three-letter ISO 4217 currency code.
    UnknownCurrency,
    /// Not a plain decimal number (digits with an optional single `.`).
    InvalidFormat,
    /// Zero or negative where a positive amount is required.
    NotPositive,
    /// More decimal places than the currency's minor unit has.
    TooManyDecimals {
        /// Code of the currency, for example `"USD"`.
        currency: &'static str,
        /// The currency's exponent: the largest number of decimal places allowed.
        max: u32,
    },
    /// The amount is above [`MAX_AMOUNT_MINOR`] in the currency.
    TooLarge(Currency),
}

impl fmt::Display for MoneyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoneyError::UnknownCurrency => {
                f.write_str("must be a supported 3-letter ISO 4217 currency code")
            }
            MoneyError::InvalidFormat => f.write_str(
                "must be a decimal number such as 10.50 (digits and an optional '.', no sign or exponent)",
            ),
            MoneyError::NotPositive => f.write_str("must be greater than 0"),
            MoneyError::TooManyDecimals { currency, max } => {
                write!(f, "too many decimal places for {currency} (max {max})")
            }
            MoneyError::TooLarge(currency) => write!(
                f,
                "must be at most {}",
                format_amount(MAX_AMOUNT_MINOR, *currency)
            ),
        }
    }
}

impl std::error::Error for MoneyError {}

/// Parses a positive decimal string into integer minor units of `currency`.
///
/// Accepted: ASCII digits with an optional single `.` followed by at least one digit, and at most
/// `currency.exponent()` decimals (`"10"`, `"10.5"`, `"10.50"` for USD). Rejected: signs,
/// exponents, spaces, separators, more decimals than the currency has, values above
/// [`MAX_AMOUNT_MINOR`], and zero. A leading `-` on an otherwise valid number reports
/// [`MoneyError::NotPositive`].
pub fn parse_amount(input: &str, currency: Currency) -> Result<i64, MoneyError> {
    let (negative, unsigned) = match input.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, input),
    };
    let (whole, fraction) = split_decimal(unsigned)?;
    let max = currency.exponent();
    if fraction.len() > max as usize {
        return Err(MoneyError::TooManyDecimals {
            currency: currency.code(),
            max,
        });
    }
    if negative {
        return Err(MoneyError::NotPositive);
    }
    match digits_to_minor(whole, fraction, max).ok_or(MoneyError::TooLarge(currency))? {
        0 => Err(MoneyError::NotPositive),
        minor if minor > MAX_AMOUNT_MINOR => Err(MoneyError::TooLarge(currency)),
        minor => Ok(minor),
    }
}

/// Splits `"12.34"` into `("12", "34")`, checking that both parts are plain ASCII digits.
fn split_decimal(input: &str) -> Result<(&str, &str), MoneyError> {
    let (whole, fraction) = match input.split_once('.') {
        Some((_, "")) => return Err(MoneyError::InvalidFormat),
        Some(parts) => parts,
        None => (input, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(MoneyError::InvalidFormat);
    }
    Ok((whole, fraction))
}

/// Combines whole and fraction digit strings into minor units, padding the fraction to `exponent`;
/// `None` beyond `i64`.
fn digits_to_minor(whole: &str, fraction: &str, exponent: u32) -> Option<i64> {
    let padding = (exponent as usize).saturating_sub(fraction.len());
    whole
        .bytes()
        .chain(fraction.bytes())
        .chain(std::iter::repeat_n(b'0', padding))
        .try_fold(0i64, |acc, digit| {
            acc.checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(digit - b'0')))
        })
}

/// Converts an exact decimal value into minor units of `currency`, without rounding.
///
/// Fails with [`MoneyError::TooManyDecimals`] when the value has more significant decimals
/// than the currency's exponent (`10.500` is fine for USD, `10.505` is not), and with
/// [`MoneyError::TooLarge`] when its magnitude is above [`MAX_AMOUNT_MINOR`]. The sign is kept;
/// checking that an amount is positive is the caller's rule.
pub fn decimal_to_minor(value: Decimal, currency: Currency) -> Result<i64, MoneyError> {
    let exponent = currency.exponent();
    if value.normalize().scale() > exponent {
        return Err(MoneyError::TooManyDecimals {
            currency: currency.code(),
            max: exponent,
        });
    }
    value
        .checked_mul(minor_units_per_major(exponent))
        .and_then(|minor| minor.to_i64())
        .filter(|minor| minor.unsigned_abs() <= MAX_AMOUNT_MINOR.unsigned_abs())
        .ok_or(MoneyError::TooLarge(currency))
}

/// The amount of a refund in minor units of `currency`: the `asked` amount, or everything `left`
/// (minor units, more than 0) when none is asked. The error is the message for the refund's
/// `amount` field: more decimals than the currency has, not greater than 0, or more than is left.
pub fn refund_amount(asked: Option<Decimal>, left: i64, currency: Currency) -> Result<i64, String> {
    let Some(asked) = asked else {
        return Ok(left);
    };
    let amount = decimal_to_minor(asked, currency).map_err(|e| e.to_string())?;
    if amount <= 0 || amount > left {
        return Err(format!(
            "must be greater than 0 and at most {} (what is left to refund)",
            format_amount(left, currency)
        ));
    }
    Ok(amount)
}

/// Converts minor units into the exact decimal amount, with exactly `currency.exponent()`
/// decimal places (`1050` USD becomes `10.50`).
pub fn minor_to_decimal(minor: i64, currency: Currency) -> Decimal {
    Decimal::new(minor, currency.exponent())
}

/// Formats minor units as a plain decimal string with the currency's number of decimals:
/// `"10.50"` (USD), `"1000"` (JPY), `"1.234"` (BHD), `"-0.05"` (USD).
pub fn format_amount(minor: i64, currency: Currency) -> String {
    minor_to_decimal(minor, currency).to_string()
}

/// `minor` units of `currency` as people read them in `lang`: currency symbol, digit grouping
/// and decimal mark, exact to the minor unit: `€1,234.50` (en), `1.234,50 €` (de).
pub fn display_amount(minor: i64, currency: Currency, lang: &str) -> String {
    let plain = format_amount(minor, currency);
    let (sign, digits) = match plain.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", plain.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let (group, decimal) = if lang == "de" { ('.', ',') } else { (',', '.') };
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(group);
        }
        grouped.push(c);
    }
    let number = if fraction.is_empty() {
        grouped
    } else {
        format!("{grouped}{decimal}{fraction}")
    };
    let symbol = currency.symbol();
    if lang == "de" {
        format!("{sign}{number} {symbol}")
    } else if symbol.chars().count() > 1 {
        format!("{sign}{symbol} {number}")
    } else {
        format!("{sign}{symbol}{number}")
    }
}

/// Rounds a decimal amount to whole minor units of `currency`, halves away from zero
/// (`0.005` USD becomes 1 cent, `-0.005` becomes -1 cent), which is "half-up" on magnitudes.
///
/// Values beyond the `i64` range saturate at `i64::MIN` / `i64::MAX`.
pub fn round_half_up(value: Decimal, currency: Currency) -> i64 {
    let exponent = currency.exponent();
    let rounded = value.round_dp_with_strategy(exponent, RoundingStrategy::MidpointAwayFromZero);
    let saturated = if value.is_sign_negative() {
        i64::MIN
    } else {
        i64::MAX
    };
    rounded
        .checked_mul(minor_units_per_major(exponent))
        .and_then(|minor| minor.to_i64())
        .unwrap_or(saturated)
}

/// `10^exponent` as a decimal: how many minor units make one major unit.
fn minor_units_per_major(exponent: u32) -> Decimal {
    Decimal::from(10u64.pow(exponent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn cur(code: &str) -> Currency {
        Currency::parse(code).expect("test currency code is valid")
    }

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("test decimal literal is valid")
    }

    #[test]
    fn accepted_lists_exactly_the_parsable_currencies_in_order() {
        let codes: Vec<&str> = Currency::accepted().map(|c| c.code()).collect();
        assert!(codes.windows(2).all(|pair| pair[0] < pair[1]));
        for code in ["USD", "EUR", "JPY", "BHD", "XCG", "ZWG"] {
            assert!(codes.contains(&code), "{code}");
        }
        for refused in ["XXX", "XAU", "XDR", "CLF", "USN"] {
            assert!(!codes.contains(&refused), "{refused}");
        }
    }

    #[test]
    fn parses_currency_codes_case_insensitively() {
        assert_eq!(cur("usd").code(), "USD");
        assert_eq!(cur("Jpy").code(), "JPY");
        assert_eq!(cur("USD").exponent(), 2);
        assert_eq!(cur("JPY").exponent(), 0);
        assert_eq!(cur("BHD").exponent(), 3);
    }

    #[test]
    fn rejects_unknown_and_non_payment_codes() {
        for code in [
            "", "US", "USDD", "ABC", "XXX", "XAU", "XDR", "CLF", "U$D", "ÜSD", "usd ",
        ] {
            assert_eq!(
                Currency::parse(code),
                Err(MoneyError::UnknownCurrency),
                "{code}"
            );
        }
    }

    fn deserialize_currency(code: &str) -> Result<Currency, serde::de::value::Error> {
        use serde::de::IntoDeserializer;
        Currency::deserialize(code.into_deserializer())
    }

    #[test]
    fn currency_text_forms_are_the_code() {
        assert_eq!(deserialize_currency("eur"), Ok(cur("EUR")));
        assert!(deserialize_currency("XXX").is_err());
        assert_eq!(Currency::from_str("eur"), Ok(cur("EUR")));
        assert_eq!(cur("eur").to_string(), "EUR");
    }

    #[test]
    fn parses_amounts() {
        let usd = cur("USD");
        assert_eq!(parse_amount("10", usd), Ok(1000));
        assert_eq!(parse_amount("10.5", usd), Ok(1050));
        assert_eq!(parse_amount("10.50", usd), Ok(1050));
        assert_eq!(parse_amount("0.01", usd), Ok(1));
        assert_eq!(parse_amount("007.10", usd), Ok(710));
        assert_eq!(parse_amount("1000", cur("JPY")), Ok(1000));
        assert_eq!(parse_amount("1.234", cur("BHD")), Ok(1234));
    }

    #[test]
    fn rejects_too_many_decimals() {
        let err = parse_amount("10.505", cur("USD")).unwrap_err();
        assert_eq!(err.to_string(), "too many decimal places for USD (max 2)");
        let err = parse_amount("1.5", cur("JPY")).unwrap_err();
        assert_eq!(err.to_string(), "too many decimal places for JPY (max 0)");
        assert!(parse_amount("1.2345", cur("BHD")).is_err());
    }

    #[test]
    fn rejects_zero_and_negative_distinctly() {
        let usd = cur("USD");
        for input in ["0", "0.00", "-1", "-0.5", "000"] {
            assert_eq!(
                parse_amount(input, usd),
                Err(MoneyError::NotPositive),
                "{input}"
            );
        }
    }

    #[test]
    fn rejects_malformed_amounts() {
        let usd = cur("USD");
        for input in [
            "", ".", "1.", ".5", "+1", "1e3", " 1", "1 ", "1,00", "1.2.3", "--1", "abc", "١",
            "0x10", "-",
        ] {
            assert_eq!(
                parse_amount(input, usd),
                Err(MoneyError::InvalidFormat),
                "{input:?}"
            );
        }
    }

    #[test]
    fn rejects_amounts_above_the_bound() {
        let usd = cur("USD");
        assert_eq!(parse_amount("9999999999999.99", usd), Ok(MAX_AMOUNT_MINOR));
        let too_large = Err(MoneyError::TooLarge(usd));
        assert_eq!(parse_amount("10000000000000", usd), too_large);
        assert_eq!(parse_amount("92233720368547758.07", usd), too_large);
        assert_eq!(parse_amount(&"9".repeat(100), usd), too_large);
        assert_eq!(parse_amount(&format!("{}1", "0".repeat(200)), usd), Ok(100));
        assert_eq!(
            parse_amount("1000000000000000", cur("JPY"))
                .unwrap_err()
                .to_string(),
            "must be at most 999999999999999"
        );
        assert_eq!(
            MoneyError::TooLarge(cur("BHD")).to_string(),
            "must be at most 999999999999.999"
        );
    }

    #[test]
    fn converts_decimals_exactly() {
        let usd = cur("USD");
        assert_eq!(decimal_to_minor(dec("10.5"), usd), Ok(1050));
        assert_eq!(decimal_to_minor(dec("10.500"), usd), Ok(1050));
        assert_eq!(decimal_to_minor(dec("-0.05"), usd), Ok(-5));
        assert!(matches!(
            decimal_to_minor(dec("10.505"), usd),
            Err(MoneyError::TooManyDecimals { max: 2, .. })
        ));
        assert_eq!(
            decimal_to_minor(Decimal::MAX, usd),
            Err(MoneyError::TooLarge(usd))
        );
        assert_eq!(
            decimal_to_minor(dec("9999999999999.99"), usd),
            Ok(MAX_AMOUNT_MINOR)
        );
        assert_eq!(
            decimal_to_minor(dec("-9999999999999.99"), usd),
            Ok(-MAX_AMOUNT_MINOR)
        );
        assert_eq!(
            decimal_to_minor(dec("10000000000000"), usd),
            Err(MoneyError::TooLarge(usd))
        );
        assert_eq!(decimal_to_minor(dec("1.234"), cur("BHD")), Ok(1234));
        assert_eq!(minor_to_decimal(1050, usd), dec("10.50"));
    }

    #[test]
    fn formats_amounts() {
        assert_eq!(format_amount(1050, cur("USD")), "10.50");
        assert_eq!(format_amount(1000, cur("JPY")), "1000");
        assert_eq!(format_amount(1234, cur("BHD")), "1.234");
        assert_eq!(format_amount(-5, cur("USD")), "-0.05");
        assert_eq!(format_amount(0, cur("USD")), "0.00");
        assert_eq!(format_amount(i64::MIN, cur("USD")), "-92233720368547758.08");
    }

    #[test]
    fn displays_amounts_in_the_language_of_the_reader() {
        assert_eq!(display_amount(123_450, cur("EUR"), "en"), "€1,234.50");
        assert_eq!(display_amount(123_450, cur("EUR"), "de"), "1.234,50 €");
        assert_eq!(display_amount(1_000_000, cur("JPY"), "en"), "¥1,000,000");
        assert!(display_amount(1_234, cur("BHD"), "en").ends_with("1.234"));
        assert_eq!(display_amount(-5, cur("USD"), "en"), "-$0.05");
        assert_eq!(display_amount(99, cur("USD"), "en"), "$0.99");
    }

    #[test]
    fn rounds_half_away_from_zero() {
        let usd = cur("USD");
        assert_eq!(round_half_up(dec("0.005"), usd), 1);
        assert_eq!(round_half_up(dec("0.0049"), usd), 0);
        assert_eq!(round_half_up(dec("-0.005"), usd), -1);
        assert_eq!(round_half_up(dec("2.5"), cur("JPY")), 3);
        assert_eq!(round_half_up(dec("-2.5"), cur("JPY")), -3);
        assert_eq!(round_half_up(dec("0.0005"), cur("BHD")), 1);
        assert_eq!(round_half_up(Decimal::MAX, usd), i64::MAX);
        assert_eq!(round_half_up(Decimal::MIN, usd), i64::MIN);
    }

    proptest! {
        #[test]
        fn format_then_parse_round_trips(minor in 1i64..=MAX_AMOUNT_MINOR, code in prop::sample::select(vec!["USD", "JPY", "BHD"])) {
            let currency = cur(code);
            prop_assert_eq!(parse_amount(&format_amount(minor, currency), currency), Ok(minor));
        }

        /// Every amount an input can give is within the bound, and a thousand of them add up
        /// without overflow.
        #[test]
        fn accepted_amounts_are_bounded(digits in "[0-9]{1,20}(\\.[0-9]{1,3})?", code in prop::sample::select(vec!["USD", "JPY", "BHD"])) {
            if let Ok(minor) = parse_amount(&digits, cur(code)) {
                prop_assert!((1..=MAX_AMOUNT_MINOR).contains(&minor));
                prop_assert!(minor.checked_mul(1000).is_some());
            }
        }

        #[test]
        fn parse_amount_never_panics(input in "\\PC{0,40}") {
            let _ = parse_amount(&input, cur("USD"));
        }

        /// A refund is never more than what is left, never nothing, and everything left when no
        /// amount is asked.
        #[test]
        fn refunds_stay_within_what_is_left(left in 1i64..=100_000, asked in -200_000i64..=200_000) {
            let usd = cur("USD");
            prop_assert_eq!(refund_amount(None, left, usd), Ok(left));
            let asked_decimal = minor_to_decimal(asked, usd);
            match refund_amount(Some(asked_decimal), left, usd) {
                Ok(amount) => prop_assert!(amount == asked && (1..=left).contains(&amount)),
                Err(message) => prop_assert!(asked <= 0 || asked > left, "{}", message),
            }
        }

        #[test]
        fn decimal_round_trips(minor in -MAX_AMOUNT_MINOR..=MAX_AMOUNT_MINOR) {
            let usd = cur("USD");
            prop_assert_eq!(decimal_to_minor(minor_to_decimal(minor, usd), usd), Ok(minor));
        }
    }
}
