//! A `pain.002` status report, gathered element by element: the transactions whose status (its
//! own, else its payment block's, else the group's) is `RJCT`, with their reasons.

use super::{ancestor, ends_with, Reason, ReturnFileError, Returned, FALLBACK_REASON};

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
pub(super) struct StatusReport {
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
    pub(super) fn open(&mut self, path: &[String]) {
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

    pub(super) fn close(&mut self, path: &[String], text: &str) {
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
    pub(super) fn finish(self) -> Result<Vec<Returned>, ReturnFileError> {
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
