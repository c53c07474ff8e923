//! Why an invoice exists: the stored `kind` of an invoice.

/// Why an invoice exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceKind {
    /// The first period, paid at checkout.
    First,
    /// A later period, charged by the renewal engine.
    Renewal,
    /// A mid-period change of plan.
    Proration,
    /// The last period's usage of a membership that ended (DESIGN §19).
    Final,
}

impl InvoiceKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceKind::First => "first",
            InvoiceKind::Renewal => "renewal",
            InvoiceKind::Proration => "proration",
            InvoiceKind::Final => "final",
        }
    }

    pub(super) fn from_db(text: &str) -> InvoiceKind {
        match text {
            "first" => InvoiceKind::First,
            "proration" => InvoiceKind::Proration,
            "final" => InvoiceKind::Final,
            _ => InvoiceKind::Renewal,
        }
    }
}
