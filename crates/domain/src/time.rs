//! Instants as recur writes them on the wire.

use chrono::{DateTime, SecondsFormat, Utc};

/// A UTC instant as the API and webhook payloads write it: ISO-8601 with `Z`, whole seconds.
pub fn format_utc(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_whole_seconds_with_z() {
        let at = DateTime::parse_from_rfc3339("2026-12-03T23:30:00.750+01:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(format_utc(at), "2026-12-03T22:30:00Z");
    }
}
