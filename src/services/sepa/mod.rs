//! SEPA Direct Debit from the merchant's own bank account (DESIGN §18).

pub mod batches;
pub mod creditors;
pub mod mandates;
pub mod returns;
