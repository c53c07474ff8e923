//! The SEPA character set (EPC "Latin character set", DESIGN §18).
//!
//! SEPA files may only carry `a-z A-Z 0-9 / - ? : ( ) . , ' +` and the space. [`sepa_text`]
//! turns any free text (names, remittance information) into that set, and [`is_sepa_id`] tells
//! whether an identifier (message id, end-to-end id, mandate reference, creditor id) may be
//! written as it is.
//!
//! Conversion, character by character:
//!
//! 1. A character of the set is kept.
//! 2. A few ASCII characters outside it have a close stand-in: `&` → `+`, `"` → `'`, `_` → `-`,
//!    `\` → `/`, `;` → `,`, `[ { <` → `(`, `] } >` → `)`.
//! 3. Any other ASCII character (control characters, `! # $ % * = @ ^ ` | ~`) becomes a space.
//! 4. A non-ASCII character is transliterated with [`deunicode`] and the result goes through
//!    steps 1–3: accents are dropped (`é` → `e`, and German umlauts lose their dots: `ä` → `a`,
//!    `Ö` → `O`), ligatures and `ß` are spelled out (`Æ` → `AE`, `ß` → `ss`), `€` → `EUR`, other
//!    scripts are romanised (`北` → `Bei`). A character `deunicode` has no spelling for becomes a
//!    space.
//!
//! Then runs of spaces are collapsed into one, the text is trimmed, cut to the maximum length
//! and trimmed again.

/// Whether `c` belongs to the SEPA (EPC Latin) character set:
/// `a-z A-Z 0-9 / - ? : ( ) . , ' +` and the space.
pub fn is_sepa_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '/' | '-' | '?' | ':' | '(' | ')' | '.' | ',' | '\'' | '+' | ' '
        )
}

/// Whether `id` can be written as a SEPA identifier (`MsgId`, `PmtInfId`, `EndToEndId`,
/// `MndtId`, a creditor identifier) without change: 1 to 35 characters of the SEPA set without
/// the space (letters, digits and `/ - ? : ( ) . , ' +`), not starting or ending with `/` and
/// without `//` (the EPC's rules for identifiers; the same set as mandate references).
///
/// Identifiers are never converted the way [`sepa_text`] converts free text: a changed
/// end-to-end id or mandate reference would no longer match what the bank sends back or what
/// the debtor signed.
pub fn is_sepa_id(id: &str) -> bool {
    let length = id.chars().count();
    (1..=35).contains(&length)
        && id.chars().all(|c| c != ' ' && is_sepa_char(c))
        && !id.starts_with('/')
        && !id.ends_with('/')
        && !id.contains("//")
}

/// Converts free text to the SEPA character set and cuts it to at most `max_chars` characters
/// (see the module documentation for the exact rules).
///
/// The result only holds characters for which [`is_sepa_char`] is true, has no leading,
/// trailing or double spaces, and may be empty (for an input with nothing convertible, or when
/// `max_chars` is 0). For example `sepa_text("Müller & Söhne GmbH", 70)` is
/// `"Muller + Sohne GmbH"`.
pub fn sepa_text(input: &str, max_chars: usize) -> String {
    let mut converted = String::with_capacity(input.len());
    for c in input.chars() {
        if c.is_ascii() {
            converted.push(ascii_stand_in(c));
        } else {
            match deunicode::deunicode_char(c) {
                Some(spelled) => converted.extend(spelled.chars().map(ascii_stand_in)),
                None => converted.push(' '),
            }
        }
    }
    let collapsed = converted.split_whitespace().collect::<Vec<_>>().join(" ");
    // Every character is ASCII now, so characters and bytes are the same.
    let cut = collapsed.get(..max_chars).unwrap_or(&collapsed);
    cut.trim_end().to_owned()
}

/// The character of the SEPA set that stands for the ASCII character `c`: `c` itself when it
/// belongs to the set, a close stand-in for a few others, a space for the rest. `deunicode`
/// spells non-ASCII characters in ASCII, so this also gets those spellings.
fn ascii_stand_in(c: char) -> char {
    match c {
        c if is_sepa_char(c) => c,
        '&' => '+',
        '"' => '\'',
        '_' => '-',
        '\\' => '/',
        ';' => ',',
        '[' | '{' | '<' => '(',
        ']' | '}' | '>' => ')',
        _ => ' ',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_the_sepa_set_as_it_is() {
        let all = "abcxyz ABCXYZ 0123456789 / - ? : ( ) . , ' +";
        assert_eq!(sepa_text(all, 140), all);
    }

    #[test]
    fn transliterates_accents_umlauts_and_ligatures() {
        assert_eq!(sepa_text("Müller & Söhne GmbH", 70), "Muller + Sohne GmbH");
        assert_eq!(sepa_text("Straße", 70), "Strasse");
        assert_eq!(sepa_text("Ærøskøbing", 70), "AEroskobing");
        assert_eq!(sepa_text("François Señor Łódź", 70), "Francois Senor Lodz");
        assert_eq!(sepa_text("ÄÖÜ äöü", 70), "AOU aou");
    }

    #[test]
    fn uses_stand_ins_for_some_ascii_and_spaces_for_the_rest() {
        assert_eq!(
            sepa_text("\"Quote\" <tag> [x] {y}", 70),
            "'Quote' (tag) (x) (y)"
        );
        assert_eq!(sepa_text("a_b\\c;d", 70), "a-b/c,d");
        assert_eq!(
            sepa_text("Invoice #42 @ 100% *now*!", 70),
            "Invoice 42 100 now"
        );
    }

    #[test]
    fn spells_out_the_euro_sign_and_romanises_other_scripts() {
        assert_eq!(sepa_text("10 €", 70), "10 EUR");
        assert_eq!(sepa_text("北京", 70), "Bei Jing");
        assert_eq!(sepa_text("Σωκράτης", 70), "Sokrates");
    }

    #[test]
    fn collapses_whitespace_and_control_characters_and_trims() {
        assert_eq!(sepa_text("  a \t\n b\u{0}c\r\n ", 70), "a b c");
        assert_eq!(sepa_text("a\u{00A0}\u{2003}b", 70), "a b");
    }

    #[test]
    fn cuts_to_the_maximum_and_trims_after_cutting() {
        assert_eq!(sepa_text("abcdef", 3), "abc");
        assert_eq!(sepa_text("ab cdef", 3), "ab");
        assert_eq!(sepa_text("ä".repeat(200).as_str(), 140).len(), 140);
        // "ß" is spelled with two letters: the limit counts the converted text.
        assert_eq!(sepa_text("ßßß", 5), "sssss");
        assert_eq!(sepa_text("anything", 0), "");
    }

    #[test]
    fn may_be_empty() {
        assert_eq!(sepa_text("", 70), "");
        assert_eq!(sepa_text("  @@@ ***  ", 70), "");
    }

    #[test]
    fn identifiers() {
        assert!(is_sepa_id("MNDT-2026-000123"));
        assert!(is_sepa_id("DE98ZZZ09999999999"));
        assert!(is_sepa_id("a/b(c)d:e?f.g,h'i+j"));
        assert!(is_sepa_id(&"x".repeat(35)));
        assert!(!is_sepa_id(""));
        assert!(!is_sepa_id(&"x".repeat(36)));
        assert!(!is_sepa_id("MÜLLER-1"));
        assert!(!is_sepa_id("a&b"));
        assert!(!is_sepa_id(" padded"));
        assert!(!is_sepa_id("padded "));
        assert!(!is_sepa_id("inner space"));
        assert!(!is_sepa_id("/leading"));
        assert!(!is_sepa_id("trailing/"));
        assert!(!is_sepa_id("double//slash"));
    }

    proptest! {
        #[test]
        fn output_is_always_in_the_set_trimmed_and_short_enough(input in any::<String>(), max in 0usize..200) {
            let out = sepa_text(&input, max);
            prop_assert!(out.chars().all(is_sepa_char), "{out:?}");
            prop_assert!(out.chars().count() <= max);
            prop_assert_eq!(out.trim(), out.as_str());
            prop_assert!(!out.contains("  "));
        }

        #[test]
        fn text_already_in_the_set_only_has_its_spaces_normalised(input in "[a-zA-Z0-9/?:().,'+ -]{0,80}") {
            let expected = input.split_whitespace().collect::<Vec<_>>().join(" ");
            prop_assert_eq!(sepa_text(&input, 80), expected);
        }

        #[test]
        fn converting_twice_changes_nothing(input in any::<String>()) {
            let once = sepa_text(&input, 140);
            prop_assert_eq!(sepa_text(&once, 140), once.clone());
        }
    }
}
