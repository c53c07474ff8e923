//! Reading request bodies so that every failing field is reported at once.
//!
//! A request struct declares each field as [`Field<T>`], which never fails to deserialize: it
//! records whether the field was absent, null, of the wrong type, or present. The handler then
//! asks for each field as required or optional, and the misses land in one [`FieldErrors`].

use recur_domain::validation::FieldErrors;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// One JSON field as received.
#[derive(Debug, Clone, Default)]
pub enum Field<T> {
    /// Not in the body.
    #[default]
    Absent,
    /// Present as `null`.
    Null,
    /// Present with a value that is not a `T`; the message says why.
    Invalid(String),
    /// Present and of the right type.
    Present(T),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(Field::Null);
        }
        Ok(match T::deserialize(value) {
            Ok(parsed) => Field::Present(parsed),
            Err(error) => Field::Invalid(type_message(&error.to_string())),
        })
    }
}

/// serde's "invalid type: integer `5`, expected a string" → "must be a string".
fn type_message(serde_message: &str) -> String {
    match serde_message.split_once(", expected ") {
        Some((_, expected)) => format!("must be {expected}"),
        None => serde_message.to_string(),
    }
}

impl<T> Field<T> {
    /// Whether the body names the field (with any value, `null` included).
    pub fn is_given(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    /// The field with its value, if present, turned into another type.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Absent => Field::Absent,
            Field::Null => Field::Null,
            Field::Invalid(message) => Field::Invalid(message),
            Field::Present(value) => Field::Present(f(value)),
        }
    }

    /// The value, or a "required" / type message under `path`.
    pub fn required(self, path: &str, errors: &mut FieldErrors) -> Option<T> {
        match self {
            Field::Present(value) => Some(value),
            Field::Absent | Field::Null => {
                errors.add(path, "is required");
                None
            }
            Field::Invalid(message) => {
                errors.add(path, message);
                None
            }
        }
    }

    /// The value if present; absent and null are `None`; a wrong type is reported under `path`.
    pub fn optional(self, path: &str, errors: &mut FieldErrors) -> Option<T> {
        match self {
            Field::Present(value) => Some(value),
            Field::Absent | Field::Null => None,
            Field::Invalid(message) => {
                errors.add(path, message);
                None
            }
        }
    }
}

/// Refuses with `message`, under its path, each of the fields the body names (`given`: each
/// path and [`Field::is_given`]).
pub fn refuse_given(given: &[(&str, bool)], message: &str, errors: &mut FieldErrors) {
    for (path, _) in given.iter().filter(|(_, given)| *given) {
        errors.add(*path, message);
    }
}

/// Applies `rule` to a required text field, reporting under `path`.
pub fn required_text(
    field: Field<String>,
    path: &str,
    errors: &mut FieldErrors,
    rule: impl FnOnce(&str) -> Result<String, String>,
) -> Option<String> {
    let text = field.required(path, errors)?;
    errors.check(path, rule(&text))
}

/// Applies `rule` to an optional text field, reporting under `path`.
pub fn optional_text(
    field: Field<String>,
    path: &str,
    errors: &mut FieldErrors,
    rule: impl FnOnce(&str) -> Result<String, String>,
) -> Option<String> {
    let text = field.optional(path, errors)?;
    errors.check(path, rule(&text))
}

/// A `true|false` field of a change (`active`): `None` when absent; `null` or another type is
/// reported under `path`.
pub fn optional_flag(field: Field<bool>, path: &str, errors: &mut FieldErrors) -> Option<bool> {
    match field {
        Field::Absent => None,
        Field::Present(value) => Some(value),
        Field::Null => {
            errors.add(path, "must be true or false");
            None
        }
        Field::Invalid(message) => {
            errors.add(path, message);
            None
        }
    }
}

/// A resource key that must start with `prefix` (`cstmr_`, `mmbrshp_`).
pub fn prefixed(key: &str, prefix: &str) -> Result<String, String> {
    if key.starts_with(prefix) {
        Ok(key.to_string())
    } else {
        Err(format!("must start with {prefix}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        a: Field<String>,
        #[serde(default)]
        b: Field<u32>,
        #[serde(default)]
        c: Field<String>,
    }

    #[test]
    fn every_field_is_reported() {
        let body: Body = serde_json::from_str(r#"{"a": 5, "c": null}"#).unwrap();
        let mut errors = FieldErrors::new();
        assert_eq!(body.a.required("a", &mut errors), None);
        assert_eq!(body.b.required("b", &mut errors), None);
        assert_eq!(body.c.optional("c", &mut errors), None);
        let map = errors.into_map();
        assert_eq!(map["a"], vec!["must be a string"]);
        assert_eq!(map["b"], vec!["is required"]);
        assert!(!map.contains_key("c"));
    }
}
