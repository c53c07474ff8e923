//! OpenAPI schemas of the request fields whose rule is not a plain type: a code list (ISO 3166
//! countries, ISO 4217 currencies), a regular expression (person names) or a URL scheme. Each is a
//! named component, written once and referenced by every body that has such a field, so that a
//! client (or a fuzzer generating "valid" requests from the document) sees the rule the handler
//! applies.
//!
//! The code-list patterns are not typed by hand: they are built from the validators themselves,
//! by asking each one about every code of the right length, so the document cannot drift from
//! what the API accepts. The tests below check each pattern against its validator exhaustively.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use recur_domain::money::Currency;
use recur_domain::validation as rules;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A recognised ISO 3166-1 alpha-2 country code, in any letter case.
pub struct CountryCode;

impl PartialSchema for CountryCode {
    fn schema() -> RefOr<Schema> {
        static PATTERN: OnceLock<String> = OnceLock::new();
        let pattern = PATTERN.get_or_init(|| {
            anchored(&any_case_alternatives(&accepted_codes(2, |code| {
                rules::country_code(code).is_ok()
            })))
        });
        string()
            .description(Some(
                "A recognised ISO 3166-1 alpha-2 country code, in any letter case (uppercase \
                 recommended). The pattern lists every accepted code.",
            ))
            .pattern(Some(pattern.clone()))
            .examples(["DE"])
            .into()
    }
}

impl ToSchema for CountryCode {}

/// An ISO 4217 currency that is a means of payment, in any letter case.
pub struct CurrencyCode;

impl PartialSchema for CurrencyCode {
    fn schema() -> RefOr<Schema> {
        static PATTERN: OnceLock<String> = OnceLock::new();
        let pattern = PATTERN.get_or_init(|| {
            anchored(&any_case_alternatives(&accepted_codes(3, |code| {
                Currency::parse(code).is_ok()
            })))
        });
        string()
            .description(Some(
                "An ISO 4217 currency code, in any letter case. Codes that are not a means of \
                 payment (no minor unit, such as XXX or XAU, and fund codes such as CLF) are \
                 refused. The pattern lists every accepted code.",
            ))
            .pattern(Some(pattern.clone()))
            .examples(["EUR"])
            .into()
    }
}

impl ToSchema for CurrencyCode {}

/// A person's first or last name: Unicode letters, words separated by one space or hyphen.
pub struct PersonName;

impl PartialSchema for PersonName {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "Unicode letters (a letter may carry combining marks); words separated by a \
                 single space or hyphen, none leading, trailing or doubled.",
            ))
            .pattern(Some(rules::PERSON_NAME_PATTERN))
            .examples(["Ada", "Jean-Luc"])
            .into()
    }
}

impl ToSchema for PersonName {}

/// An absolute `https://` URL with a host and no credentials.
pub struct HttpsUrl;

impl PartialSchema for HttpsUrl {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "An absolute https URL with a host and no user name or password.",
            ))
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some("^[Hh][Tt][Tt][Pp][Ss]://[^/?#@]"))
            .examples(["https://merchant.example/webhooks/recur"])
            .into()
    }
}

impl ToSchema for HttpsUrl {}

/// An absolute `http://` or `https://` URL with a host and no credentials.
pub struct WebUrl;

impl PartialSchema for WebUrl {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "An absolute http or https URL with a host and no user name or password.",
            ))
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some("^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@]"))
            .examples(["https://merchant.example/account"])
            .into()
    }
}

impl ToSchema for WebUrl {}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn anchored(alternatives: &str) -> String {
    format!("^{alternatives}$")
}

/// Every code of `len` uppercase ASCII letters that `accepts` takes, in order.
fn accepted_codes(len: u32, accepts: impl Fn(&str) -> bool) -> Vec<String> {
    (0..26u32.pow(len))
        .map(|mut n| {
            let mut code = vec![b'A'; len as usize];
            for letter in code.iter_mut().rev() {
                *letter += (n % 26) as u8;
                n /= 26;
            }
            String::from_utf8(code).unwrap_or_default()
        })
        .filter(|code| accepts(code))
        .collect()
}

/// A regular expression (a group, not anchored) matching exactly `codes`, uppercase ASCII codes
/// of one length, in any letter case: the codes are grouped by their first letter, and the last
/// letters of each group become one character class, so the expression stays a few characters
/// per code.
fn any_case_alternatives(codes: &[String]) -> String {
    let mut by_first: BTreeMap<char, Vec<String>> = BTreeMap::new();
    for code in codes {
        let mut chars = code.chars();
        if let Some(first) = chars.next() {
            by_first
                .entry(first)
                .or_default()
                .push(chars.as_str().to_string());
        }
    }
    let last_letter = by_first
        .values()
        .all(|rests| rests.iter().all(String::is_empty));
    if last_letter {
        let class: String = by_first
            .keys()
            .flat_map(|c| [*c, c.to_ascii_lowercase()])
            .collect();
        return format!("[{class}]");
    }
    let branches: Vec<String> = by_first
        .iter()
        .map(|(first, rests)| {
            format!(
                "[{first}{}]{}",
                first.to_ascii_lowercase(),
                any_case_alternatives(rests)
            )
        })
        .collect();
    format!("(?:{})", branches.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn pattern_of<T: PartialSchema>() -> Regex {
        let RefOr::T(Schema::Object(object)) = T::schema() else {
            panic!("an inline object schema");
        };
        Regex::new(&object.pattern.expect("a pattern")).expect("a valid pattern")
    }

    /// Every string of `len` ASCII letters in which each letter is upper or lower case.
    fn every_mixed_case_code(len: u32) -> impl Iterator<Item = String> {
        accepted_codes(len, |_| true)
            .into_iter()
            .flat_map(move |code| {
                (0..1u32 << len).map(move |mask| {
                    code.chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if mask & (1 << i) != 0 {
                                c.to_ascii_lowercase()
                            } else {
                                c
                            }
                        })
                        .collect()
                })
            })
    }

    #[test]
    fn the_country_pattern_accepts_exactly_what_the_validator_accepts() {
        let pattern = pattern_of::<CountryCode>();
        for code in every_mixed_case_code(2) {
            let valid = rules::country_code(&code).is_ok();
            assert_eq!(pattern.is_match(&code), valid, "{code}");
        }
        assert!(pattern.is_match("de") && pattern.is_match("DE"));
        for other in ["", "D", "DEU", " DE", "D1", "ZZ"] {
            assert!(!pattern.is_match(other), "{other}");
        }
    }

    #[test]
    fn the_currency_pattern_accepts_exactly_what_the_validator_accepts() {
        let pattern = pattern_of::<CurrencyCode>();
        for code in every_mixed_case_code(3) {
            let valid = Currency::parse(&code).is_ok();
            assert_eq!(pattern.is_match(&code), valid, "{code}");
        }
        assert!(pattern.is_match("eur") && pattern.is_match("JPY"));
        for other in ["", "EU", "EURO", "XXX", "XAU", "CLF"] {
            assert!(!pattern.is_match(other), "{other}");
        }
    }

    #[test]
    fn the_code_patterns_stay_compact() {
        for (codes, pattern) in [
            (
                accepted_codes(2, |c| rules::country_code(c).is_ok()),
                pattern_of::<CountryCode>(),
            ),
            (
                accepted_codes(3, |c| Currency::parse(c).is_ok()),
                pattern_of::<CurrencyCode>(),
            ),
        ] {
            assert!(codes.len() > 100, "{} codes", codes.len());
            assert!(
                pattern.as_str().len() < codes.len() * 14,
                "{}",
                pattern.as_str()
            );
        }
    }
}
