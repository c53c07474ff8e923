//! A meter: what it measures of its events (its [`Aggregation`]), and the rules of its `code`
//! and `property` fields.

use serde::{Deserialize, Serialize};

/// Longest meter `code`, in characters.
pub const MAX_CODE_CHARS: usize = 64;

/// A meter code's rule, as the OpenAPI document publishes it: 1–64 letters, digits, `_`, `.`,
/// `:` and `-`, the first a letter or digit.
pub const CODE_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$";

/// Longest event `property` name, in characters.
const MAX_PROPERTY_CHARS: usize = 100;

/// How a meter turns a period's events into a quantity. Serialized as its snake_case name
/// (`"unique_count"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// The number of events.
    Count,
    /// The sum of the property's values.
    Sum,
    /// The largest value of the property (0 without events).
    Max,
    /// The number of distinct values of the property.
    UniqueCount,
    /// The value of the property in the event with the latest timestamp (0 without events).
    Latest,
}

impl Aggregation {
    /// Every aggregation, in the order the API lists them.
    const ALL: [Aggregation; 5] = [
        Aggregation::Count,
        Aggregation::Sum,
        Aggregation::Max,
        Aggregation::UniqueCount,
        Aggregation::Latest,
    ];

    /// Parses the `aggregation` field: exactly one of the lowercase names `count`, `sum`, `max`,
    /// `unique_count`, `latest`.
    pub fn parse(input: &str) -> Result<Aggregation, String> {
        Self::ALL
            .into_iter()
            .find(|aggregation| aggregation.as_str() == input)
            .ok_or_else(|| "must be one of count, sum, max, unique_count, latest".to_string())
    }

    /// The stored and answered name, for example `"unique_count"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Aggregation::Count => "count",
            Aggregation::Sum => "sum",
            Aggregation::Max => "max",
            Aggregation::UniqueCount => "unique_count",
            Aggregation::Latest => "latest",
        }
    }

    /// Whether the meter names an event `property`: every aggregation but `count`.
    pub fn needs_property(&self) -> bool {
        !matches!(self, Aggregation::Count)
    }

    /// Whether the property's values must be numbers ([`super::value::numeric_value`]): `sum`,
    /// `max` and `latest`. `unique_count` takes any string or number
    /// ([`super::value::unique_key`]).
    pub fn numeric(&self) -> bool {
        matches!(
            self,
            Aggregation::Sum | Aggregation::Max | Aggregation::Latest
        )
    }
}

/// A meter `code`: 1–[`MAX_CODE_CHARS`] ASCII letters, digits, `_`, `.`, `:` and `-`, the first a
/// letter or digit ([`CODE_PATTERN`]). Codes are case-sensitive and kept as given.
pub fn meter_code(input: &str) -> Result<String, String> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-');
    let valid = input.len() <= MAX_CODE_CHARS
        && input
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && input.bytes().all(allowed);
    if valid {
        Ok(input.to_string())
    } else {
        Err(format!(
            "must be 1 to {MAX_CODE_CHARS} letters, digits, '_', '.', ':' or '-', starting with a letter or digit"
        ))
    }
}

/// A meter's `property`: the name of the event property it reads, 1–100 characters, not blank,
/// without control characters. Kept as given (names match exactly).
pub fn property_name(input: &str) -> Result<String, String> {
    if input.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if input.chars().count() > MAX_PROPERTY_CHARS {
        return Err(format!("must be at most {MAX_PROPERTY_CHARS} characters"));
    }
    if input.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(input.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregations_round_trip_through_their_names() {
        for aggregation in Aggregation::ALL {
            assert_eq!(Aggregation::parse(aggregation.as_str()), Ok(aggregation));
            let json = serde_json::to_string(&aggregation).unwrap();
            assert_eq!(json, format!("\"{}\"", aggregation.as_str()));
            assert_eq!(
                serde_json::from_str::<Aggregation>(&json).unwrap(),
                aggregation
            );
        }
        for bad in [
            "",
            "Count",
            "SUM",
            "unique-count",
            "uniqueCount",
            "avg",
            " max",
        ] {
            assert_eq!(
                Aggregation::parse(bad),
                Err("must be one of count, sum, max, unique_count, latest".into()),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn which_aggregations_read_a_property_and_which_need_numbers() {
        let needs: Vec<_> = Aggregation::ALL
            .into_iter()
            .filter(Aggregation::needs_property)
            .collect();
        assert_eq!(
            needs,
            [
                Aggregation::Sum,
                Aggregation::Max,
                Aggregation::UniqueCount,
                Aggregation::Latest
            ]
        );
        let numeric: Vec<_> = Aggregation::ALL
            .into_iter()
            .filter(Aggregation::numeric)
            .collect();
        assert_eq!(
            numeric,
            [Aggregation::Sum, Aggregation::Max, Aggregation::Latest]
        );
    }

    #[test]
    fn meter_codes() {
        let longest = format!("a{}", "-".repeat(MAX_CODE_CHARS - 1));
        for good in ["api_calls", "API.Calls:v2-eu", "0", "9x", longest.as_str()] {
            assert_eq!(meter_code(good), Ok(good.to_string()), "{good}");
        }
        let too_long = format!("a{}", "b".repeat(MAX_CODE_CHARS));
        for bad in [
            "",
            "_calls",
            "-calls",
            ".calls",
            "api calls",
            "api/calls",
            "appel_é",
            "calls\n",
            too_long.as_str(),
        ] {
            assert!(meter_code(bad).is_err(), "{bad:?}");
        }
        let pattern = regex::Regex::new(CODE_PATTERN).unwrap();
        for probe in [
            "api_calls",
            "A",
            "_a",
            "a b",
            longest.as_str(),
            too_long.as_str(),
        ] {
            assert_eq!(
                pattern.is_match(probe),
                meter_code(probe).is_ok(),
                "{probe}"
            );
        }
    }

    #[test]
    fn property_names() {
        for good in ["bytes", "Gigabytes used", "ключ", &"p".repeat(100)] {
            assert_eq!(property_name(good), Ok(good.to_string()));
        }
        assert_eq!(property_name(""), Err("must not be empty".into()));
        assert_eq!(property_name(" \t"), Err("must not be empty".into()));
        assert_eq!(
            property_name(&"p".repeat(101)),
            Err("must be at most 100 characters".into())
        );
        assert_eq!(
            property_name("a\u{0}b"),
            Err("must not contain control characters".into())
        );
    }
}
