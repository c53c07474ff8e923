//! Return files (DESIGN §18): `POST /sepa/returns` with a bank's `pain.002` status report or
//! `camt.054` debit notification. The file is read whole first
//! ([`recur_domain::sepa::returns`]: no DTD, no entity is ever expanded); a file that cannot
//! be read is refused with nothing applied. Each debit it names is matched by its
//! `EndToEndId` among the merchant's and reversed once ([`crate::billing::sepa_returns`]).

use std::collections::HashSet;

use recur_domain::sepa::returns::{self, FileKind};

use crate::billing::sepa_returns;
use crate::platform::Platform;
use crate::services::ServiceError;
use crate::store::sepa_debits;

/// What a return file changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// `pain.002` or `camt.054`.
    pub kind: FileKind,
    /// Debits reversed by this file.
    pub matched: usize,
    /// Debits it names whose return was applied before.
    pub already_applied: usize,
    /// `EndToEndId`s that name no debit of the merchant.
    pub unknown: Vec<String>,
}

/// Reads the return file `xml` and reverses the merchant's debits it names.
pub async fn apply(
    state: &Platform,
    merchant_id: i64,
    xml: &[u8],
) -> Result<Applied, ServiceError> {
    let file = returns::parse(xml).map_err(|e| ServiceError::invalid("file", e.to_string()))?;
    let ids: Vec<String> = file
        .returned
        .iter()
        .map(|r| r.end_to_end_id.clone())
        .collect();
    let known = sepa_debits::by_end_to_end_ids(state.store.pool(), merchant_id, &ids).await?;
    let known_ids: HashSet<&str> = known.iter().map(|d| d.end_to_end_id.as_str()).collect();
    let unknown: Vec<String> = ids
        .iter()
        .filter(|id| !known_ids.contains(id.as_str()))
        .cloned()
        .collect();
    let mut to_reverse = Vec::new();
    let mut already_applied = 0;
    for debit in known {
        if debit.returned {
            already_applied += 1;
            continue;
        }
        let code = file
            .returned
            .iter()
            .find(|r| r.end_to_end_id == debit.end_to_end_id)
            .map(|r| r.reason_code.clone())
            .unwrap_or_else(|| returns::FALLBACK_REASON.to_string());
        to_reverse.push((debit, code));
    }
    let at = state.merchant_now(merchant_id).await?;
    let matched = sepa_returns::reverse(state, merchant_id, &to_reverse, at).await?;
    already_applied += to_reverse.len() - matched;
    Ok(Applied {
        kind: file.kind,
        matched,
        already_applied,
        unknown,
    })
}
