//! The fields of the dashboard's creation forms as the API's rules take them: each typed value
//! becomes the JSON body's [`Field`] (a blank field is not given, a number that is no whole
//! number is a value of the wrong type, a date and time typed in UTC is written in the API's
//! form), and the rules' [`FieldErrors`] come back as one message beside each field.

use std::collections::BTreeMap;

use recur_domain::membership::parse_end_date;
use recur_domain::validation::FieldErrors;
use serde::Deserialize;

use crate::http::input::Field;

/// The form of an archive or restore button: `active` is `false` to archive, `true` to restore.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveForm {
    /// The session's form token.
    #[serde(default)]
    pub csrf_token: String,
    /// `true` or `false`.
    #[serde(default)]
    pub active: String,
}

impl ActiveForm {
    /// What the button asks for; `None` for anything but `true` and `false`.
    pub fn active(&self) -> Option<bool> {
        match self.active.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
}

/// A text field: blank (or only blanks) is not given; otherwise the text without the blanks
/// around it.
pub fn text(typed: &str) -> Field<String> {
    match typed.trim() {
        "" => Field::Absent,
        text => Field::Present(text.to_string()),
    }
}

/// A whole-number field: blank is not given; anything but a whole number is refused as a value
/// of the wrong type is.
pub fn number(typed: &str) -> Field<i64> {
    match typed.trim() {
        "" => Field::Absent,
        text => text.parse().map_or_else(
            |_| Field::Invalid("must be a whole number".into()),
            Field::Present,
        ),
    }
}

/// A date and time typed in UTC, `YYYY-MM-DD HH:MM` or a `datetime-local` input's
/// `YYYY-MM-DDTHH:MM` (seconds allowed), in the API's form (`YYYY-MM-DDTHH:mm:ss`); `None` when
/// it is no date and time in those forms.
pub fn utc_time(typed: &str) -> Option<String> {
    let mut input = typed.trim().replacen(' ', "T", 1);
    if input.len() == "YYYY-MM-DDTHH:MM".len() {
        input.push_str(":00");
    }
    parse_end_date(&input).ok().map(|_| input)
}

/// A date-and-time field ([`utc_time`]): blank is not given; what is no date and time is
/// refused with `form_error`.
pub fn time(typed: &str, form_error: &str) -> Field<String> {
    if typed.trim().is_empty() {
        return Field::Absent;
    }
    utc_time(typed).map_or_else(|| Field::Invalid(form_error.to_string()), Field::Present)
}

/// Each field's messages, joined, to show beside it.
pub fn beside(errors: FieldErrors) -> BTreeMap<String, String> {
    errors
        .into_map()
        .into_iter()
        .map(|(field, messages)| (field, messages.join("; ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_become_the_bodys_fields() {
        assert!(matches!(text("  "), Field::Absent));
        assert!(matches!(text(" Pro "), Field::Present(t) if t == "Pro"));
        assert!(matches!(number(""), Field::Absent));
        assert!(matches!(number(" 12 "), Field::Present(12)));
        for odd in ["1.5", "x", "99999999999999999999"] {
            assert!(matches!(number(odd), Field::Invalid(_)), "{odd}");
        }
        assert!(matches!(time(" ", "form"), Field::Absent));
        assert!(matches!(time("soon", "form"), Field::Invalid(m) if m == "form"));
        let typed = time("2027-06-15 08:30", "form");
        assert!(matches!(typed, Field::Present(t) if t == "2027-06-15T08:30:00"));
    }

    #[test]
    fn times_are_typed_in_utc_with_or_without_seconds() {
        for typed in [
            "2027-06-15 08:30",
            "2027-06-15T08:30",
            "2027-06-15T08:30:00",
            " 2027-06-15 08:30:00 ",
        ] {
            assert_eq!(
                utc_time(typed).as_deref(),
                Some("2027-06-15T08:30:00"),
                "{typed}"
            );
        }
        for typed in [
            "2027-6-15 08:30",
            "15.06.2027 08:30",
            "2027-06-15",
            "soon",
            "",
        ] {
            assert_eq!(utc_time(typed), None, "{typed}");
        }
    }
}
