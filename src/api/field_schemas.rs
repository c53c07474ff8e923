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

use recur_domain::calendar::{IntervalType, MAX_INTERVAL_COUNT};
use recur_domain::coupon as rules_coupon;
use recur_domain::membership as rules_membership;
use recur_domain::money::{Currency, MAX_AMOUNT_MINOR};
use recur_domain::settings as rules_settings;
use recur_domain::validation as rules;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A recognised ISO 3166-1 alpha-2 country code, in any letter case.
pub struct CountryCode;

impl CountryCode {
    const LIST: CodeList = CodeList {
        len: 2,
        accepts: |code| rules::country_code(code).is_ok(),
        description: "A recognised ISO 3166-1 alpha-2 country code, in any letter case (uppercase \
                      recommended). The pattern lists every accepted code.",
        example: "DE",
    };
}

impl PartialSchema for CountryCode {
    fn schema() -> RefOr<Schema> {
        static PATTERN: OnceLock<String> = OnceLock::new();
        Self::LIST.schema(&PATTERN)
    }
}

impl ToSchema for CountryCode {}

/// An ISO 4217 currency that is a means of payment, in any letter case.
pub struct CurrencyCode;

impl CurrencyCode {
    const LIST: CodeList = CodeList {
        len: 3,
        accepts: |code| Currency::parse(code).is_ok(),
        description: "An ISO 4217 currency code, in any letter case. Codes that are not a means \
                      of payment (no minor unit, such as XXX or XAU, and fund codes such as CLF) \
                      are refused. The pattern lists every accepted code.",
        example: "EUR",
    };
}

impl PartialSchema for CurrencyCode {
    fn schema() -> RefOr<Schema> {
        static PATTERN: OnceLock<String> = OnceLock::new();
        Self::LIST.schema(&PATTERN)
    }
}

impl ToSchema for CurrencyCode {}

/// A string schema whose pattern lists, in any letter case, every code of `len` letters that a
/// validator accepts.
struct CodeList {
    len: u32,
    accepts: fn(&str) -> bool,
    description: &'static str,
    example: &'static str,
}

impl CodeList {
    /// The schema, its pattern built once into `pattern`.
    fn schema(&self, pattern: &OnceLock<String>) -> RefOr<Schema> {
        let pattern = pattern.get_or_init(|| self.pattern());
        string()
            .description(Some(self.description))
            .pattern(Some(pattern.clone()))
            .examples([self.example])
            .into()
    }

    fn pattern(&self) -> String {
        let codes = accepted_codes(self.len, self.accepts);
        format!("^{}$", any_case_alternatives(&codes))
    }
}

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

/// A brand colour, `#RRGGBB`.
pub struct BrandColor;

impl PartialSchema for BrandColor {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "A colour: # and six hexadecimal digits, either case (answered uppercase).",
            ))
            .pattern(Some(rules_settings::BRAND_COLOR_PATTERN))
            .examples(["#1F4FD1"])
            .into()
    }
}

impl ToSchema for BrandColor {}

/// The prefix of invoice numbers.
pub struct InvoicePrefix;

impl PartialSchema for InvoicePrefix {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "1 to 12 ASCII letters, digits and hyphens, starting and ending with a letter or \
                 digit (answered uppercase). Invoices are numbered PREFIX-…",
            ))
            .pattern(Some(rules_settings::INVOICE_PREFIX_PATTERN))
            .examples(["INV", "ACME-EU"])
            .into()
    }
}

impl ToSchema for InvoicePrefix {}

/// `portalPlanChange`: when the portal's price switch applies, in any letter case.
pub struct PlanChange;

impl PlanChange {
    /// The accepted words.
    fn words() -> [&'static str; 2] {
        rules_settings::PortalPlanChange::ALL.map(|value| value.as_str())
    }
}

impl PartialSchema for PlanChange {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "now (at once, prorated) or nextPeriod (at the next renewal, without \
                 proration); in any letter case, answered as written here.",
            ))
            .pattern(Some(any_case_words(&Self::words())))
            .examples(["nextPeriod"])
            .into()
    }
}

impl ToSchema for PlanChange {}

/// `quantity`: an integer from 1 to [`rules_membership::MAX_QUANTITY`].
pub struct Quantity;

impl PartialSchema for Quantity {
    fn schema() -> RefOr<Schema> {
        integer(1, rules_membership::MAX_QUANTITY)
            .description(Some(
                "Units per period, from 1 to 1,000,000,000; pricePerUnit × quantity is at most \
                 the largest amount (15 digits in minor units).",
            ))
            .examples([3])
            .into()
    }
}

impl ToSchema for Quantity {}

/// `trialDays`: an integer from 1 to [`rules_membership::MAX_TRIAL_DAYS`].
pub struct TrialDays;

impl PartialSchema for TrialDays {
    fn schema() -> RefOr<Schema> {
        integer(1, i64::from(rules_membership::MAX_TRIAL_DAYS))
            .description(Some(
                "Days of free trial, from 1 to 730 (two years): checkout saves the card without \
                 charging and the first charge runs when the trial ends.",
            ))
            .examples([14])
            .into()
    }
}

impl ToSchema for TrialDays {}

/// `intervalCount`: an integer from 1 to the largest count of any unit (Daily's).
pub struct IntervalCount;

impl PartialSchema for IntervalCount {
    fn schema() -> RefOr<Schema> {
        integer(1, i64::from(MAX_INTERVAL_COUNT))
            .description(Some(
                "Units of intervalType between charges, default 1. A cycle is at most 3 years: \
                 Daily up to 1095, Weekly 156, Monthly 36, Annually 3.",
            ))
            .examples([1])
            .into()
    }
}

impl ToSchema for IntervalCount {}

/// `intervalType` of a price: one of the interval types, in any letter case.
pub struct IntervalTypeName;

impl PartialSchema for IntervalTypeName {
    fn schema() -> RefOr<Schema> {
        let names: Vec<&str> = IntervalType::ALL.iter().map(|t| t.as_str()).collect();
        string()
            .description(Some(
                "Daily, Weekly, Monthly or Annually, in any letter case (answered as written \
                 here).",
            ))
            .pattern(Some(any_case_words(&names)))
            .examples(["Monthly"])
            .into()
    }
}

impl ToSchema for IntervalTypeName {}

/// A coupon `code`: [`rules_coupon::CODE_PATTERN`].
pub struct CouponCode;

impl PartialSchema for CouponCode {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "1 to 40 ASCII letters, digits, - and _. Codes match in any letter case and are \
                 answered uppercase.",
            ))
            .pattern(Some(rules_coupon::CODE_PATTERN))
            .examples(["SPRING-20"])
            .into()
    }
}

impl ToSchema for CouponCode {}

/// A coupon's `duration`: `once`, `repeating` or `forever`, in any letter case.
pub struct CouponDurationName;

impl PartialSchema for CouponDurationName {
    fn schema() -> RefOr<Schema> {
        string()
            .description(Some(
                "How many period invoices the coupon discounts: once (the next), repeating \
                 (durationInCycles of them) or forever; in any letter case, answered lowercase.",
            ))
            .pattern(Some(any_case_words(&["once", "repeating", "forever"])))
            .examples(["once"])
            .into()
    }
}

impl ToSchema for CouponDurationName {}

/// `durationInCycles`: an integer from 1 to [`rules_coupon::MAX_DURATION_IN_CYCLES`].
pub struct DurationInCycles;

impl PartialSchema for DurationInCycles {
    fn schema() -> RefOr<Schema> {
        integer(1, i64::from(rules_coupon::MAX_DURATION_IN_CYCLES))
            .description(Some(
                "The period invoices a repeating coupon discounts, from 1 to 120; only with \
                 duration repeating, which requires it.",
            ))
            .examples([3])
            .into()
    }
}

impl ToSchema for DurationInCycles {}

/// `maxRedemptions`: an integer from 1 to [`rules_coupon::MAX_REDEMPTIONS`].
pub struct MaxRedemptions;

impl PartialSchema for MaxRedemptions {
    fn schema() -> RefOr<Schema> {
        integer(1, rules_coupon::MAX_REDEMPTIONS)
            .description(Some(
                "How many times the coupon can be redeemed, from 1 to 1,000,000,000; no limit \
                 when absent.",
            ))
            .examples([100])
            .into()
    }
}

impl ToSchema for MaxRedemptions {}

/// `pricePerUnit` as a JSON number: positive, and at most the largest amount of the currency with
/// the fewest decimals.
pub struct UnitPrice;

impl PartialSchema for UnitPrice {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .exclusive_minimum(Some(0.0))
            .maximum(Some(MAX_AMOUNT_MINOR))
            .description(Some(
                "Greater than 0, with at most the currency's decimals and at most 15 digits in \
                 minor units (9999999999999.99 EUR, 999999999999999 JPY). A decimal string is \
                 accepted too.",
            ))
            .examples([9.99])
            .into()
    }
}

impl ToSchema for UnitPrice {}

/// An absolute `https://` URL with a host and no credentials.
pub struct HttpsUrl;

impl PartialSchema for HttpsUrl {
    fn schema() -> RefOr<Schema> {
        url("https", "^[Hh][Tt][Tt][Pp][Ss]://[^/?#@]")
    }
}

impl ToSchema for HttpsUrl {}

/// An absolute `http://` or `https://` URL with a host and no credentials.
pub struct WebUrl;

impl PartialSchema for WebUrl {
    fn schema() -> RefOr<Schema> {
        url("http or https", "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@]")
    }
}

impl ToSchema for WebUrl {}

/// An absolute URL of `schemes` (as prose) whose start matches `pattern`; the rest of the rule
/// (a host, no credentials) is in the description.
fn url(schemes: &str, pattern: &str) -> RefOr<Schema> {
    string()
        .description(Some(format!(
            "An absolute {schemes} URL with a host and no user name or password."
        )))
        .format(Some(SchemaFormat::Custom("uri".into())))
        .pattern(Some(pattern))
        .examples(["https://merchant.example/webhooks/recur"])
        .into()
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn integer(minimum: i64, maximum: i64) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(minimum))
        .maximum(Some(maximum))
}

/// A pattern matching exactly `words` (ASCII letters), each in any letter case.
fn any_case_words(words: &[&str]) -> String {
    let alternatives: Vec<String> = words
        .iter()
        .map(|word| {
            word.chars()
                .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()))
                .collect()
        })
        .collect();
    format!("^(?:{})$", alternatives.join("|"))
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

    /// The published pattern matches exactly the strings the validator accepts: every code of the
    /// list's length in every letter case, then `others`.
    fn assert_pattern_is_the_validator(list: &CodeList, others: &[&str]) {
        let pattern = Regex::new(&list.pattern()).expect("a valid pattern");
        let codes = every_mixed_case_code(list.len);
        for code in codes.chain(others.iter().map(|o| o.to_string())) {
            assert_eq!(pattern.is_match(&code), (list.accepts)(&code), "{code}");
        }
        let accepted = accepted_codes(list.len, list.accepts).len();
        assert!(accepted > 100, "{accepted} codes");
        assert!(
            pattern.as_str().len() < accepted * 14,
            "{}",
            pattern.as_str()
        );
    }

    #[test]
    fn the_country_pattern_accepts_exactly_what_the_validator_accepts() {
        assert_pattern_is_the_validator(&CountryCode::LIST, &["", "D", "DEU", " DE", "D1"]);
        assert!(!(CountryCode::LIST.accepts)("ZZ") && (CountryCode::LIST.accepts)("de"));
    }

    #[test]
    fn the_currency_pattern_accepts_exactly_what_the_validator_accepts() {
        assert_pattern_is_the_validator(&CurrencyCode::LIST, &["", "EU", "EURO", " EUR"]);
        for refused in ["XXX", "XAU", "CLF"] {
            assert!(!(CurrencyCode::LIST.accepts)(refused), "{refused}");
        }
        assert!((CurrencyCode::LIST.accepts)("jpy"));
    }

    #[test]
    fn word_patterns_accept_exactly_what_the_parsers_accept() {
        let names: Vec<&str> = IntervalType::ALL.iter().map(|t| t.as_str()).collect();
        let intervals = Regex::new(&any_case_words(&names)).expect("a valid pattern");
        let durations = Regex::new(&any_case_words(&["once", "repeating", "forever"]))
            .expect("a valid pattern");
        let plan_changes =
            Regex::new(&any_case_words(&PlanChange::words())).expect("a valid pattern");
        for text in [
            "Monthly",
            "monthly",
            "MONTHLY",
            "mOnThLy",
            "Daily",
            "weekly",
            "ANNUALLY",
            "Month",
            " Monthly",
            "Monthly ",
            "Yearly",
            "",
            "once",
            "Once",
            "REPEATING",
            "Forever",
            "twice",
            "onces",
            "now",
            "NOW",
            "nextPeriod",
            "nextperiod",
            "next period",
            "nowadays",
        ] {
            assert_eq!(
                intervals.is_match(text),
                IntervalType::parse(text).is_ok(),
                "{text}"
            );
            assert_eq!(
                plan_changes.is_match(text),
                rules_settings::PortalPlanChange::parse(text).is_ok(),
                "{text}"
            );
            let cycles = (text.eq_ignore_ascii_case("repeating")).then_some(1);
            assert_eq!(
                durations.is_match(text),
                rules_coupon::CouponDuration::parse(text, cycles).is_ok(),
                "{text}"
            );
        }
    }

    #[test]
    fn the_coupon_code_pattern_is_the_rule() {
        let pattern = Regex::new(rules_coupon::CODE_PATTERN).expect("a valid pattern");
        let long = "A".repeat(41);
        for code in [
            "SPRING",
            "spring-20_x",
            "A",
            &long,
            "",
            "with space",
            "Ünicode",
            "a.b",
        ] {
            assert_eq!(
                pattern.is_match(code),
                rules_coupon::code(code).is_ok(),
                "{code}"
            );
        }
    }

    #[test]
    fn the_served_schemas_carry_the_patterns() {
        for (schema, list) in [
            (CountryCode::schema(), CountryCode::LIST),
            (CurrencyCode::schema(), CurrencyCode::LIST),
        ] {
            let RefOr::T(Schema::Object(object)) = schema else {
                panic!("an inline object schema");
            };
            assert_eq!(object.pattern, Some(list.pattern()));
        }
    }
}
