//! The bank's return files (DESIGN §18): which debits came back, and why.
//!
//! Two kinds are read, in any version (`pain.002.001.xx`, `camt.054.001.xx`); elements are
//! matched by local name, so the namespace and its prefix do not matter:
//!
//! - **`pain.002` status report** (`Document/CstmrPmtStsRpt`): every `TxInfAndSts` whose status
//!   is `RJCT` is a returned debit, named by its `OrgnlEndToEndId`. A transaction's status is
//!   its `TxSts`; without one, the status of its `OrgnlPmtInfAndSts` (`PmtInfSts`); without that,
//!   the group's (`OrgnlGrpInfAndSts/GrpSts`). Its reason is the first `StsRsnInf/Rsn/Cd` (else
//!   `Rsn/Prtry`) of the transaction, else of its payment block, else of the group, else
//!   [`FALLBACK_REASON`]. A rejection that names no transaction — a `PmtInfSts` `RJCT` block
//!   without any `TxInfAndSts`, or a `GrpSts` `RJCT` report without any — cannot be matched to
//!   debits by end-to-end id and is refused as [`ReturnFileError::WholeRejection`], which
//!   carries the original message id and payment block id, so nothing is applied half-way.
//!   Accepted or pending statuses (`ACCP`, `ACSC`, `ACTC`, `PDNG`, `PART`, …) are not returns.
//! - **`camt.054` debit/credit notification** (`Document/BkToCstmrDbtCdtNtfctn`): a
//!   `Ntry/NtryDtls/TxDtls` is a returned debit when it has `RtrInf` **and** it is booked as a
//!   debit of the creditor's account (the `TxDtls`'s `CdtDbtInd`, else the `Ntry`'s, is `DBIT`)
//!   or its `Ntry` has `RvslInd` `true` (banks that book a return as a reversed credit). It is
//!   named by `Refs/EndToEndId`; its reason is `RtrInf/Rsn/Cd`, else `Rsn/Prtry`, else
//!   [`FALLBACK_REASON`]. Every other entry — a collection's credit, a fee, a credit with return
//!   information (a credit transfer coming back) — is not a return. The entry status (`BOOK`,
//!   `PDNG`, `INFO`) is not looked at.
//!
//! A debit named twice in one file is reported once, with the first reason. Values are trimmed;
//! codes are reported as the bank wrote them.
//!
//! Safety: the file must be UTF-8 (a byte order mark is allowed; the XML declaration's encoding
//! is not looked at). A `DOCTYPE` is refused wherever it stands, so no entity — internal or
//! external — is ever declared, let alone expanded; only the five predefined entities and
//! character references are resolved. Malformed XML, nesting deeper than [`MAX_DEPTH`], another
//! root than the two above and a returned transaction without an end-to-end id are refused. The
//! size of the input is the caller's to limit.

use std::collections::BTreeSet;
use std::fmt;

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;

mod debit_notification;
mod status_report;

use debit_notification::DebitNotification;
use status_report::StatusReport;

/// The reason code reported when the file gives none: ISO 20022's "narrative" code.
pub const FALLBACK_REASON: &str = "NARR";

/// How deep elements may be nested. ISO 20022 messages stay well below it.
pub const MAX_DEPTH: usize = 64;

/// Which kind of return file was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A `pain.002` customer payment status report (`CstmrPmtStsRpt`).
    StatusReport,
    /// A `camt.054` bank-to-customer debit/credit notification (`BkToCstmrDbtCdtNtfctn`).
    DebitNotification,
}

/// A debit the bank rejected or returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Returned {
    /// The debit's end-to-end id as recur wrote it in the `pain.008`.
    pub end_to_end_id: String,
    /// The ISO reason code (`AC04`, `AM04`, `MD06`, …), a proprietary code when the bank gives
    /// only that, or [`FALLBACK_REASON`].
    pub reason_code: String,
}

/// What a return file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnFile {
    /// The kind of file.
    pub kind: FileKind,
    /// The returned debits in the order the file names them, each end-to-end id once. Empty
    /// when the file reports no return.
    pub returned: Vec<Returned>,
}

/// Why a return file was refused. The messages can be shown to the merchant as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReturnFileError {
    /// The bytes are not UTF-8.
    NotUtf8,
    /// Not well-formed XML; the text says what and where.
    Malformed(String),
    /// The file has a `DOCTYPE` declaration.
    DocType,
    /// The file refers to an entity other than the five XML predefines.
    UnknownEntity(String),
    /// Elements nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The root is not `Document/CstmrPmtStsRpt` or `Document/BkToCstmrDbtCdtNtfctn`; holds the
    /// path that was found, for example `Document/CstmrDrctDbtInitn`.
    WrongRoot(String),
    /// A rejected or returned transaction without an end-to-end id; holds the element that is
    /// missing (`OrgnlEndToEndId` or `EndToEndId`).
    MissingEndToEndId(&'static str),
    /// A `pain.002` rejects a whole file or payment block without naming its transactions.
    WholeRejection {
        /// The rejected file's message id (`OrgnlMsgId`), when the report gives it.
        message_id: Option<String>,
        /// The rejected payment block (`OrgnlPmtInfId`); `None` when the whole file is rejected.
        payment_information_id: Option<String>,
        /// The reason code, or [`FALLBACK_REASON`].
        reason_code: String,
    },
}

impl fmt::Display for ReturnFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReturnFileError::NotUtf8 => {
                f.write_str("the file is not UTF-8 text; bank return files are UTF-8 XML")
            }
            ReturnFileError::Malformed(detail) => {
                write!(f, "the file is not well-formed XML: {detail}")
            }
            ReturnFileError::DocType => f.write_str(
                "the file has a DOCTYPE declaration; bank return files have none and recur does not read them",
            ),
            ReturnFileError::UnknownEntity(name) => {
                write!(f, "the file refers to the undefined entity &{name};")
            }
            ReturnFileError::TooDeep => {
                write!(f, "the file's elements are nested more than {MAX_DEPTH} deep")
            }
            ReturnFileError::WrongRoot(found) => write!(
                f,
                "the file is neither a pain.002 payment status report nor a camt.054 debit notification (it starts with {found})"
            ),
            ReturnFileError::MissingEndToEndId(element) => write!(
                f,
                "a rejected or returned transaction has no {element}, so it cannot be matched to a debit"
            ),
            ReturnFileError::WholeRejection {
                message_id,
                payment_information_id,
                reason_code,
            } => {
                let file = message_id.as_deref().unwrap_or("(no message id given)");
                match payment_information_id {
                    Some(block) => write!(f, "the bank rejected the payment block {block} of the collection file {file}")?,
                    None => write!(f, "the bank rejected the whole collection file {file}")?,
                }
                write!(
                    f,
                    " (reason {reason_code}) without naming its debits; recur applies rejections of single debits only"
                )
            }
        }
    }
}

impl std::error::Error for ReturnFileError {}

/// Reads a `pain.002` or `camt.054` return file and lists the debits it rejects or returns.
/// See the module documentation for the rules.
pub fn parse(xml: &[u8]) -> Result<ReturnFile, ReturnFileError> {
    let text = std::str::from_utf8(xml).map_err(|_| ReturnFileError::NotUtf8)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut walk = Walk::default();
    let mut reader = Reader::from_str(text);
    loop {
        let event = reader.read_event().map_err(|e| {
            ReturnFileError::Malformed(format!("{e} (at byte {})", reader.error_position()))
        })?;
        if !walk.take(event)? {
            break;
        }
    }
    walk.finish()
}

/// The state of one pass over the file: where the reader is and what the message's collector
/// has gathered.
#[derive(Default)]
struct Walk {
    /// Local names of the open elements, root first.
    path: Vec<String>,
    /// Character data of the element being read since its last child.
    content: String,
    /// Set once the second-level element told which message this is.
    collector: Option<Collector>,
    /// Set once the root element is closed.
    done: bool,
}

impl Walk {
    /// Takes one event; `false` at the end of the input.
    fn take(&mut self, event: Event<'_>) -> Result<bool, ReturnFileError> {
        match event {
            Event::Start(start) => self.start(&start)?,
            Event::Empty(start) => {
                self.start(&start)?;
                self.close()?;
            }
            Event::End(_) => self.close()?,
            Event::Text(text) => self.characters(&text.xml10_content().map_err(malformed)?)?,
            Event::CData(data) => self.characters(&data.decode().map_err(malformed)?)?,
            Event::GeneralRef(reference) => self.characters(&resolve(&reference)?)?,
            Event::DocType(_) => return Err(ReturnFileError::DocType),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => return Ok(false),
        }
        Ok(true)
    }

    /// A start tag (or an empty-element tag, which [`Walk::close`] then closes).
    fn start(&mut self, start: &BytesStart<'_>) -> Result<(), ReturnFileError> {
        // Attribute values are never read, but their syntax is part of well-formedness.
        for attribute in start.attributes() {
            attribute.map_err(malformed)?;
        }
        self.open(local_name(start.local_name().as_ref())?)
    }

    /// An element starts.
    fn open(&mut self, name: String) -> Result<(), ReturnFileError> {
        if self.done {
            return Err(ReturnFileError::Malformed(
                "there is more than one root element".into(),
            ));
        }
        if self.path.len() >= MAX_DEPTH {
            return Err(ReturnFileError::TooDeep);
        }
        self.path.push(name);
        self.content.clear();
        match self.path.as_slice() {
            [root] if root != "Document" => Err(ReturnFileError::WrongRoot(root.clone())),
            [_, message] => {
                self.collector =
                    Some(Collector::for_message(message).ok_or_else(|| {
                        ReturnFileError::WrongRoot(format!("Document/{message}"))
                    })?);
                Ok(())
            }
            path => {
                if let Some(collector) = self.collector.as_mut() {
                    collector.open(path);
                }
                Ok(())
            }
        }
    }

    /// The innermost open element ends (the reader checked that the names match).
    fn close(&mut self) -> Result<(), ReturnFileError> {
        if let Some(collector) = self.collector.as_mut() {
            if self.path.len() > 2 {
                collector.close(&self.path, self.content.trim())?;
            }
        }
        self.content.clear();
        self.path.pop();
        self.done = self.path.is_empty();
        Ok(())
    }

    /// Character data; outside the root only whitespace is allowed.
    fn characters(&mut self, text: &str) -> Result<(), ReturnFileError> {
        if self.path.is_empty() {
            if text.trim().is_empty() {
                return Ok(());
            }
            return Err(ReturnFileError::Malformed(
                "there is text outside the root element".into(),
            ));
        }
        self.content.push_str(text);
        Ok(())
    }

    /// The input has ended: the root must be closed and must have been one of the two messages.
    fn finish(self) -> Result<ReturnFile, ReturnFileError> {
        if let Some(open) = self.path.last() {
            return Err(ReturnFileError::Malformed(format!(
                "the file ends inside <{open}>"
            )));
        }
        if !self.done {
            return Err(ReturnFileError::Malformed(
                "the file has no root element".into(),
            ));
        }
        let collector = self
            .collector
            .ok_or_else(|| ReturnFileError::WrongRoot("an empty Document".into()))?;
        let (kind, returned) = collector.finish()?;
        Ok(ReturnFile {
            kind,
            returned: first_of_each(returned),
        })
    }
}

/// An element's local name as text.
fn local_name(bytes: &[u8]) -> Result<String, ReturnFileError> {
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|_| ReturnFileError::NotUtf8)
}

/// A decoding error of the reader as [`ReturnFileError::Malformed`].
fn malformed(error: impl fmt::Display) -> ReturnFileError {
    ReturnFileError::Malformed(error.to_string())
}

/// The text a reference stands for: a character reference or one of the five predefined
/// entities. Nothing else is ever expanded.
fn resolve(reference: &BytesRef<'_>) -> Result<String, ReturnFileError> {
    if let Some(c) = reference.resolve_char_ref().map_err(malformed)? {
        return Ok(c.to_string());
    }
    let name = reference.decode().map_err(malformed)?;
    resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| ReturnFileError::UnknownEntity(name.into_owned()))
}

/// `returned` with only the first mention of each end-to-end id.
fn first_of_each(returned: Vec<Returned>) -> Vec<Returned> {
    let mut seen = BTreeSet::new();
    returned
        .into_iter()
        .filter(|r| seen.insert(r.end_to_end_id.clone()))
        .collect()
}

/// Whether `path` ends with the local names `suffix`.
fn ends_with(path: &[String], suffix: &[&str]) -> bool {
    path.len() >= suffix.len()
        && path[path.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(a, b)| a == b)
}

/// The name of the element around the innermost `levels` ones (`levels` = 1: the parent).
fn ancestor(path: &[String], levels: usize) -> Option<&str> {
    path.len()
        .checked_sub(levels + 1)
        .and_then(|i| path.get(i))
        .map(String::as_str)
}

/// A status or return reason: the first code and the first proprietary reason met.
#[derive(Default)]
struct Reason {
    code: Option<String>,
    proprietary: Option<String>,
}

impl Reason {
    /// Records `text` as the code (`Cd`) or proprietary reason (`Prtry`) unless one came first.
    fn record(&mut self, element: &str, text: &str) {
        let slot = match element {
            "Cd" => &mut self.code,
            "Prtry" => &mut self.proprietary,
            _ => return,
        };
        if slot.is_none() && !text.is_empty() {
            *slot = Some(text.to_owned());
        }
    }

    /// The code, else the proprietary reason.
    fn get(&self) -> Option<&str> {
        self.code.as_deref().or(self.proprietary.as_deref())
    }
}

/// The gatherer for the message the file holds.
enum Collector {
    /// `pain.002`.
    Status(StatusReport),
    /// `camt.054`.
    Notification(DebitNotification),
}

impl Collector {
    /// The gatherer for the second-level element `name`, if it is a message read here.
    fn for_message(name: &str) -> Option<Collector> {
        match name {
            "CstmrPmtStsRpt" => Some(Collector::Status(StatusReport::default())),
            "BkToCstmrDbtCdtNtfctn" => Some(Collector::Notification(DebitNotification::default())),
            _ => None,
        }
    }

    /// The element at the end of `path` starts.
    fn open(&mut self, path: &[String]) {
        match self {
            Collector::Status(report) => report.open(path),
            Collector::Notification(notification) => notification.open(path),
        }
    }

    /// The element at the end of `path` ends; `text` is its trimmed character data.
    fn close(&mut self, path: &[String], text: &str) -> Result<(), ReturnFileError> {
        match self {
            Collector::Status(report) => {
                report.close(path, text);
                Ok(())
            }
            Collector::Notification(notification) => notification.close(path, text),
        }
    }

    /// The kind of file and its returned debits, duplicates not yet removed.
    fn finish(self) -> Result<(FileKind, Vec<Returned>), ReturnFileError> {
        match self {
            Collector::Status(report) => Ok((FileKind::StatusReport, report.finish()?)),
            Collector::Notification(notification) => {
                Ok((FileKind::DebitNotification, notification.returned))
            }
        }
    }
}

#[cfg(test)]
mod tests;
