//! The card details a person types on a hosted page — number, expiry, security code, name —
//! checked together so the page can show every mistake at once.

use crate::card::{CardBrand, CardNumber};

/// A card's expiry month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expiry {
    /// Four-digit year.
    pub year: i32,
    /// 1–12.
    pub month: u32,
}

impl Expiry {
    /// Parses `MM/YY` (also `MM / YY`, `MMYY`, `MM/YYYY`).
    pub fn parse(input: &str) -> Result<Expiry, String> {
        let digits: String = input.chars().filter(|c| c.is_ascii_digit()).collect();
        let rest_ok = input
            .chars()
            .all(|c| c.is_ascii_digit() || c == '/' || c == ' ');
        let (month, year) = match (rest_ok, digits.len()) {
            (true, 4) => (&digits[..2], format!("20{}", &digits[2..])),
            (true, 6) => (&digits[..2], digits[2..].to_string()),
            _ => return Err("must be a month and year, MM/YY".into()),
        };
        let month: u32 = month.parse().map_err(|_| "must be MM/YY".to_string())?;
        let year: i32 = year.parse().map_err(|_| "must be MM/YY".to_string())?;
        if !(1..=12).contains(&month) {
            return Err("has no such month".into());
        }
        Ok(Expiry { year, month })
    }

    /// Whether the card still works in `year`-`month` (a card is valid through its expiry month).
    pub fn valid_in(&self, year: i32, month: u32) -> bool {
        (self.year, self.month) >= (year, month)
    }
}

/// A security code of the right length for the brand: four digits for American Express, three
/// for every other network.
pub fn check_cvc(cvc: &str, brand: Option<CardBrand>) -> Result<(), String> {
    let expected = if brand == Some(CardBrand::Amex) { 4 } else { 3 };
    if cvc.len() == expected && cvc.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(format!("must be {expected} digits"))
    }
}

/// Card details as typed.
#[derive(Debug, Default, Clone)]
pub struct CardEntry<'a> {
    /// The number, spaces allowed.
    pub number: &'a str,
    /// `MM/YY`.
    pub expiry: &'a str,
    /// Security code.
    pub cvc: &'a str,
    /// Name on the card.
    pub holder: &'a str,
}

/// Card details that passed every check. The number stays in memory only as long as the request
/// that carried it.
#[derive(Debug)]
pub struct CheckedCard {
    /// The number.
    pub number: CardNumber,
    /// Expiry month.
    pub expiry: Expiry,
    /// Name on the card, trimmed.
    pub holder: String,
}

/// Which field failed and why, in form order.
pub type EntryErrors = Vec<(&'static str, String)>;

impl CardEntry<'_> {
    /// Checks every field against the current `year` and `month` (UTC); every failing field is
    /// reported, keyed `cardNumber`, `expiry`, `cvc`, `holder`.
    pub fn check(&self, year: i32, month: u32) -> Result<CheckedCard, EntryErrors> {
        let mut errors = EntryErrors::new();
        let number = match self.number.trim() {
            "" => Err("is required".to_string()),
            n => CardNumber::parse(n),
        }
        .map_err(|e| errors.push(("cardNumber", e)))
        .ok();
        let expiry = match self.expiry.trim() {
            "" => Err("is required".to_string()),
            e => Expiry::parse(e).and_then(|e| {
                if e.valid_in(year, month) {
                    Ok(e)
                } else {
                    Err("the card has expired".to_string())
                }
            }),
        }
        .map_err(|e| errors.push(("expiry", e)))
        .ok();
        let brand = number.as_ref().map(CardNumber::brand);
        if let Err(e) = match self.cvc.trim() {
            "" => Err("is required".to_string()),
            c => check_cvc(c, brand),
        } {
            errors.push(("cvc", e));
        }
        let holder = self.holder.split_whitespace().collect::<Vec<_>>().join(" ");
        if holder.is_empty() {
            errors.push(("holder", "is required".into()));
        } else if holder.chars().count() > 100 {
            errors.push(("holder", "must be at most 100 characters".into()));
        }
        match (number, expiry) {
            (Some(number), Some(expiry)) if errors.is_empty() => Ok(CheckedCard {
                number,
                expiry,
                holder,
            }),
            _ => Err(errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry<'a>(number: &'a str, expiry: &'a str, cvc: &'a str) -> CardEntry<'a> {
        CardEntry {
            number,
            expiry,
            cvc,
            holder: "Ada Lovelace",
        }
    }

    #[test]
    fn a_good_card_passes() {
        let card = entry("4242 4242 4242 4242", "12/30", "123")
            .check(2026, 11)
            .unwrap();
        assert_eq!(
            card.expiry,
            Expiry {
                year: 2030,
                month: 12
            }
        );
        assert_eq!(card.holder, "Ada Lovelace");
    }

    #[test]
    fn every_failing_field_is_reported() {
        let errors = CardEntry::default().check(2026, 11).unwrap_err();
        let fields: Vec<_> = errors.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["cardNumber", "expiry", "cvc", "holder"]);
        let errors = entry("4242 4242 4242 4241", "13/30", "12")
            .check(2026, 11)
            .unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn expiry_month_is_inclusive() {
        assert!(entry("4242424242424242", "11/26", "123")
            .check(2026, 11)
            .is_ok());
        let errors = entry("4242424242424242", "10/26", "123")
            .check(2026, 11)
            .unwrap_err();
        assert_eq!(errors, [("expiry", "the card has expired".to_string())]);
    }

    #[test]
    fn amex_takes_four_digit_codes() {
        assert!(entry("378282246310005", "01/29", "1234")
            .check(2026, 11)
            .is_ok());
        assert!(entry("378282246310005", "01/29", "123")
            .check(2026, 11)
            .is_err());
        assert!(entry("4242424242424242", "01/29", "1234")
            .check(2026, 11)
            .is_err());
    }

    #[test]
    fn expiry_forms() {
        assert_eq!(
            Expiry::parse("0730"),
            Ok(Expiry {
                year: 2030,
                month: 7
            })
        );
        assert_eq!(
            Expiry::parse("07 / 2031"),
            Ok(Expiry {
                year: 2031,
                month: 7
            })
        );
        assert!(Expiry::parse("00/30").is_err());
        assert!(Expiry::parse("7/30").is_err());
        assert!(Expiry::parse("07-30").is_err());
    }

    proptest! {
        #[test]
        fn expiry_round_trips(month in 1u32..=12, year in 2000i32..2100) {
            let text = format!("{month:02}/{:02}", year % 100);
            let parsed = Expiry::parse(&text).unwrap();
            prop_assert_eq!(parsed.month, month);
            prop_assert_eq!(parsed.year % 100, year % 100);
            prop_assert!(parsed.valid_in(parsed.year, month));
        }
    }
}
