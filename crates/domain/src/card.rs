//! Card numbers: the Luhn check, the brand from the number's prefix, and the parts that may be
//! kept (BIN and last four digits). The full number never leaves the request that carried it.

use std::fmt;

/// Card networks recognised from the number's prefix (the notification's `CardType` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardBrand {
    /// Prefix 4.
    Visa,
    /// Prefixes 51–55 and 2221–2720.
    MasterCard,
    /// Prefixes 34 and 37.
    Amex,
    /// Prefixes 3528–3589.
    Jcb,
    /// Prefix 62.
    UnionPayChina,
    /// Prefixes 6011, 644–649 and 65.
    Discover,
    /// Prefixes 300–305, 36 and 38.
    DinersClub,
    /// Prefixes 2200–2204.
    Mir,
}

impl CardBrand {
    /// The name used in notifications and on pages.
    pub fn as_str(&self) -> &'static str {
        match self {
            CardBrand::Visa => "Visa",
            CardBrand::MasterCard => "MasterCard",
            CardBrand::Amex => "AMEX",
            CardBrand::Jcb => "JCB",
            CardBrand::UnionPayChina => "UnionPayChina",
            CardBrand::Discover => "Discover",
            CardBrand::DinersClub => "DinersClub",
            CardBrand::Mir => "MIR",
        }
    }

    /// The brand Stripe names `name` (a card's `brand`: `visa`, `mastercard`, …), if recur
    /// knows it.
    pub fn of_stripe(name: &str) -> Option<CardBrand> {
        Some(match name {
            "visa" => CardBrand::Visa,
            "mastercard" => CardBrand::MasterCard,
            "amex" => CardBrand::Amex,
            "jcb" => CardBrand::Jcb,
            "unionpay" => CardBrand::UnionPayChina,
            "discover" => CardBrand::Discover,
            "diners" => CardBrand::DinersClub,
            _ => return None,
        })
    }

    /// The brand of a number (digits only), if its prefix is known.
    pub fn of(digits: &str) -> Option<CardBrand> {
        let prefix = |n: usize| digits.get(..n).and_then(|p| p.parse::<u32>().ok());
        let in_range =
            |n: usize, low: u32, high: u32| prefix(n).is_some_and(|p| (low..=high).contains(&p));
        Some(if in_range(4, 2200, 2204) {
            CardBrand::Mir
        } else if in_range(2, 51, 55) || in_range(4, 2221, 2720) {
            CardBrand::MasterCard
        } else if in_range(2, 34, 34) || in_range(2, 37, 37) {
            CardBrand::Amex
        } else if in_range(4, 3528, 3589) {
            CardBrand::Jcb
        } else if in_range(3, 300, 305) || in_range(2, 36, 36) || in_range(2, 38, 38) {
            CardBrand::DinersClub
        } else if in_range(4, 6011, 6011) || in_range(3, 644, 649) || in_range(2, 65, 65) {
            CardBrand::Discover
        } else if in_range(2, 62, 62) {
            CardBrand::UnionPayChina
        } else if in_range(1, 4, 4) {
            CardBrand::Visa
        } else {
            return None;
        })
    }
}

impl fmt::Display for CardBrand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A card number that passed the checks, with the parts that may be stored.
#[derive(Clone, PartialEq, Eq)]
pub struct CardNumber {
    digits: String,
    brand: CardBrand,
}

impl fmt::Debug for CardNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the full number, not even in debug output.
        write!(f, "CardNumber({})", self.masked())
    }
}

impl CardNumber {
    /// Parses a number typed by a person: digits with optional spaces or hyphens between groups;
    /// 12 to 19 digits, passing the Luhn check, of a recognised brand.
    pub fn parse(input: &str) -> Result<CardNumber, String> {
        let digits: String = input.chars().filter(|c| *c != ' ' && *c != '-').collect();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err("must contain only digits".into());
        }
        if !(12..=19).contains(&digits.len()) {
            return Err("must have 12 to 19 digits".into());
        }
        if !luhn_valid(&digits) {
            return Err("is not a valid card number".into());
        }
        let brand = CardBrand::of(&digits).ok_or("is not a card brand we accept")?;
        Ok(CardNumber { digits, brand })
    }

    /// The full number, digits only: for the processor and the keyed fingerprint, never storage.
    pub fn digits(&self) -> &str {
        &self.digits
    }

    /// The card network.
    pub fn brand(&self) -> CardBrand {
        self.brand
    }

    /// The first six digits (bank identification number).
    pub fn bin(&self) -> &str {
        &self.digits[..6]
    }

    /// The last four digits.
    pub fn last4(&self) -> &str {
        &self.digits[self.digits.len() - 4..]
    }

    /// BIN, asterisks, last four: `424242******4242`.
    pub fn masked(&self) -> String {
        format!(
            "{}{}{}",
            self.bin(),
            "*".repeat(self.digits.len() - 10),
            self.last4()
        )
    }
}

/// The Luhn (mod 10) check over ASCII digits.
pub fn luhn_valid(digits: &str) -> bool {
    let mut sum = 0u32;
    for (i, byte) in digits.bytes().rev().enumerate() {
        if !byte.is_ascii_digit() {
            return false;
        }
        let mut d = u32::from(byte - b'0');
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    !digits.is_empty() && sum % 10 == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stripes_brand_names_read_as_recurs() {
        assert_eq!(CardBrand::of_stripe("visa"), Some(CardBrand::Visa));
        assert_eq!(
            CardBrand::of_stripe("mastercard").map(|b| b.as_str()),
            Some("MasterCard")
        );
        assert_eq!(CardBrand::of_stripe("diners"), Some(CardBrand::DinersClub));
        assert_eq!(CardBrand::of_stripe("cartes_bancaires"), None);
    }

    #[test]
    fn test_cards_parse() {
        for number in [
            "4242 4242 4242 4242",
            "4000-0000-0000-0002",
            "4000000000009995",
            "4000000000003220",
        ] {
            let card = CardNumber::parse(number).unwrap();
            assert_eq!(card.brand(), CardBrand::Visa);
        }
        let card = CardNumber::parse("4242424242424242").unwrap();
        assert_eq!(card.masked(), "424242******4242");
        assert_eq!(card.last4(), "4242");
        assert_eq!(format!("{card:?}"), "CardNumber(424242******4242)");
    }

    #[test]
    fn brands_by_prefix() {
        for (number, brand) in [
            ("5555555555554444", CardBrand::MasterCard),
            ("2223003122003222", CardBrand::MasterCard),
            ("378282246310005", CardBrand::Amex),
            ("6011111111111117", CardBrand::Discover),
            ("3566002020360505", CardBrand::Jcb),
            ("36227206271667", CardBrand::DinersClub),
            ("6200000000000005", CardBrand::UnionPayChina),
            ("2200000000000004", CardBrand::Mir),
        ] {
            assert_eq!(
                CardNumber::parse(number).map(|c| c.brand()),
                Ok(brand),
                "{number}"
            );
        }
    }

    #[test]
    fn bad_numbers_are_refused() {
        assert!(CardNumber::parse("4242424242424241").is_err());
        assert!(CardNumber::parse("4242").is_err());
        assert!(CardNumber::parse("4242x42424242424").is_err());
        assert!(CardNumber::parse("").is_err());
        assert!(CardNumber::parse("9999999999999995").is_err());
    }

    proptest! {
        #[test]
        fn one_changed_digit_breaks_luhn(body in "[0-9]{15}", pos in 0usize..16, delta in 1u8..10) {
            // Complete a 16-digit number with its check digit, then change one digit.
            let check = (0..10u8)
                .map(|d| format!("{body}{d}"))
                .find(|n| luhn_valid(n))
                .unwrap();
            let mut bytes = check.into_bytes();
            bytes[pos] = b'0' + (bytes[pos] - b'0' + delta) % 10;
            prop_assert!(!luhn_valid(std::str::from_utf8(&bytes).unwrap()));
        }
    }
}
