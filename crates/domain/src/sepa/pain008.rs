//! The collection file: an ISO 20022 `pain.008.001.08` `CustomerDirectDebitInitiation` document
//! (DESIGN §18), as the merchant uploads it to their bank.
//!
//! Layout: one `GrpHdr` (`MsgId`, `CreDtTm` in UTC to the second with `Z`, `NbOfTxs` and
//! `CtrlSum` over every debit, `InitgPty/Nm` the creditor's name), then one `PmtInf` per sequence
//! type present, `FRST` before `RCUR`, each with `PmtInfId` = message id + `-FRST`/`-RCUR`,
//! `PmtMtd` `DD`, its own `NbOfTxs` and `CtrlSum`, `SvcLvl` `SEPA`, `LclInstrm` `CORE`, `SeqTp`,
//! `ReqdColltnDt`, the creditor's name, IBAN and agent (`BICFI`, or `Othr/Id` `NOTPROVIDED`
//! without a BIC), `ChrgBr` `SLEV` and `CdtrSchmeId` (the creditor identifier, scheme
//! `SEPA`). Within a `PmtInf` the debits keep the order they were given in.
//!
//! Free text (names, remittance information) goes through [`sepa_text`] and is cut to the
//! lengths the EPC allows: 70 characters for names, 140 for the remittance line. Identifiers are
//! checked with [`is_sepa_id`] and never changed; IBANs and BICs are written without spaces and
//! in capitals. Anything that would make the file invalid is a [`RenderError`], so a rendered
//! file always validates against the `pain.008.001.08` XSD. The same [`Collection`] always
//! renders to the same bytes.

use std::collections::BTreeSet;
use std::fmt;
use std::io;

use chrono::{DateTime, NaiveDate, Utc};
use quick_xml::escape::partial_escape;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;
use rust_decimal::Decimal;

use super::text::{is_sepa_id, sepa_text};

/// The XML namespace of the document.
pub const NAMESPACE: &str = "urn:iso:std:iso:20022:tech:xsd:pain.008.001.08";

/// Longest name the EPC allows (`Nm`, a `Max70Text` in the SEPA rulebook).
pub const MAX_NAME_CHARS: usize = 70;

/// Longest unstructured remittance line (`RmtInf/Ustrd`, a `Max140Text`).
pub const MAX_REMITTANCE_CHARS: usize = 140;

/// Longest message id: the `PmtInfId`s append `-FRST` or `-RCUR` to it and must stay within 35.
pub const MAX_MESSAGE_ID_CHARS: usize = 30;

/// What the agent's `Othr/Id` says when the BIC is not known.
const NOT_PROVIDED: &str = "NOTPROVIDED";

/// Where a mandate is in its life, which decides the debit's `SeqTp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sequence {
    /// `FRST`: the first collection under a mandate (again after a failed first one).
    First,
    /// `RCUR`: every later collection.
    Recurring,
}

impl Sequence {
    /// The `SeqTp` code: `FRST` or `RCUR`.
    pub fn code(self) -> &'static str {
        match self {
            Sequence::First => "FRST",
            Sequence::Recurring => "RCUR",
        }
    }

    /// Both sequence types in the order their `PmtInf` blocks are written.
    const ALL: [Sequence; 2] = [Sequence::First, Sequence::Recurring];
}

/// The merchant collecting the money.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Creditor {
    /// The creditor's name (`Cdtr/Nm` and `InitgPty/Nm`); converted with [`sepa_text`], at most
    /// 70 characters.
    pub name: String,
    /// The collection account's IBAN; spaces are dropped and letters capitalised.
    pub iban: String,
    /// The collection account's BIC, when known; otherwise the agent is `NOTPROVIDED`.
    pub bic: Option<String>,
    /// The SEPA creditor identifier, for example `DE98ZZZ09999999999` (`CdtrSchmeId`).
    pub creditor_id: String,
}

/// One debit of a customer's account under a mandate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Debit {
    /// The debit's unique reference (recur's attempt reference), what return files name it by.
    pub end_to_end_id: String,
    /// Amount in EUR: positive, at most two decimal places, at most 999 999 999.99.
    pub amount: Decimal,
    /// The mandate reference (`MndtId`).
    pub mandate_id: String,
    /// When the debtor signed the mandate (`DtOfSgntr`).
    pub signed_on: NaiveDate,
    /// `FRST` or `RCUR`.
    pub sequence: Sequence,
    /// The account holder's name; converted with [`sepa_text`], at most 70 characters.
    pub debtor_name: String,
    /// The debtor's IBAN; spaces are dropped and letters capitalised.
    pub debtor_iban: String,
    /// The debtor's BIC, when known; otherwise the agent is `NOTPROVIDED`.
    pub debtor_bic: Option<String>,
    /// The remittance line (`RmtInf/Ustrd`), the invoice number; converted with [`sepa_text`]
    /// and cut to 140 characters. Left out when nothing remains after conversion.
    pub remittance: String,
}

/// A collection file's content: every debit the merchant's bank should collect on one date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collection {
    /// The file's message id (`MsgId`): an identifier of at most 30 characters.
    pub message_id: String,
    /// When the file was made (`CreDtTm`), written in UTC to the second.
    pub created_at: DateTime<Utc>,
    /// The requested collection date (`ReqdColltnDt`) of every debit.
    pub collection_date: NaiveDate,
    /// The merchant.
    pub creditor: Creditor,
    /// The debits, at least one, each with its own end-to-end id.
    pub debits: Vec<Debit>,
}

/// Why a [`Collection`] cannot become a valid collection file. `field` names the offending input
/// the way the Rust structs do, for example `debits[2].debtor_iban`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenderError {
    /// A collection without debits: a `pain.008` needs at least one.
    NoDebits,
    /// An identifier that [`is_sepa_id`] refuses, or a message id longer than 30 characters.
    InvalidId {
        /// The field, for example `debits[0].mandate_id`.
        field: String,
    },
    /// An end-to-end id that two debits share.
    DuplicateEndToEndId(String),
    /// An amount that is not positive, has more than two decimals or is above 999 999 999.99.
    InvalidAmount {
        /// The field, for example `debits[3].amount`.
        field: String,
    },
    /// The sum of the amounts has more digits than `CtrlSum` allows.
    TotalTooLarge,
    /// A name with nothing left after conversion to the SEPA character set.
    EmptyName {
        /// The field, for example `creditor.name`.
        field: String,
    },
    /// Not an IBAN's shape: two letters, two digits, 1 to 30 letters or digits.
    InvalidIban {
        /// The field, for example `debits[1].debtor_iban`.
        field: String,
    },
    /// Not a BIC's shape: 8 or 11 letters and digits, letters in places 5 and 6.
    InvalidBic {
        /// The field, for example `creditor.bic`.
        field: String,
    },
    /// Writing the XML failed. Writing to memory does not fail; this only keeps the renderer
    /// free of panics.
    Write(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::NoDebits => f.write_str("a collection file needs at least one debit"),
            RenderError::InvalidId { field } => write!(
                f,
                "{field} must be 1 to 35 letters, digits or / - ? : ( ) . , ' + (message ids at most 30), not starting or ending with '/' and without '//'"
            ),
            RenderError::DuplicateEndToEndId(id) => {
                write!(f, "the end-to-end id {id} is used by more than one debit")
            }
            RenderError::InvalidAmount { field } => write!(
                f,
                "{field} must be a EUR amount from 0.01 to 999999999.99 with at most two decimals"
            ),
            RenderError::TotalTooLarge => f.write_str("the debits add up to more than a collection file can hold"),
            RenderError::EmptyName { field } => {
                write!(f, "{field} has nothing left in the SEPA character set")
            }
            RenderError::InvalidIban { field } => write!(f, "{field} is not an IBAN"),
            RenderError::InvalidBic { field } => write!(f, "{field} is not a BIC"),
            RenderError::Write(reason) => write!(f, "the collection file could not be written: {reason}"),
        }
    }
}

impl std::error::Error for RenderError {}

/// Renders `collection` as a `pain.008.001.08` document: UTF-8 XML with a declaration, indented
/// by two spaces. See the module documentation for the layout and the conversions.
pub fn render(collection: &Collection) -> Result<String, RenderError> {
    let file = prepare(collection)?;
    let bytes = write_file(&file).map_err(|e| RenderError::Write(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| RenderError::Write(e.to_string()))
}

/// A party as it is written: name converted, account and agent normalised.
struct Party {
    name: String,
    iban: String,
    bic: Option<String>,
}

/// One `DrctDbtTxInf`, every value checked and converted.
struct Transaction {
    end_to_end_id: String,
    amount: Decimal,
    mandate_id: String,
    signed_on: String,
    debtor: Party,
    remittance: Option<String>,
}

/// One `PmtInf`: the debits of one sequence type.
struct Block {
    id: String,
    sequence: Sequence,
    transactions: Vec<Transaction>,
}

/// The whole document, ready to write: nothing here can make it invalid any more.
struct File {
    message_id: String,
    created_at: String,
    collection_date: String,
    creditor: Party,
    creditor_id: String,
    blocks: Vec<Block>,
}

/// Checks and converts every value of `collection`.
fn prepare(collection: &Collection) -> Result<File, RenderError> {
    if collection.debits.is_empty() {
        return Err(RenderError::NoDebits);
    }
    let message_id = identifier(&collection.message_id, "message_id")?;
    if message_id.chars().count() > MAX_MESSAGE_ID_CHARS {
        return Err(invalid_id("message_id"));
    }
    let creditor = &collection.creditor;
    let creditor_party = party(
        &creditor.name,
        &creditor.iban,
        creditor.bic.as_deref(),
        "creditor.",
    )?;
    let creditor_id = identifier(&creditor.creditor_id, "creditor.creditor_id")?;

    let mut seen = BTreeSet::new();
    let mut transactions = Vec::with_capacity(collection.debits.len());
    for (index, debit) in collection.debits.iter().enumerate() {
        let transaction = prepare_debit(debit, index)?;
        if !seen.insert(transaction.end_to_end_id.clone()) {
            return Err(RenderError::DuplicateEndToEndId(transaction.end_to_end_id));
        }
        transactions.push((debit.sequence, transaction));
    }
    let total: Decimal = transactions.iter().map(|(_, t)| t.amount).sum();
    if total >= Decimal::from(10_000_000_000_000_000_i64) {
        return Err(RenderError::TotalTooLarge);
    }

    Ok(File {
        blocks: blocks(&message_id, transactions),
        message_id,
        created_at: collection
            .created_at
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        collection_date: iso_date(collection.collection_date),
        creditor: creditor_party,
        creditor_id,
    })
}

/// Checks and converts the debit at `index`.
fn prepare_debit(debit: &Debit, index: usize) -> Result<Transaction, RenderError> {
    let prefix = format!("debits[{index}].");
    let field = |name: &str| format!("{prefix}{name}");
    let remittance = sepa_text(&debit.remittance, MAX_REMITTANCE_CHARS);
    Ok(Transaction {
        end_to_end_id: identifier(&debit.end_to_end_id, &field("end_to_end_id"))?,
        amount: amount(debit.amount).ok_or_else(|| RenderError::InvalidAmount {
            field: field("amount"),
        })?,
        mandate_id: identifier(&debit.mandate_id, &field("mandate_id"))?,
        signed_on: iso_date(debit.signed_on),
        debtor: party(
            &debit.debtor_name,
            &debit.debtor_iban,
            debit.debtor_bic.as_deref(),
            &field("debtor_"),
        )?,
        remittance: (!remittance.is_empty()).then_some(remittance),
    })
}

/// Groups the transactions into one block per sequence type present, `FRST` first.
fn blocks(message_id: &str, transactions: Vec<(Sequence, Transaction)>) -> Vec<Block> {
    let mut blocks: Vec<Block> = Sequence::ALL
        .iter()
        .map(|&sequence| Block {
            id: format!("{message_id}-{}", sequence.code()),
            sequence,
            transactions: Vec::new(),
        })
        .collect();
    for (sequence, transaction) in transactions {
        if let Some(block) = blocks.iter_mut().find(|b| b.sequence == sequence) {
            block.transactions.push(transaction);
        }
    }
    blocks.retain(|b| !b.transactions.is_empty());
    blocks
}

/// A name, an IBAN and an optional BIC, checked and converted. Errors name the fields
/// `{prefix}name`, `{prefix}iban` and `{prefix}bic`, for example `creditor.iban` or
/// `debits[0].debtor_iban`.
fn party(name: &str, iban: &str, bic: Option<&str>, prefix: &str) -> Result<Party, RenderError> {
    let field = |what: &str| format!("{prefix}{what}");
    let name = sepa_text(name, MAX_NAME_CHARS);
    if name.is_empty() {
        return Err(RenderError::EmptyName {
            field: field("name"),
        });
    }
    let iban = compact_upper(iban);
    if !is_iban_shape(&iban) {
        return Err(RenderError::InvalidIban {
            field: field("iban"),
        });
    }
    let bic = bic.map(compact_upper).filter(|b| !b.is_empty());
    if bic.as_deref().is_some_and(|b| !is_bic_shape(b)) {
        return Err(RenderError::InvalidBic {
            field: field("bic"),
        });
    }
    Ok(Party { name, iban, bic })
}

/// `id` when [`is_sepa_id`] accepts it.
fn identifier(id: &str, field: &str) -> Result<String, RenderError> {
    if is_sepa_id(id) {
        Ok(id.to_owned())
    } else {
        Err(invalid_id(field))
    }
}

/// An [`RenderError::InvalidId`] for `field`.
fn invalid_id(field: &str) -> RenderError {
    RenderError::InvalidId {
        field: field.to_owned(),
    }
}

/// `value` with two decimal places when it is a valid SEPA amount: from 0.01 to
/// 999 999 999.99, no more than two decimals (trailing zeros do not count).
fn amount(value: Decimal) -> Option<Decimal> {
    let max = Decimal::new(99_999_999_999, 2);
    if value <= Decimal::ZERO || value > max || value.normalize().scale() > 2 {
        return None;
    }
    Some(two_decimals(value))
}

/// `value` with exactly two decimal places, so that it prints as `12.30`. Only called with
/// values of at most two significant decimals, so nothing is rounded.
fn two_decimals(value: Decimal) -> Decimal {
    let mut value = value.normalize();
    value.rescale(2);
    value
}

/// `text` without whitespace, in capitals.
fn compact_upper(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Whether `iban` has the shape the XSD asks for: `[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}`. Check
/// digits are the caller's business.
fn is_iban_shape(iban: &str) -> bool {
    let bytes = iban.as_bytes();
    (5..=34).contains(&bytes.len())
        && bytes[..2].iter().all(u8::is_ascii_uppercase)
        && bytes[2..4].iter().all(u8::is_ascii_digit)
        && bytes[4..]
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Whether `bic` has the shape the XSD asks for:
/// `[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?`.
fn is_bic_shape(bic: &str) -> bool {
    let bytes = bic.as_bytes();
    let upper_or_digit = |b: &u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    matches!(bytes.len(), 8 | 11)
        && bytes[..4].iter().all(upper_or_digit)
        && bytes[4..6].iter().all(u8::is_ascii_uppercase)
        && bytes[6..].iter().all(upper_or_digit)
}

/// `date` as an ISO date, `2026-11-27`.
fn iso_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// The sum of the transactions' amounts, with two decimals.
fn control_sum<'a>(transactions: impl Iterator<Item = &'a Transaction>) -> String {
    two_decimals(transactions.map(|t| t.amount).sum()).to_string()
}

type Xml = Writer<Vec<u8>>;

/// Writes the whole document.
fn write_file(file: &File) -> io::Result<Vec<u8>> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.create_element("Document")
        .with_attribute(("xmlns", NAMESPACE))
        .write_inner_content(|w| {
            node(w, "CstmrDrctDbtInitn", |w| {
                write_group_header(w, file)?;
                file.blocks
                    .iter()
                    .try_for_each(|block| write_block(w, file, block))
            })
        })?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

/// `GrpHdr`.
fn write_group_header(w: &mut Xml, file: &File) -> io::Result<()> {
    let transactions = || file.blocks.iter().flat_map(|b| b.transactions.iter());
    node(w, "GrpHdr", |w| {
        leaf(w, "MsgId", &file.message_id)?;
        leaf(w, "CreDtTm", &file.created_at)?;
        leaf(w, "NbOfTxs", &transactions().count().to_string())?;
        leaf(w, "CtrlSum", &control_sum(transactions()))?;
        node(w, "InitgPty", |w| leaf(w, "Nm", &file.creditor.name))
    })
}

/// One `PmtInf` with its transactions.
fn write_block(w: &mut Xml, file: &File, block: &Block) -> io::Result<()> {
    node(w, "PmtInf", |w| {
        leaf(w, "PmtInfId", &block.id)?;
        leaf(w, "PmtMtd", "DD")?;
        leaf(w, "NbOfTxs", &block.transactions.len().to_string())?;
        leaf(w, "CtrlSum", &control_sum(block.transactions.iter()))?;
        node(w, "PmtTpInf", |w| {
            node(w, "SvcLvl", |w| leaf(w, "Cd", "SEPA"))?;
            node(w, "LclInstrm", |w| leaf(w, "Cd", "CORE"))?;
            leaf(w, "SeqTp", block.sequence.code())
        })?;
        leaf(w, "ReqdColltnDt", &file.collection_date)?;
        node(w, "Cdtr", |w| leaf(w, "Nm", &file.creditor.name))?;
        write_account(w, "CdtrAcct", &file.creditor.iban)?;
        write_agent(w, "CdtrAgt", file.creditor.bic.as_deref())?;
        leaf(w, "ChrgBr", "SLEV")?;
        write_scheme_id(w, &file.creditor_id)?;
        block
            .transactions
            .iter()
            .try_for_each(|t| write_transaction(w, t))
    })
}

/// `CdtrSchmeId`: the creditor identifier under the `SEPA` scheme.
fn write_scheme_id(w: &mut Xml, creditor_id: &str) -> io::Result<()> {
    node(w, "CdtrSchmeId", |w| {
        node(w, "Id", |w| {
            node(w, "PrvtId", |w| {
                node(w, "Othr", |w| {
                    leaf(w, "Id", creditor_id)?;
                    node(w, "SchmeNm", |w| leaf(w, "Prtry", "SEPA"))
                })
            })
        })
    })
}

/// One `DrctDbtTxInf`.
fn write_transaction(w: &mut Xml, t: &Transaction) -> io::Result<()> {
    node(w, "DrctDbtTxInf", |w| {
        node(w, "PmtId", |w| leaf(w, "EndToEndId", &t.end_to_end_id))?;
        w.create_element("InstdAmt")
            .with_attribute(("Ccy", "EUR"))
            .write_text_content(text(&t.amount.to_string()))?;
        node(w, "DrctDbtTx", |w| {
            node(w, "MndtRltdInf", |w| {
                leaf(w, "MndtId", &t.mandate_id)?;
                leaf(w, "DtOfSgntr", &t.signed_on)
            })
        })?;
        write_agent(w, "DbtrAgt", t.debtor.bic.as_deref())?;
        node(w, "Dbtr", |w| leaf(w, "Nm", &t.debtor.name))?;
        write_account(w, "DbtrAcct", &t.debtor.iban)?;
        match &t.remittance {
            Some(line) => node(w, "RmtInf", |w| leaf(w, "Ustrd", line)),
            None => Ok(()),
        }
    })
}

/// An account (`CdtrAcct`, `DbtrAcct`) identified by its IBAN.
fn write_account(w: &mut Xml, name: &str, iban: &str) -> io::Result<()> {
    node(w, name, |w| node(w, "Id", |w| leaf(w, "IBAN", iban)))
}

/// An agent (`CdtrAgt`, `DbtrAgt`): its BIC, or `Othr/Id` `NOTPROVIDED` without one.
fn write_agent(w: &mut Xml, name: &str, bic: Option<&str>) -> io::Result<()> {
    node(w, name, |w| {
        node(w, "FinInstnId", |w| match bic {
            Some(bic) => leaf(w, "BICFI", bic),
            None => node(w, "Othr", |w| leaf(w, "Id", NOT_PROVIDED)),
        })
    })
}

/// An element with child elements written by `inner`.
fn node(w: &mut Xml, name: &str, inner: impl FnOnce(&mut Xml) -> io::Result<()>) -> io::Result<()> {
    w.create_element(name).write_inner_content(inner)?;
    Ok(())
}

/// An element holding only `value`, escaped.
fn leaf(w: &mut Xml, name: &str, value: &str) -> io::Result<()> {
    w.create_element(name).write_text_content(text(value))?;
    Ok(())
}

/// `value` as XML character data: `&`, `<` and `>` escaped. Converted text never holds them, so
/// this is a second line of defence; the apostrophe the SEPA set allows stays as it is.
fn text(value: &str) -> BytesText<'static> {
    BytesText::from_escaped(partial_escape(value).into_owned())
}

#[cfg(test)]
pub(crate) mod tests;
