//! Mandate references (the `MndtId` of a collection file) and account holders. A reference is
//! a SEPA identifier ([`text::is_sepa_id`]): 1–35 characters of letters, digits and
//! `/ - ? : ( ) . , ' +`, no space, not starting or ending with `/` and without `//`.

use super::text;

/// Longest mandate reference.
pub const MAX_CHARS: usize = 35;

/// Longest account holder name carried into a collection file (`Max70Text`).
pub const MAX_HOLDER_CHARS: usize = 70;

/// `input` as a mandate reference, or why it is not one. Case is kept: the reference is the
/// merchant's, printed on the customer's bank statement as given.
pub fn mandate_reference(input: &str) -> Result<String, String> {
    let reference = input.trim();
    if reference.is_empty() || reference.chars().count() > MAX_CHARS {
        return Err(format!("must be 1 to {MAX_CHARS} characters"));
    }
    if !text::is_sepa_id(reference) {
        return Err(
            "may hold only letters A-Z, digits and / - ? : ( ) . , ' + (no spaces or accents), \
             and must not start or end with / nor contain //"
                .into(),
        );
    }
    Ok(reference.to_owned())
}

/// `input` as the account holder of a mandate: 1–70 characters once trimmed, no control
/// characters.
pub fn account_holder(input: &str) -> Result<String, String> {
    let holder = input.trim();
    if holder.is_empty() || holder.chars().count() > MAX_HOLDER_CHARS {
        return Err(format!("must be 1 to {MAX_HOLDER_CHARS} characters"));
    }
    if holder.chars().any(char::is_control) {
        return Err("must not hold control characters".into());
    }
    Ok(holder.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn references_of_the_sepa_set_are_kept_as_given() {
        assert_eq!(
            mandate_reference(" MANDATE-2026/001 ").unwrap(),
            "MANDATE-2026/001"
        );
        assert_eq!(mandate_reference("abc.(1)+?:,'").unwrap(), "abc.(1)+?:,'");
        assert!(mandate_reference(&"A".repeat(35)).is_ok());
    }

    #[test]
    fn other_references_are_refused() {
        for bad in [
            "",
            "   ",
            "with space",
            "MÜLLER-1",
            "a//b",
            "/a",
            "a/",
            "x&y",
        ] {
            assert!(mandate_reference(bad).is_err(), "{bad:?}");
        }
        assert!(mandate_reference(&"A".repeat(36)).is_err());
    }

    #[test]
    fn account_holders() {
        assert_eq!(account_holder(" Jörg Müller ").unwrap(), "Jörg Müller");
        assert!(account_holder("").is_err());
        assert!(account_holder(&"x".repeat(71)).is_err());
        assert!(account_holder("a\u{0}b").is_err());
    }

    proptest! {
        #[test]
        fn accepted_references_are_in_the_set(input in "\\PC{0,40}") {
            if let Ok(reference) = mandate_reference(&input) {
                prop_assert!(text::is_sepa_id(&reference));
            }
        }
    }
}
