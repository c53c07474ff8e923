//! Dates, billing intervals and form amounts as a page in its language shows them; dates in UTC.
//! Amounts as people read them are [`recur_domain::money::display_amount`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use recur_domain::calendar::IntervalType;
use recur_domain::money::{format_amount, Currency};
use rust_decimal::Decimal;

/// The amount as the form's input shows it: `1234.50`, no grouping.
pub fn input_amount(minor: i64, currency: Currency) -> String {
    format_amount(minor, currency)
}

/// A date for a page in `lang`: `23 Dec 2026` (en), `23.12.2026` (de). Billing runs in UTC, so
/// dates are UTC dates.
pub fn display_date(at: DateTime<Utc>, lang: &str) -> String {
    if lang == "de" {
        at.format("%d.%m.%Y").to_string()
    } else {
        at.format("%-d %b %Y").to_string()
    }
}

/// A usage quantity for a page in `lang`, exact and without grouping: `15.75` (en), `15,75`
/// (de).
pub fn display_quantity(quantity: Decimal, lang: &str) -> String {
    let text = quantity.normalize().to_string();
    if lang == "de" {
        text.replace('.', ",")
    } else {
        text
    }
}

/// A date and time in UTC, to the second, in the page's language: for the dashboard's logs.
pub fn display_time(at: DateTime<Utc>, lang: &str) -> String {
    if lang == "de" {
        at.format("%d.%m.%Y %H:%M:%S UTC").to_string()
    } else {
        at.format("%-d %b %Y %H:%M:%S UTC").to_string()
    }
}

/// How often a plan bills: `per month`, `every 3 months`, from the page's strings
/// (`interval_<Type>` for one unit, `interval_<Type>_n` with `{n}` for several).
pub fn interval_phrase(
    strings: &BTreeMap<String, String>,
    interval: IntervalType,
    count: u32,
) -> String {
    let key = if count == 1 {
        format!("interval_{}", interval.as_str())
    } else {
        format!("interval_{}_n", interval.as_str())
    };
    strings
        .get(&key)
        .map(|text| text.replace("{n}", &count.to_string()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn input_amounts_are_plain_decimals() {
        assert_eq!(input_amount(4990, c("EUR")), "49.90");
    }

    #[test]
    fn quantities_are_exact_in_the_pages_language() {
        let q: Decimal = "15.750".parse().unwrap();
        assert_eq!(display_quantity(q, "en"), "15.75");
        assert_eq!(display_quantity(q, "de"), "15,75");
        assert_eq!(display_quantity(Decimal::from(1000), "de"), "1000");
    }

    #[test]
    fn dates_and_intervals_read_naturally() {
        let at = DateTime::parse_from_rfc3339("2026-12-03T23:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(display_date(at, "en"), "3 Dec 2026");
        assert_eq!(display_date(at, "de"), "03.12.2026");
        let strings = crate::i18n::Strings::load().unwrap();
        let en = strings.for_accept_language(None);
        assert_eq!(interval_phrase(en, IntervalType::Monthly, 1), "per month");
        assert_eq!(
            interval_phrase(en, IntervalType::Monthly, 3),
            "every 3 months"
        );
        let de = strings.for_accept_language(Some("de"));
        assert_eq!(interval_phrase(de, IntervalType::Annually, 1), "pro Jahr");
    }
}
