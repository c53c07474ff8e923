//! SEPA Direct Debit rules (DESIGN §18): the creditor's and the debtor's identifiers, mandate
//! references, the TARGET2 calendar a collection date is chosen on, the collection file recur
//! hands to the merchant's bank ([`pain008`]), the bank's return files it reads back
//! ([`returns`]) and the SEPA character set both are written in ([`text`]). Pure: the current
//! time and every other outside fact come in as arguments.

pub mod account;
pub mod creditor;
pub mod mandate;
pub mod pain008;
pub mod returns;
pub mod target2;
pub mod text;
