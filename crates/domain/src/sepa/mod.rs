//! SEPA Direct Debit rules (DESIGN §18): the creditor's and the debtor's identifiers, mandate
//! references, and the TARGET2 calendar a collection date is chosen on.

pub mod account;
pub mod creditor;
pub mod mandate;
pub mod target2;
