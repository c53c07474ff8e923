//! Bank account identifiers: IBAN (ISO 13616) and BIC (ISO 9362).
//!
//! IBANs are checked by the `iban_validate` crate: the country's length and BBAN format and the
//! mod 97 check digits. A BIC has no check digit and no public registry recur could consult, so
//! its rule is the structure ISO 9362 defines (four letters for the institution, an ISO 3166
//! country known to `celes`, two alphanumeric location characters, an optional three-character
//! branch); no crate for that structure is maintained beyond a first release, and the rule is
//! one expression.

use std::str::FromStr;
use std::sync::LazyLock;

use iban::{Iban, ParseBaseIbanError, ParseIbanError};
use regex::Regex;

/// `input` as an IBAN in its electronic form (upper case, no spaces), or why it is not one.
pub fn iban(input: &str) -> Result<String, String> {
    let compact: String = input
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_uppercase)
        .collect();
    if compact.is_empty() {
        return Err("must be an IBAN".into());
    }
    match Iban::from_str(&compact) {
        Ok(iban) => Ok(iban.to_string().replace(' ', "")),
        Err(ParseIbanError::InvalidBaseIban {
            source: ParseBaseIbanError::InvalidChecksum,
        }) => Err("the IBAN's check digits are wrong".into()),
        Err(ParseIbanError::UnknownCountry(_)) => {
            Err("the IBAN's country does not issue IBANs".into())
        }
        Err(ParseIbanError::InvalidBban(_)) => {
            Err("the IBAN's length or account number does not fit its country".into())
        }
        Err(ParseIbanError::InvalidBaseIban { .. }) => {
            Err("must be an IBAN: a country code, two check digits and the account number".into())
        }
    }
}

/// The last four characters of an IBAN in electronic form, shown in its place.
pub fn iban_last4(iban: &str) -> String {
    let start = iban.len().saturating_sub(4);
    iban.get(start..).unwrap_or_default().to_owned()
}

static BIC_SHAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Z]{4}([A-Z]{2})[A-Z0-9]{2}([A-Z0-9]{3})?$").expect("valid regex")
});

/// `input` as a BIC (upper case, 8 or 11 characters), or why it is not one.
pub fn bic(input: &str) -> Result<String, String> {
    let upper = input.trim().to_uppercase();
    let Some(parts) = BIC_SHAPE.captures(&upper) else {
        return Err(
            "must be a BIC: four letters, a country code, two letters or digits, and an optional \
             three-character branch"
                .into(),
        );
    };
    if celes::Country::from_alpha2(&parts[1]).is_err() {
        return Err("the BIC's country code is not an ISO 3166 country".into());
    }
    Ok(upper)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibans_are_checked_by_country_length_and_mod_97() {
        assert_eq!(
            iban("de89 3704 0044 0532 0130 00").unwrap(),
            "DE89370400440532013000"
        );
        assert_eq!(
            iban("FR1420041010050500013M02606").unwrap(),
            "FR1420041010050500013M02606"
        );
        assert!(iban("DE89370400440532013001")
            .unwrap_err()
            .contains("check digits"));
        assert!(iban("DE8937040044053201300").is_err());
        assert!(iban("XX89370400440532013000").is_err());
        assert!(iban("").is_err());
        assert!(iban("not an iban").is_err());
    }

    #[test]
    fn last_four_of_an_iban() {
        assert_eq!(iban_last4("DE89370400440532013000"), "3000");
        assert_eq!(iban_last4("AB"), "AB");
    }

    #[test]
    fn bics_have_iso_9362_structure() {
        assert_eq!(bic("deutdeff").unwrap(), "DEUTDEFF");
        assert_eq!(bic("DEUTDEFF500").unwrap(), "DEUTDEFF500");
        assert!(bic("DEUTDEF").is_err());
        assert!(bic("DEUTXXFF").unwrap_err().contains("country"));
        assert!(bic("1EUTDEFF").is_err());
        assert!(bic("DEUTDEFF50").is_err());
    }
}
