//! Amounts as people read them: currency symbol, digit grouping and decimal mark of the page's
//! language, exact to the currency's minor unit.

use recur_domain::money::{format_amount, Currency};

/// `minor` units of `currency` for a page in `lang`: `€1,234.50` (en), `1.234,50 €` (de).
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

/// The amount as the form's input shows it: `1234.50`, no grouping.
pub fn input_amount(minor: i64, currency: Currency) -> String {
    format_amount(minor, currency)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn amounts_follow_currency_and_language() {
        assert_eq!(display_amount(123_450, c("EUR"), "en"), "€1,234.50");
        assert_eq!(display_amount(123_450, c("EUR"), "de"), "1.234,50 €");
        assert_eq!(display_amount(1_000_000, c("JPY"), "en"), "¥1,000,000");
        assert!(display_amount(1_234, c("BHD"), "en").ends_with("1.234"));
        assert_eq!(display_amount(-5, c("USD"), "en"), "-$0.05");
        assert_eq!(display_amount(99, c("USD"), "en"), "$0.99");
        assert_eq!(input_amount(4990, c("EUR")), "49.90");
    }
}
