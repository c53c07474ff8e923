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

/// A status and its reason, at group, payment block or transaction level of a `pain.002`.
#[derive(Default)]
struct Status {
    status: Option<String>,
    reason: Reason,
}

impl Status {
    /// Whether the status is `RJCT`.
    fn rejected(status: Option<&str>) -> bool {
        status.is_some_and(|s| s.eq_ignore_ascii_case("RJCT"))
    }
}

/// One `TxInfAndSts`.
#[derive(Default)]
struct TransactionStatus {
    /// Index into [`StatusReport::payments`] of the block around it, if any.
    payment: Option<usize>,
    end_to_end_id: Option<String>,
    own: Status,
}

/// One `OrgnlPmtInfAndSts`.
#[derive(Default)]
struct PaymentStatus {
    id: Option<String>,
    own: Status,
}

/// What a `pain.002` says, gathered element by element.
#[derive(Default)]
struct StatusReport {
    message_id: Option<String>,
    group: Status,
    payments: Vec<PaymentStatus>,
    /// Index of the open `OrgnlPmtInfAndSts`.
    open_payment: Option<usize>,
    transactions: Vec<TransactionStatus>,
    /// The open `TxInfAndSts`.
    open_transaction: Option<TransactionStatus>,
}

impl StatusReport {
    fn open(&mut self, path: &[String]) {
        match path.last().map(String::as_str) {
            Some("OrgnlPmtInfAndSts") => {
                self.payments.push(PaymentStatus::default());
                self.open_payment = Some(self.payments.len() - 1);
            }
            Some("TxInfAndSts") => {
                self.open_transaction = Some(TransactionStatus {
                    payment: self.open_payment,
                    ..TransactionStatus::default()
                });
            }
            _ => {}
        }
    }

    fn close(&mut self, path: &[String], text: &str) {
        let Some(element) = path.last().map(String::as_str) else {
            return;
        };
        let parent = ancestor(path, 1);
        let value = || (!text.is_empty()).then(|| text.to_owned());
        match (element, parent) {
            ("TxInfAndSts", _) => self.transactions.extend(self.open_transaction.take()),
            ("OrgnlPmtInfAndSts", _) => self.open_payment = None,
            ("OrgnlMsgId", Some("OrgnlGrpInfAndSts")) => self.message_id = value(),
            ("GrpSts", Some("OrgnlGrpInfAndSts")) => self.group.status = value(),
            ("OrgnlPmtInfId", Some("OrgnlPmtInfAndSts")) => {
                if let Some(payment) = self.payment_mut() {
                    payment.id = value();
                }
            }
            ("PmtInfSts", Some("OrgnlPmtInfAndSts")) => {
                if let Some(payment) = self.payment_mut() {
                    payment.own.status = value();
                }
            }
            ("OrgnlEndToEndId", Some("TxInfAndSts")) => {
                if let Some(transaction) = self.open_transaction.as_mut() {
                    transaction.end_to_end_id = value();
                }
            }
            ("TxSts", Some("TxInfAndSts")) => {
                if let Some(transaction) = self.open_transaction.as_mut() {
                    transaction.own.status = value();
                }
            }
            ("Cd" | "Prtry", _) if ends_with(&path[..path.len() - 1], &["StsRsnInf", "Rsn"]) => {
                if let Some(status) = ancestor(path, 3).and_then(|scope| self.scope_mut(scope)) {
                    status.reason.record(element, text);
                }
            }
            _ => {}
        }
    }

    /// The open payment block.
    fn payment_mut(&mut self) -> Option<&mut PaymentStatus> {
        self.open_payment.and_then(|i| self.payments.get_mut(i))
    }

    /// The status of the open element called `scope`: transaction, payment block or group.
    fn scope_mut(&mut self, scope: &str) -> Option<&mut Status> {
        match scope {
            "TxInfAndSts" => self.open_transaction.as_mut().map(|t| &mut t.own),
            "OrgnlPmtInfAndSts" => self.payment_mut().map(|p| &mut p.own),
            "OrgnlGrpInfAndSts" => Some(&mut self.group),
            _ => None,
        }
    }

    /// The rejected transactions, after refusing rejections that name none.
    fn finish(self) -> Result<Vec<Returned>, ReturnFileError> {
        self.refuse_whole_rejections()?;
        let mut returned = Vec::new();
        for transaction in &self.transactions {
            let payment = transaction.payment.and_then(|i| self.payments.get(i));
            let status = transaction
                .own
                .status
                .as_deref()
                .or(payment.and_then(|p| p.own.status.as_deref()))
                .or(self.group.status.as_deref());
            if !Status::rejected(status) {
                continue;
            }
            let end_to_end_id = transaction
                .end_to_end_id
                .clone()
                .ok_or(ReturnFileError::MissingEndToEndId("OrgnlEndToEndId"))?;
            let reason = transaction
                .own
                .reason
                .get()
                .or(payment.and_then(|p| p.own.reason.get()))
                .or(self.group.reason.get());
            returned.push(Returned {
                end_to_end_id,
                reason_code: reason.unwrap_or(FALLBACK_REASON).to_owned(),
            });
        }
        Ok(returned)
    }

    /// Errs on a rejected payment block without transactions, or a rejected group without any.
    fn refuse_whole_rejections(&self) -> Result<(), ReturnFileError> {
        let group_reason = self.group.reason.get();
        for (index, payment) in self.payments.iter().enumerate() {
            let status = payment
                .own
                .status
                .as_deref()
                .or(self.group.status.as_deref());
            let listed = self.transactions.iter().any(|t| t.payment == Some(index));
            if Status::rejected(status) && !listed {
                return Err(self.whole_rejection(
                    payment.id.clone(),
                    payment.own.reason.get().or(group_reason),
                ));
            }
        }
        if Status::rejected(self.group.status.as_deref()) && self.transactions.is_empty() {
            return Err(self.whole_rejection(None, group_reason));
        }
        Ok(())
    }

    fn whole_rejection(&self, block: Option<String>, reason: Option<&str>) -> ReturnFileError {
        ReturnFileError::WholeRejection {
            message_id: self.message_id.clone(),
            payment_information_id: block,
            reason_code: reason.unwrap_or(FALLBACK_REASON).to_owned(),
        }
    }
}

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
struct DebitNotification {
    entry: Option<Entry>,
    details: Option<Details>,
    returned: Vec<Returned>,
}

impl DebitNotification {
    fn open(&mut self, path: &[String]) {
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

    fn close(&mut self, path: &[String], text: &str) -> Result<(), ReturnFileError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn returned(list: &[(&str, &str)]) -> Vec<Returned> {
        list.iter()
            .map(|(id, code)| Returned {
                end_to_end_id: (*id).into(),
                reason_code: (*code).into(),
            })
            .collect()
    }

    fn status_report(list: &[(&str, &str)]) -> ReturnFile {
        ReturnFile {
            kind: FileKind::StatusReport,
            returned: returned(list),
        }
    }

    fn notification(list: &[(&str, &str)]) -> ReturnFile {
        ReturnFile {
            kind: FileKind::DebitNotification,
            returned: returned(list),
        }
    }

    /// A bank's status report for a file with a FRST and a RCUR block: in the first block one
    /// debit accepted and one rejected, the second block rejected with a block-level reason.
    const PAIN_002_MIXED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <CstmrPmtStsRpt>
    <GrpHdr>
      <MsgId>STS-20261203-000017</MsgId>
      <CreDtTm>2026-12-03T08:15:00+01:00</CreDtTm>
      <InitgPty><Id><OrgId><AnyBIC>COBADEFFXXX</AnyBIC></OrgId></Id></InitgPty>
    </GrpHdr>
    <OrgnlGrpInfAndSts>
      <OrgnlMsgId>sb-0001</OrgnlMsgId>
      <OrgnlMsgNmId>pain.008.001.08</OrgnlMsgNmId>
      <OrgnlNbOfTxs>5</OrgnlNbOfTxs>
      <OrgnlCtrlSum>150.00</OrgnlCtrlSum>
      <GrpSts>PART</GrpSts>
    </OrgnlGrpInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>sb-0001-FRST</OrgnlPmtInfId>
      <OrgnlNbOfTxs>2</OrgnlNbOfTxs>
      <PmtInfSts>PART</PmtInfSts>
      <TxInfAndSts>
        <StsId>1</StsId>
        <OrgnlEndToEndId>att-1</OrgnlEndToEndId>
        <TxSts>ACCP</TxSts>
      </TxInfAndSts>
      <TxInfAndSts>
        <StsId>2</StsId>
        <OrgnlInstrId>instr-2</OrgnlInstrId>
        <OrgnlEndToEndId>att-2</OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf>
          <Orgtr><Id><OrgId><AnyBIC>BYLADEM1001</AnyBIC></OrgId></Id></Orgtr>
          <Rsn><Cd>AC04</Cd></Rsn>
          <AddtlInf>Konto aufgel&#246;st &amp; gesperrt</AddtlInf>
        </StsRsnInf>
        <OrgnlTxRef>
          <Amt><InstdAmt Ccy="EUR">25.00</InstdAmt></Amt>
          <ReqdColltnDt>2026-12-01</ReqdColltnDt>
          <PmtTpInf>
            <SvcLvl><Cd>SEPA</Cd></SvcLvl>
            <LclInstrm><Cd>CORE</Cd></LclInstrm>
            <SeqTp>FRST</SeqTp>
          </PmtTpInf>
          <MndtRltdInf><MndtId>MNDT-2</MndtId><DtOfSgntr>2026-01-15</DtOfSgntr></MndtRltdInf>
          <Dbtr><Pty><Nm>Erika Mustermann</Nm></Pty></Dbtr>
          <DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>
        </OrgnlTxRef>
      </TxInfAndSts>
    </OrgnlPmtInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>sb-0001-RCUR</OrgnlPmtInfId>
      <PmtInfSts>RJCT</PmtInfSts>
      <StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf>
      <TxInfAndSts>
        <OrgnlEndToEndId>att-3</OrgnlEndToEndId>
      </TxInfAndSts>
      <TxInfAndSts>
        <OrgnlEndToEndId>att-4</OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf><Rsn><Prtry>MS03</Prtry></Rsn></StsRsnInf>
      </TxInfAndSts>
      <TxInfAndSts>
        <OrgnlEndToEndId> att-5 </OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf><Rsn><Cd>MD06</Cd></Rsn></StsRsnInf>
        <StsRsnInf><Rsn><Cd>AC01</Cd></Rsn></StsRsnInf>
      </TxInfAndSts>
    </OrgnlPmtInfAndSts>
  </CstmrPmtStsRpt>
</Document>
"#;

    #[test]
    fn pain_002_reports_the_rejected_transactions_only() {
        assert_eq!(
            parse(PAIN_002_MIXED.as_bytes()).unwrap(),
            status_report(&[
                ("att-2", "AC04"),
                // No status of its own: its block's RJCT and AM04.
                ("att-3", "AM04"),
                // A proprietary reason when there is no code.
                ("att-4", "MS03"),
                // Trimmed, and the first reason of several.
                ("att-5", "MD06"),
            ])
        );
    }

    #[test]
    fn pain_002_of_an_older_version_with_a_namespace_prefix() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<ns2:Document xmlns:ns2="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03">
  <ns2:CstmrPmtStsRpt>
    <ns2:GrpHdr><ns2:MsgId>R1</ns2:MsgId><ns2:CreDtTm>2026-12-03T08:15:00</ns2:CreDtTm></ns2:GrpHdr>
    <ns2:OrgnlGrpInfAndSts>
      <ns2:OrgnlMsgId>sb-0002</ns2:OrgnlMsgId>
      <ns2:OrgnlMsgNmId>pain.008.001.02</ns2:OrgnlMsgNmId>
    </ns2:OrgnlGrpInfAndSts>
    <ns2:OrgnlPmtInfAndSts>
      <ns2:OrgnlPmtInfId>sb-0002-RCUR</ns2:OrgnlPmtInfId>
      <ns2:TxInfAndSts>
        <ns2:OrgnlEndToEndId>att-9</ns2:OrgnlEndToEndId>
        <ns2:TxSts>RJCT</ns2:TxSts>
        <ns2:StsRsnInf><ns2:Rsn><ns2:Cd>MD07</ns2:Cd></ns2:Rsn></ns2:StsRsnInf>
      </ns2:TxInfAndSts>
      <ns2:TxInfAndSts>
        <ns2:OrgnlEndToEndId>att-10</ns2:OrgnlEndToEndId>
        <ns2:TxSts>RJCT</ns2:TxSts>
      </ns2:TxInfAndSts>
    </ns2:OrgnlPmtInfAndSts>
  </ns2:CstmrPmtStsRpt>
</ns2:Document>"#;
        assert_eq!(
            parse(xml.as_bytes()).unwrap(),
            status_report(&[("att-9", "MD07"), ("att-10", FALLBACK_REASON)])
        );
    }

    /// A minimal `pain.002` around `body` (the children of `CstmrPmtStsRpt` after `GrpHdr`).
    fn pain_002(body: &str) -> String {
        format!(
            r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt><GrpHdr><MsgId>S</MsgId><CreDtTm>2026-12-03T08:15:00</CreDtTm></GrpHdr>{body}</CstmrPmtStsRpt></Document>"#
        )
    }

    #[test]
    fn pain_002_that_accepts_everything_returns_nothing() {
        let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>ACCP</GrpSts></OrgnlGrpInfAndSts>",
        );
        assert_eq!(parse(xml.as_bytes()).unwrap(), status_report(&[]));
    }

    #[test]
    fn pain_002_rejecting_the_whole_file_without_transactions_is_refused() {
        let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><OrgnlMsgNmId>pain.008.001.08</OrgnlMsgNmId>\
             <GrpSts>RJCT</GrpSts><StsRsnInf><Rsn><Cd>FF01</Cd></Rsn></StsRsnInf></OrgnlGrpInfAndSts>",
        );
        let error = parse(xml.as_bytes()).unwrap_err();
        assert_eq!(
            error,
            ReturnFileError::WholeRejection {
                message_id: Some("sb-1".into()),
                payment_information_id: None,
                reason_code: "FF01".into(),
            }
        );
        assert_eq!(
            error.to_string(),
            "the bank rejected the whole collection file sb-1 (reason FF01) without naming its debits; recur applies rejections of single debits only"
        );
    }

    #[test]
    fn pain_002_rejecting_a_block_without_transactions_is_refused() {
        let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-FRST</OrgnlPmtInfId><PmtInfSts>ACCP</PmtInfSts>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-RCUR</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts></OrgnlPmtInfAndSts>",
        );
        let error = parse(xml.as_bytes()).unwrap_err();
        assert_eq!(
            error,
            ReturnFileError::WholeRejection {
                message_id: Some("sb-1".into()),
                payment_information_id: Some("sb-1-RCUR".into()),
                reason_code: FALLBACK_REASON.into(),
            }
        );
        assert!(error.to_string().starts_with(
            "the bank rejected the payment block sb-1-RCUR of the collection file sb-1 (reason NARR)"
        ));
    }

    #[test]
    fn pain_002_group_rejection_that_lists_transactions_reports_them() {
        let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>RJCT</GrpSts>\
             <StsRsnInf><Rsn><Cd>DU01</Cd></Rsn></StsRsnInf></OrgnlGrpInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-FRST</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>b</OrgnlEndToEndId><TxSts>ACCP</TxSts></TxInfAndSts>\
             </OrgnlPmtInfAndSts>",
        );
        assert_eq!(
            parse(xml.as_bytes()).unwrap(),
            status_report(&[("a", "DU01")])
        );
    }

    #[test]
    fn pain_002_rejection_without_end_to_end_id_is_refused() {
        let xml = pain_002(
            "<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlInstrId>i</OrgnlInstrId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts>",
        );
        let error = parse(xml.as_bytes()).unwrap_err();
        assert_eq!(error, ReturnFileError::MissingEndToEndId("OrgnlEndToEndId"));
        assert_eq!(
            error.to_string(),
            "a rejected or returned transaction has no OrgnlEndToEndId, so it cannot be matched to a debit"
        );
    }

    #[test]
    fn a_debit_named_twice_is_reported_once_with_the_first_reason() {
        let xml = pain_002(
            "<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>b</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC04</Cd></Rsn></StsRsnInf></TxInfAndSts>\
             </OrgnlPmtInfAndSts>",
        );
        assert_eq!(
            parse(xml.as_bytes()).unwrap(),
            status_report(&[("a", "AM04"), ("b", FALLBACK_REASON)])
        );
    }

    /// A creditor's debit notification: the collection's credit (two debits), the return of one
    /// of them, a credit transfer that came back (a credit with return information) and a fee.
    const CAMT_054: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">
  <BkToCstmrDbtCdtNtfctn>
    <GrpHdr><MsgId>C54-20261204-1</MsgId><CreDtTm>2026-12-04T06:00:00+01:00</CreDtTm></GrpHdr>
    <Ntfctn>
      <Id>C54-20261204-1-1</Id>
      <CreDtTm>2026-12-04T06:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Ntry>
        <NtryRef>1</NtryRef>
        <Amt Ccy="EUR">60.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>2026-12-01</Dt></BookgDt>
        <ValDt><Dt>2026-12-01</Dt></ValDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>ESDD</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <Btch><PmtInfId>sb-0001-RCUR</PmtInfId><NbOfTxs>2</NbOfTxs></Btch>
          <TxDtls>
            <Refs><PmtInfId>sb-0001-RCUR</PmtInfId><EndToEndId>att-5</EndToEndId><MndtId>MNDT-5</MndtId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>CRDT</CdtDbtInd>
          </TxDtls>
          <TxDtls>
            <Refs><EndToEndId>att-6</EndToEndId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>CRDT</CdtDbtInd>
          </TxDtls>
        </NtryDtls>
      </Ntry>
      <Ntry>
        <NtryRef>2</NtryRef>
        <Amt Ccy="EUR">30.00</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>2026-12-04</Dt></BookgDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <TxDtls>
            <Refs><EndToEndId>att-5</EndToEndId><MndtId>MNDT-5</MndtId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>DBIT</CdtDbtInd>
            <RltdPties><Dbtr><Pty><Nm>M&#252;ller &amp; S&#246;hne</Nm></Pty></Dbtr></RltdPties>
            <RtrInf>
              <OrgnlBkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>ESDD</SubFmlyCd></Fmly></Domn></OrgnlBkTxCd>
              <Orgtr><Id><OrgId><AnyBIC>BYLADEM1001</AnyBIC></OrgId></Id></Orgtr>
              <Rsn><Cd>AM04</Cd></Rsn>
              <AddtlInf>Insufficient funds</AddtlInf>
            </RtrInf>
          </TxDtls>
        </NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">12.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>RRTN</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls>
          <Refs><EndToEndId>refund-7</EndToEndId></Refs>
          <RtrInf><Rsn><Cd>AC04</Cd></Rsn></RtrInf>
        </TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">0.35</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>MDOP</Cd><SubFmlyCd>CHRG</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs></TxDtls></NtryDtls>
      </Ntry>
    </Ntfctn>
  </BkToCstmrDbtCdtNtfctn>
</Document>
"#;

    #[test]
    fn camt_054_reports_returned_debits_only() {
        assert_eq!(
            parse(CAMT_054.as_bytes()).unwrap(),
            notification(&[("att-5", "AM04")])
        );
    }

    #[test]
    fn camt_054_of_an_older_version_with_a_reversal_booked_as_credit() {
        // camt.054.001.02 has no CdtDbtInd per transaction; this bank books the return as a
        // reversed credit and gives only a proprietary reason, the next return has none.
        let xml = r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.02"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>M</MsgId><CreDtTm>2026-12-04T06:00:00</CreDtTm></GrpHdr>
<Ntfctn><Id>N</Id><CreDtTm>2026-12-04T06:00:00</CreDtTm><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>
<Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><RvslInd>true</RvslInd><Sts>BOOK</Sts><BookgDt><Dt>2026-12-04</Dt></BookgDt>
<BkTxCd/>
<NtryDtls><TxDtls><Refs><EndToEndId>att-8</EndToEndId></Refs><RtrInf><Rsn><Prtry>901</Prtry></Rsn></RtrInf></TxDtls>
<TxDtls><Refs><EndToEndId>att-9</EndToEndId></Refs><RtrInf><AddtlInf>Widerspruch</AddtlInf></RtrInf></TxDtls></NtryDtls></Ntry>
</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
        assert_eq!(
            parse(xml.as_bytes()).unwrap(),
            notification(&[("att-8", "901"), ("att-9", FALLBACK_REASON)])
        );
    }

    #[test]
    fn camt_054_return_without_end_to_end_id_is_refused() {
        let xml = r#"<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry><CdtDbtInd>DBIT</CdtDbtInd>
<NtryDtls><TxDtls><Refs><MndtId>M</MndtId></Refs><RtrInf><Rsn><Cd>MD06</Cd></Rsn></RtrInf></TxDtls></NtryDtls>
</Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
        assert_eq!(
            parse(xml.as_bytes()),
            Err(ReturnFileError::MissingEndToEndId("EndToEndId"))
        );
    }

    #[test]
    fn camt_054_without_returns_returns_nothing() {
        let xml = r#"<Document><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>M</MsgId></GrpHdr></BkToCstmrDbtCdtNtfctn></Document>"#;
        assert_eq!(parse(xml.as_bytes()).unwrap(), notification(&[]));
    }

    #[test]
    fn a_doctype_is_refused_before_any_entity_is_used() {
        let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE Document [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<Document><CstmrPmtStsRpt><OrgnlPmtInfAndSts><TxInfAndSts>
<OrgnlEndToEndId>&lol3;</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts></CstmrPmtStsRpt></Document>"#;
        let external = r#"<?xml version="1.0"?>
<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry><CdtDbtInd>DBIT</CdtDbtInd><NtryDtls><TxDtls>
<Refs><EndToEndId>&xxe;</EndToEndId></Refs><RtrInf/></TxDtls></NtryDtls></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
        let public =
            r#"<!DOCTYPE Document PUBLIC "-//X//Y" "http://example.invalid/x.dtd"><Document/>"#;
        for xml in [laughs, external, public] {
            assert_eq!(parse(xml.as_bytes()), Err(ReturnFileError::DocType));
        }
        assert_eq!(
            ReturnFileError::DocType.to_string(),
            "the file has a DOCTYPE declaration; bank return files have none and recur does not read them"
        );
    }

    #[test]
    fn only_predefined_entities_and_character_references_are_resolved() {
        let xml = pain_002(
            "<OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>a&#45;b&#x2D;c&amp;d</OrgnlEndToEndId>\
             <TxSts>RJ<![CDATA[CT]]></TxSts></TxInfAndSts></OrgnlPmtInfAndSts>",
        );
        assert_eq!(
            parse(xml.as_bytes()).unwrap(),
            status_report(&[("a-b-c&d", FALLBACK_REASON)])
        );

        let undefined = pain_002("<OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>&xxe;</OrgnlEndToEndId></TxInfAndSts></OrgnlPmtInfAndSts>");
        assert_eq!(
            parse(undefined.as_bytes()),
            Err(ReturnFileError::UnknownEntity("xxe".into()))
        );
    }

    #[test]
    fn malformed_xml_is_refused() {
        let cases = [
            "",
            "   ",
            "not xml at all",
            "<Document><CstmrPmtStsRpt></Document>",
            "<Document><CstmrPmtStsRpt>",
            "<Document><CstmrPmtStsRpt></CstmrPmtStsRpt></Document><Document/>",
            "<Document><CstmrPmtStsRpt></CstmrPmtStsRpt></Document>trailing",
            "<Document><CstmrPmtStsRpt><GrpHdr a=></GrpHdr></CstmrPmtStsRpt></Document>",
            "</Document>",
            "<Document><CstmrPmtStsRpt>&amp</CstmrPmtStsRpt></Document>",
            &PAIN_002_MIXED[..PAIN_002_MIXED.len() / 2],
        ];
        for xml in cases {
            match parse(xml.as_bytes()) {
                Err(ReturnFileError::Malformed(detail)) => assert!(!detail.is_empty()),
                other => panic!("{xml:?} gave {other:?}"),
            }
        }
        let message = parse(b"<Document><CstmrPmtStsRpt>")
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "the file is not well-formed XML: the file ends inside <CstmrPmtStsRpt>"
        );
    }

    #[test]
    fn other_messages_are_refused() {
        let cases = [
            ("<html><body/></html>", "html"),
            ("<Document xmlns='urn:iso:std:iso:20022:tech:xsd:pain.008.001.08'><CstmrDrctDbtInitn/></Document>", "Document/CstmrDrctDbtInitn"),
            ("<Document><BkToCstmrStmt/></Document>", "Document/BkToCstmrStmt"),
            ("<Document/>", "an empty Document"),
        ];
        for (xml, found) in cases {
            assert_eq!(
                parse(xml.as_bytes()),
                Err(ReturnFileError::WrongRoot(found.into())),
                "{xml}"
            );
        }
        assert_eq!(
            ReturnFileError::WrongRoot("html".into()).to_string(),
            "the file is neither a pain.002 payment status report nor a camt.054 debit notification (it starts with html)"
        );
    }

    #[test]
    fn a_collection_file_is_not_a_return_file() {
        let sample = &super::super::pain008::tests::samples()[0].1;
        let xml = super::super::pain008::render(sample).unwrap();
        assert_eq!(
            parse(xml.as_bytes()),
            Err(ReturnFileError::WrongRoot(
                "Document/CstmrDrctDbtInitn".into()
            ))
        );
    }

    #[test]
    fn only_utf8_is_read_and_a_byte_order_mark_is_fine() {
        let latin1 = b"<Document><CstmrPmtStsRpt><GrpHdr><MsgId>M\xfcller</MsgId></GrpHdr></CstmrPmtStsRpt></Document>";
        assert_eq!(parse(latin1), Err(ReturnFileError::NotUtf8));
        let with_bom = format!("\u{feff}{PAIN_002_MIXED}");
        assert_eq!(parse(with_bom.as_bytes()).unwrap().returned.len(), 4);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = format!(
            "<Document><CstmrPmtStsRpt>{}{}</CstmrPmtStsRpt></Document>",
            "<a>".repeat(MAX_DEPTH),
            "</a>".repeat(MAX_DEPTH)
        );
        assert_eq!(parse(deep.as_bytes()), Err(ReturnFileError::TooDeep));
        let fine = format!(
            "<Document><CstmrPmtStsRpt>{}{}</CstmrPmtStsRpt></Document>",
            "<a>".repeat(MAX_DEPTH - 2),
            "</a>".repeat(MAX_DEPTH - 2)
        );
        assert!(parse(fine.as_bytes()).is_ok());
    }

    fn status() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("ACCP"), Just("ACSC"), Just("PDNG"), Just("RJCT")]
    }

    fn reason() -> impl Strategy<Value = Option<&'static str>> {
        proptest::option::of(prop_oneof![
            Just("AC04"),
            Just("AM04"),
            Just("MD06"),
            Just("MS02")
        ])
    }

    proptest! {
        #[test]
        fn pain_002_reports_exactly_the_rejected_transactions(
            transactions in proptest::collection::vec((status(), reason()), 0..30)
        ) {
            let body: String = transactions
                .iter()
                .enumerate()
                .map(|(i, (status, reason))| {
                    let reason = reason
                        .map(|r| format!("<StsRsnInf><Rsn><Cd>{r}</Cd></Rsn></StsRsnInf>"))
                        .unwrap_or_default();
                    format!("<TxInfAndSts><OrgnlEndToEndId>e2e-{i}</OrgnlEndToEndId><TxSts>{status}</TxSts>{reason}</TxInfAndSts>")
                })
                .collect();
            let xml = pain_002(&format!("<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>{body}</OrgnlPmtInfAndSts>"));
            let expected: Vec<Returned> = transactions
                .iter()
                .enumerate()
                .filter(|(_, (status, _))| *status == "RJCT")
                .map(|(i, (_, reason))| Returned {
                    end_to_end_id: format!("e2e-{i}"),
                    reason_code: reason.unwrap_or(FALLBACK_REASON).to_owned(),
                })
                .collect();
            prop_assert_eq!(parse(xml.as_bytes()).unwrap().returned, expected);
        }

        #[test]
        fn any_bytes_give_an_answer_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn cut_or_damaged_files_give_an_answer_not_a_panic(cut in 0usize..2_000, at in 0usize..2_000, byte in any::<u8>()) {
            let mut bytes = CAMT_054.as_bytes()[..cut.min(CAMT_054.len())].to_vec();
            if let Some(b) = bytes.get_mut(at) {
                *b = byte;
            }
            let _ = parse(&bytes);
        }
    }
}
