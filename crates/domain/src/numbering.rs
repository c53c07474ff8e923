//! Document numbers (DESIGN §9): `{prefix}-{YYYY}-{NNNNNN}`, sequential per merchant, series and
//! year. The sequence itself is the store's; this is how a number is written.

/// The prefix of credit-note numbers.
pub const CREDIT_NOTE_PREFIX: &str = "CN";

/// A numbered series: each has its own sequence per merchant and year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Series {
    /// Finalized invoices, under the merchant's invoice prefix.
    Invoice,
    /// Credit notes, under [`CREDIT_NOTE_PREFIX`].
    CreditNote,
}

impl Series {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Series::Invoice => "invoice",
            Series::CreditNote => "credit_note",
        }
    }
}

/// The number `sequence` of `year` under `prefix`: at least six digits, zero-padded
/// (`INV-2027-000042`); a seventh digit appears past 999,999 rather than wrapping.
pub fn format_number(prefix: &str, year: i32, sequence: i64) -> String {
    format!("{prefix}-{year:04}-{sequence:06}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_zero_padded_to_six_digits() {
        assert_eq!(format_number("INV", 2027, 1), "INV-2027-000001");
        assert_eq!(
            format_number("ACME-EU", 2028, 123_456),
            "ACME-EU-2028-123456"
        );
        assert_eq!(format_number(CREDIT_NOTE_PREFIX, 2027, 7), "CN-2027-000007");
        assert_eq!(format_number("INV", 2027, 1_000_000), "INV-2027-1000000");
    }

    #[test]
    fn series_have_distinct_names() {
        assert_ne!(Series::Invoice.as_str(), Series::CreditNote.as_str());
    }
}
