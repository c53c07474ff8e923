//! A `camt.054` debit notification, gathered entry by entry: the transactions with return
//! information that are debits of the account (or sit in a reversed entry), with their reasons.

use super::{ancestor, ends_with, Reason, ReturnFileError, Returned, FALLBACK_REASON};

/// One `TxDtls` of a `camt.054` entry.
#[derive(Default)]
struct Details {
    end_to_end_id: Option<String>,
    credit_debit: Option<String>,
    has_return_information: bool,
    reason: Reason,
}

/// One `Ntry` of a `camt.054`.
#[derive(Default)]
struct Entry {
    credit_debit: Option<String>,
    reversal: bool,
    details: Vec<Details>,
}

impl Entry {
    /// Whether `details` is a returned debit (see the module documentation).
    fn is_return(&self, details: &Details) -> bool {
        let debit = details
            .credit_debit
            .as_deref()
            .or(self.credit_debit.as_deref())
            .is_some_and(|d| d.eq_ignore_ascii_case("DBIT"));
        details.has_return_information && (debit || self.reversal)
    }
}

/// What a `camt.054` says, gathered entry by entry.
#[derive(Default)]
pub(super) struct DebitNotification {
    entry: Option<Entry>,
    details: Option<Details>,
    pub(super) returned: Vec<Returned>,
}

impl DebitNotification {
    pub(super) fn open(&mut self, path: &[String]) {
        match path.last().map(String::as_str) {
            Some("Ntry") => self.entry = Some(Entry::default()),
            Some("TxDtls") => self.details = Some(Details::default()),
            Some("RtrInf") if ancestor(path, 1) == Some("TxDtls") => {
                if let Some(details) = self.details.as_mut() {
                    details.has_return_information = true;
                }
            }
            _ => {}
        }
    }

    pub(super) fn close(&mut self, path: &[String], text: &str) -> Result<(), ReturnFileError> {
        let Some(element) = path.last().map(String::as_str) else {
            return Ok(());
        };
        let value = || (!text.is_empty()).then(|| text.to_owned());
        match (element, ancestor(path, 1)) {
            ("Ntry", _) => return self.close_entry(),
            ("TxDtls", _) => {
                if let (Some(entry), Some(details)) = (self.entry.as_mut(), self.details.take()) {
                    entry.details.push(details);
                }
            }
            ("CdtDbtInd", Some("Ntry")) => {
                if let Some(entry) = self.entry.as_mut() {
                    entry.credit_debit = value();
                }
            }
            ("RvslInd", Some("Ntry")) => {
                if let Some(entry) = self.entry.as_mut() {
                    entry.reversal = text == "true" || text == "1";
                }
            }
            ("CdtDbtInd", Some("TxDtls")) => {
                if let Some(details) = self.details.as_mut() {
                    details.credit_debit = value();
                }
            }
            ("EndToEndId", Some("Refs")) if ancestor(path, 2) == Some("TxDtls") => {
                if let Some(details) = self.details.as_mut() {
                    details.end_to_end_id = value();
                }
            }
            ("Cd" | "Prtry", Some("Rsn"))
                if ends_with(&path[..path.len() - 1], &["TxDtls", "RtrInf", "Rsn"]) =>
            {
                if let Some(details) = self.details.as_mut() {
                    details.reason.record(element, text);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// An entry ends: its returned transactions are recorded.
    fn close_entry(&mut self) -> Result<(), ReturnFileError> {
        let Some(entry) = self.entry.take() else {
            return Ok(());
        };
        for details in entry.details.iter().filter(|d| entry.is_return(d)) {
            let end_to_end_id = details
                .end_to_end_id
                .clone()
                .ok_or(ReturnFileError::MissingEndToEndId("EndToEndId"))?;
            self.returned.push(Returned {
                end_to_end_id,
                reason_code: details.reason.get().unwrap_or(FALLBACK_REASON).to_owned(),
            });
        }
        Ok(())
    }
}
