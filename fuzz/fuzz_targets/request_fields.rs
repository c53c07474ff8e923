//! Every request field parser on arbitrary text: none may panic, and what one accepts it must
//! accept again unchanged (a stored value re-validates), amounts round-trip through their text.
#![no_main]

use chrono::NaiveDate;
use libfuzzer_sys::fuzz_target;
use recur_domain::calendar::IntervalType;
use recur_domain::card::CardNumber;
use recur_domain::card_entry::{CardEntry, Expiry};
use recur_domain::money::{format_amount, parse_amount, Currency};
use recur_domain::validation as rules;

/// `rule` is idempotent on what it accepts.
fn stable(rule: impl Fn(&str) -> Result<String, String>, input: &str) {
    if let Ok(accepted) = rule(input) {
        assert_eq!(rule(&accepted).as_deref(), Ok(accepted.as_str()), "{input:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let input = text.as_ref();
    stable(rules::person_name, input);
    stable(rules::email, input);
    stable(rules::e164_phone, input);
    stable(rules::country_code, input);
    stable(|v| rules::bounded_text(v, 1024), input);
    stable(rules::https_url, input);
    stable(rules::web_url, input);
    stable(rules::canonical_guid, input);
    let today = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
    if let Ok(date) = rules::date_of_birth(input, today) {
        assert!(date <= today);
    }
    let _ = IntervalType::parse(input);
    let _ = Expiry::parse(input);
    if let Ok(card) = CardNumber::parse(input) {
        assert!(recur_domain::card::luhn_valid(card.digits()));
        assert_eq!(card.last4().len(), 4);
    }
    let _ = CardEntry { number: input, expiry: input, cvc: input, holder: input }.check(2026, 11);
    if let Ok(currency) = Currency::parse(input) {
        assert_eq!(Currency::parse(currency.code()).map(|c| c.code()), Ok(currency.code()));
    }
    for code in ["EUR", "JPY", "BHD"] {
        let currency = Currency::parse(code).unwrap();
        if let Ok(minor) = parse_amount(input, currency) {
            assert!(minor > 0);
            assert_eq!(parse_amount(&format_amount(minor, currency), currency), Ok(minor));
        }
    }
});
