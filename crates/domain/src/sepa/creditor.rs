//! The SEPA creditor identifier (EPC262-08): the country code, two check digits, a
//! three-character creditor business code (`ZZZ` when unused) and the national identifier.
//! The check digits are ISO 7064 mod 97-10 over the national identifier followed by the country
//! code and `00`, the business code left out.

/// Longest creditor identifier: the `Max35Text` of the collection file.
const MAX_CHARS: usize = 35;

/// `input` as a creditor identifier (upper case, no spaces), or why it is not one.
pub fn creditor_id(input: &str) -> Result<String, String> {
    let compact: String = input
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_uppercase)
        .collect();
    let shape = "must be a SEPA creditor identifier: a country code, two check digits, a \
                 three-character business code and the national identifier";
    if compact.len() < 8 || compact.len() > MAX_CHARS || !compact.is_ascii() {
        return Err(shape.into());
    }
    let (country, rest) = compact.split_at(2);
    let (check, rest) = rest.split_at(2);
    let (business_code, national) = rest.split_at(3);
    if !country.bytes().all(|b| b.is_ascii_uppercase())
        || !check.bytes().all(|b| b.is_ascii_digit())
        || !business_code.bytes().all(|b| b.is_ascii_alphanumeric())
        || !national.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return Err(shape.into());
    }
    if celes::Country::from_alpha2(country).is_err() {
        return Err("the creditor identifier's country code is not an ISO 3166 country".into());
    }
    if mod97(&format!("{national}{country}{check}")) != Some(1) {
        return Err("the creditor identifier's check digits are wrong".into());
    }
    Ok(compact)
}

/// ISO 7064 mod 97-10 of an alphanumeric string, letters counted as 10 (A) to 35 (Z).
fn mod97(text: &str) -> Option<u32> {
    let mut remainder = 0u32;
    for c in text.chars() {
        let value = c.to_digit(36)?;
        remainder = if value < 10 {
            (remainder * 10 + value) % 97
        } else {
            (remainder * 100 + value) % 97
        };
    }
    Some(remainder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The check digits a national identifier needs in `country`.
    fn check_digits(national: &str, country: &str) -> String {
        let rest = mod97(&format!("{national}{country}00")).unwrap();
        format!("{:02}", 98 - rest)
    }

    #[test]
    fn published_identifiers_are_accepted() {
        // The Deutsche Bundesbank's published example.
        assert_eq!(
            creditor_id("DE98ZZZ09999999999").unwrap(),
            "DE98ZZZ09999999999"
        );
        assert_eq!(
            creditor_id("de98 zzz 0999 9999 999").unwrap(),
            "DE98ZZZ09999999999"
        );
    }

    #[test]
    fn the_business_code_is_left_out_of_the_check() {
        assert!(creditor_id("DE98ABC09999999999").is_ok());
    }

    #[test]
    fn bad_identifiers_are_refused() {
        assert!(creditor_id("DE99ZZZ09999999999")
            .unwrap_err()
            .contains("check digits"));
        assert!(creditor_id("XX98ZZZ09999999999")
            .unwrap_err()
            .contains("country"));
        assert!(creditor_id("DE98ZZZ").is_err());
        assert!(creditor_id("D198ZZZ09999999999").is_err());
        assert!(creditor_id("DE98ZZZ0999-999999").is_err());
        assert!(creditor_id(&format!("DE98ZZZ{}", "9".repeat(40))).is_err());
        assert!(creditor_id("").is_err());
    }

    proptest! {
        #[test]
        fn identifiers_with_their_check_digits_are_valid_and_others_not(
            national in "[0-9A-Z]{1,20}",
            business in "[0-9A-Z]{3}",
            wrong in 0u32..100,
        ) {
            let check = check_digits(&national, "DE");
            let id = format!("DE{check}{business}{national}");
            prop_assert_eq!(creditor_id(&id), Ok(id.clone()));
            let wrong = format!("{wrong:02}");
            prop_assume!(wrong != check);
            let bad = format!("DE{wrong}{business}{national}");
            prop_assert!(creditor_id(&bad).is_err());
        }
    }
}
