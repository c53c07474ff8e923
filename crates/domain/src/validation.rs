//! Field rules of the subscription API's customer table, and the error list every rule reports into.
//!
//! Each rule takes the raw input and returns either the normalised value or a message written for
//! the merchant's developer. Rules never stop at the first failure of a request: the caller collects
//! every message in a [`FieldErrors`] keyed by the field's JSON path.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

/// Every failing field of one request, keyed by JSON path (`firstName`, `taxIds[0].type`), each with
/// one or more messages. Ordered, so responses are stable.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `message` against `path`.
    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.entry(path.into()).or_default().push(message.into());
    }

    /// Records the outcome of a rule: the value on success, the message under `path` on failure.
    pub fn check<T>(&mut self, path: &str, outcome: Result<T, String>) -> Option<T> {
        match outcome {
            Ok(value) => Some(value),
            Err(message) => {
                self.add(path, message);
                None
            }
        }
    }

    /// Records every message of `other` too, after the ones of its paths already here.
    pub fn append(&mut self, other: FieldErrors) {
        for (path, messages) in other.0 {
            self.0.entry(path).or_default().extend(messages);
        }
    }

    /// True when nothing failed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The collected messages.
    pub fn into_map(self) -> BTreeMap<String, Vec<String>> {
        self.0
    }

    /// The collected messages, by reference.
    pub fn as_map(&self) -> &BTreeMap<String, Vec<String>> {
        &self.0
    }
}

/// `processorKey`: a non-empty canonical GUID, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hex
/// digits (either case). Returns it in lowercase.
pub fn canonical_guid(input: &str) -> Result<String, String> {
    const MESSAGE: &str = "must be a canonical GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)";
    let shaped = input.len() == 36
        && input.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        });
    if !shaped {
        return Err(MESSAGE.into());
    }
    uuid::Uuid::parse_str(input)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| MESSAGE.into())
}

/// The rule of `firstName` and `lastName` as a regular expression: words of Unicode letters
/// (general category L), each letter optionally followed by combining marks (so decomposed accents
/// and vowel signs belong to their letter), separated by a single space or hyphen. Written in the
/// syntax Rust's `regex` and ECMA-262 (`u` mode) share: the validator runs it, and the OpenAPI
/// document publishes it verbatim.
pub const PERSON_NAME_PATTERN: &str = r"^(?:\p{L}\p{M}*)+(?:[ -](?:\p{L}\p{M}*)+)*$";

/// `firstName` / `lastName`: [`PERSON_NAME_PATTERN`]. No leading, trailing or doubled separators.
pub fn person_name(input: &str) -> Result<String, String> {
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(PERSON_NAME_PATTERN).expect("PERSON_NAME_PATTERN is a valid expression")
    });
    if input.is_empty() {
        return Err("must not be empty".into());
    }
    if NAME.is_match(input) {
        return Ok(input.to_string());
    }
    if input.ends_with([' ', '-']) {
        return Err("must not end with a space or hyphen".into());
    }
    Err("must contain only letters, with words separated by a single space or hyphen".into())
}

/// `email`: standard e-mail validation in `name@domain.tld` form. The domain must have at least two
/// labels and a top-level label of two or more letters. A display name (`Ada <ada@example.com>`)
/// is not an address and is refused, so the value checked is the whole value stored.
pub fn email(input: &str) -> Result<String, String> {
    const MESSAGE: &str = "must be a valid e-mail address (name@domain.tld)";
    let options = email_address::Options::default().without_display_text();
    let address = email_address::EmailAddress::parse_with_options(input, options)
        .map_err(|_| MESSAGE.to_string())?;
    let domain = address.domain();
    let mut labels = domain.rsplit('.');
    let tld = labels.next().unwrap_or_default();
    let has_second_level = labels.next().is_some_and(|l| !l.is_empty());
    let tld_ok = tld.len() >= 2 && tld.chars().all(|c| c.is_alphabetic());
    if !has_second_level || !tld_ok || domain.starts_with('[') {
        return Err(MESSAGE.into());
    }
    Ok(address.into())
}

/// The key under which e-mail addresses are compared: case-insensitive, as the spec's
/// "unique by e-mail" is applied by recur.
pub fn email_identity(email: &str) -> String {
    email.to_lowercase()
}

/// `phone`: E.164 as the spec states it: `+`, a digit 1-9, then digits; 8 to 15 digits in total;
/// nothing else.
///
/// This is the spec's syntactic rule on purpose. A numbering-plan check (the `phonenumber` crate)
/// is stricter than the contract and would refuse numbers the spec accepts.
pub fn e164_phone(input: &str) -> Result<String, String> {
    let Some(digits) = input.strip_prefix('+') else {
        return Err("must be in E.164 form: '+' followed by 8 to 15 digits".into());
    };
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(
            "must contain only digits after '+' (no spaces, hyphens or other characters)".into(),
        );
    }
    if digits.starts_with('0') {
        return Err("must not start with 0 after '+'".into());
    }
    if !(8..=15).contains(&digits.len()) {
        return Err("must have 8 to 15 digits after '+'".into());
    }
    Ok(input.to_string())
}

/// `countryCode`: a recognised ISO 3166-1 alpha-2 code, exactly two letters, any case. Returns the
/// uppercase code.
pub fn country_code(input: &str) -> Result<String, String> {
    if input.len() != 2 || !input.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err("must be an ISO 3166-1 alpha-2 code of exactly 2 letters".into());
    }
    let upper = input.to_ascii_uppercase();
    celes::Country::from_alpha2(&upper)
        .map(|_| upper)
        .map_err(|_| format!("'{input}' is not a recognised ISO 3166-1 alpha-2 country"))
}

/// A text that must not be empty or blank, and not longer than `max_chars` characters
/// (`subscriptionName`, `name`).
pub fn bounded_text(input: &str, max_chars: usize) -> Result<String, String> {
    if input.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if input.chars().count() > max_chars {
        return Err(format!("must be at most {max_chars} characters"));
    }
    Ok(input.to_string())
}

/// An absolute `https://` URL with a host (`returnToWebsiteLink`). Returns the URL as parsed
/// and checked, serialized (see [`web_url`]).
pub fn https_url(input: &str) -> Result<String, String> {
    https(input).map(String::from)
}

/// `webhookUrl`: an absolute `https://` URL with a host, which, unless the operator allows
/// private addresses, is not an IP literal the SSRF guard refuses (DESIGN §5). A name is
/// accepted here: the addresses it resolves to are judged at every connection. Returns the URL
/// as parsed and checked, serialized.
pub fn webhook_url(input: &str, allow_private: bool) -> Result<String, String> {
    let url = https(input)?;
    match crate::network::literal_refusal(&url) {
        Some(why) if !allow_private => Err(why),
        _ => Ok(url.into()),
    }
}

fn https(input: &str) -> Result<url::Url, String> {
    let url = absolute(input)?;
    if url.scheme() != "https" {
        return Err("must use https".into());
    }
    Ok(url)
}

/// An absolute `http://` or `https://` URL with a host (redirect targets). Returns the URL as
/// parsed and checked, serialized: the parse follows browsers (the WHATWG URL standard), which
/// drop tabs and line breaks anywhere, trim surrounding spaces and control characters,
/// percent-encode what a URL cannot hold and lowercase the host. Only that form is stored and
/// used, so a value that was checked is always one a `Location` header can carry.
pub fn web_url(input: &str) -> Result<String, String> {
    let url = absolute(input)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https URL".into());
    }
    Ok(url.into())
}

fn absolute(input: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(input).map_err(|_| "must be an absolute URL".to_string())?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err("must be an absolute URL with a host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not contain credentials".into());
    }
    Ok(url)
}

/// The earliest `dateOfBirth`.
pub const EARLIEST_BIRTH_DATE: chrono::NaiveDate = match chrono::NaiveDate::from_ymd_opt(1900, 1, 1)
{
    Some(date) => date,
    None => panic!("1900-01-01 is a date"),
};

/// A calendar date written `YYYY-MM-dd`, from [`EARLIEST_BIRTH_DATE`] to `today`
/// (`dateOfBirth`).
pub fn date_of_birth(input: &str, today: chrono::NaiveDate) -> Result<chrono::NaiveDate, String> {
    let shaped = input.len() == 10
        && input.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    let date = shaped
        .then(|| chrono::NaiveDate::parse_from_str(input, "%Y-%m-%d").ok())
        .flatten()
        .ok_or_else(|| "must be a date in the form YYYY-MM-dd".to_string())?;
    if date > today {
        return Err("must not be in the future".into());
    }
    if date < EARLIEST_BIRTH_DATE {
        return Err(format!("must not be before {EARLIEST_BIRTH_DATE}"));
    }
    Ok(date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn guid_accepts_canonical_forms_only() {
        assert_eq!(
            canonical_guid("3F2504E0-4F89-11D3-9A0C-0305E82C3301").unwrap(),
            "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        );
        for bad in [
            "",
            "3f2504e04f8911d39a0c0305e82c3301",
            "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}",
            "urn:uuid:3f2504e0-4f89-11d3-9a0c-0305e82c3301",
            "3f2504e0-4f89-11d3-9a0c-0305e82c330g",
            "3f2504e0-4f8911d3-9a0c-0305e82c3301-",
        ] {
            assert!(canonical_guid(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_letters_with_single_separators() {
        for good in [
            "Ann",
            "José",
            "Mary Ann",
            "Jean-Luc",
            "Ødegård",
            "李",
            "Anne-Marie Claire",
            "Jose\u{301}",
            "สมศักดิ์",
            "Ελένη",
        ] {
            assert!(person_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            " Ann",
            "Ann ",
            "Ann  Lee",
            "Ann--Lee",
            "Ann -Lee",
            "R2D2",
            "O'Brien",
            "Ann.",
            "-Ann",
            "\u{301}Ann",
            "Ann \u{301}",
            "Ⅷ",
            "Ⓐnn",
            "Ann\tLee",
        ] {
            assert!(person_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn email_needs_name_domain_and_tld() {
        for good in [
            "a@example.com",
            "first.last+tag@sub.example.co.uk",
            "ANN@EXAMPLE.ORG",
        ] {
            assert!(email(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "plain",
            "a@b",
            "a@b.",
            "@example.com",
            "a@example.c",
            "a b@example.com",
            "a@[127.0.0.1]",
        ] {
            assert!(email(bad).is_err(), "{bad}");
        }
        assert_eq!(email_identity("Ann@Example.COM"), "ann@example.com");
        // A display name is not an address: what is checked is all that is stored.
        assert!(email("Ann <ann@example.com>").is_err());
        assert!(email("ann@example.com ").is_err());
        assert_eq!(email("Ann@Example.com").unwrap(), "Ann@Example.com");
    }

    #[test]
    fn phone_is_spec_e164() {
        for good in ["+12345678", "+491511234567", "+123456789012345"] {
            assert!(e164_phone(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "12345678",
            "+1234567",
            "+1234567890123456",
            "+0123456789",
            "+1 2345678",
            "+1-2345678",
            "++12345678",
            "+12345678a",
        ] {
            assert!(e164_phone(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn country_is_recognised_alpha2_any_case() {
        assert_eq!(country_code("de").unwrap(), "DE");
        assert_eq!(country_code("Us").unwrap(), "US");
        for bad in ["", "D", "DEU", "XX", "1A", "ZZ"] {
            assert!(country_code(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bounded_text_limits() {
        assert!(bounded_text("Gold", 250).is_ok());
        assert!(bounded_text(&"é".repeat(250), 250).is_ok());
        assert!(bounded_text(&"é".repeat(251), 250).is_err());
        assert!(bounded_text("  ", 250).is_err());
    }

    #[test]
    fn field_errors_collect_every_message() {
        let mut errors = FieldErrors::new();
        assert_eq!(errors.check("a", Ok::<_, String>(1)), Some(1));
        assert_eq!(errors.check::<i32>("b", Err("bad".into())), None);
        errors.add("b", "worse");
        assert_eq!(errors.as_map()["b"], vec!["bad", "worse"]);
        let mut more = FieldErrors::new();
        more.add("b", "worst");
        more.add("c", "odd");
        errors.append(more);
        assert_eq!(errors.as_map()["b"], vec!["bad", "worse", "worst"]);
        assert_eq!(errors.as_map()["c"], vec!["odd"]);
        assert!(!errors.is_empty());
    }

    #[test]
    fn urls() {
        assert!(https_url("https://merchant.example.com/hooks?x=1").is_ok());
        for bad in [
            "http://merchant.example.com",
            "/relative",
            "https://",
            "ftp://x.example",
            "https://u:p@x.example",
            "not a url",
        ] {
            assert!(https_url(bad).is_err(), "{bad}");
        }
        assert!(web_url("http://shop.example/ok").is_ok());
        // The value returned is the URL as checked: what a browser would read.
        assert_eq!(
            web_url("\thttps://Shop.Example/o\r\nk?x=1 ").unwrap(),
            "https://shop.example/ok?x=1"
        );
        assert_eq!(
            https_url("https://merchant.example/h\nooks/ü").unwrap(),
            "https://merchant.example/hooks/%C3%BC"
        );
        assert_eq!(
            web_url("https://shop.example").unwrap(),
            "https://shop.example/"
        );
        assert!(web_url("javascript:alert(1)").is_err());
        assert!(web_url("mailto:a@example.com").is_err());
    }

    #[test]
    fn webhook_urls_with_an_internal_ip_literal_are_refused_unless_allowed() {
        for internal in [
            "https://127.0.0.1/hooks",
            "https://2130706433/hooks",
            "https://[::ffff:127.0.0.1]/hooks",
            "https://[::10.0.0.1]/hooks",
            "https://[2002:a9fe:a9fe::]/hooks",
            "https://[fec0::1]/hooks",
        ] {
            let why = webhook_url(internal, false).unwrap_err();
            assert!(why.ends_with("which webhooks may not reach"), "{why}");
            // Accepted as checked: in the URL's normalized form.
            let normalized = url::Url::parse(internal).unwrap().to_string();
            assert_eq!(webhook_url(internal, true), Ok(normalized));
        }
        for accepted in ["https://localhost/hooks", "https://93.184.216.34/hooks"] {
            assert_eq!(webhook_url(accepted, false).as_deref(), Ok(accepted));
        }
        assert_eq!(
            webhook_url("http://127.0.0.1/hooks", true),
            Err("must use https".into())
        );
    }

    #[test]
    fn dates_of_birth() {
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        assert!(date_of_birth("1990-02-28", today).is_ok());
        assert!(date_of_birth("2026-11-23", today).is_ok());
        assert!(date_of_birth("1900-01-01", today).is_ok());
        for bad in [
            "1990-02-30",
            "1990-2-28",
            "28-02-1990",
            "2026-11-24",
            "1990/02/28",
            "",
            "0000-01-01",
            "1899-12-31",
        ] {
            assert!(date_of_birth(bad, today).is_err(), "{bad}");
        }
    }

    proptest! {
        /// Whatever surrounds or fills an accepted URL, the value returned is printable ASCII
        /// (a valid `Location` header) and its own normal form.
        #[test]
        fn accepted_urls_are_normal_and_header_safe(
            path in "(?s).{0,40}",
            noise in "[\t\r\n \x00\x1f]{0,3}",
        ) {
            let input = format!("{noise}https://shop.example/{path}{noise}");
            for rule in [web_url, https_url] {
                if let Ok(url) = rule(&input) {
                    prop_assert!(url.bytes().all(|b| (0x21..0x7f).contains(&b)), "{url:?}");
                    prop_assert_eq!(rule(&url), Ok(url.clone()));
                }
            }
        }
    }
}
