//! Invoices and their refunds (DESIGN §9): `GET /invoice/{invoiceKey}` and
//! `POST /invoice/{invoiceKey}/refund`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, OptionalJsonBody};
use super::invoice_records::{CreditNoteRecord, InvoiceRecord};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::links::{self, Document};
use crate::platform::Platform;
use crate::services::invoices::{self, InvoiceDetail, InvoiceRefund};
use crate::state::AppState;
use crate::store::credit_notes::CreditNote;
use crate::store::refunds::Refund;

/// A refund of an invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundRecord {
    /// `rfnd_` + 24 base62 characters.
    pub refund_key: String,
    /// The refunded invoice.
    pub invoice_key: String,
    /// `TransactionId` of the refund's `TRANSACTION_DATA_UPDATE` (one sequence with charges and
    /// cashier transactions).
    pub transaction_id: i64,
    /// Decimal string in the invoice's currency.
    pub amount: String,
    /// ISO 4217 code.
    pub currency: String,
    /// `Succeeded`, `Failed` (the processor refused) or `Pending` (the processor's answer is
    /// awaited).
    pub status: String,
    /// The merchant's reason, when given.
    pub reason: Option<String>,
    /// The processor's code of a refusal.
    pub decline_code: Option<String>,
    /// When it was asked for (UTC; the merchant's clock).
    pub created_at: String,
    /// `cn_…`: the credit note a succeeded refund wrote; `null` otherwise.
    pub credit_note_key: Option<String>,
}

impl RefundRecord {
    fn of(
        refund: &Refund,
        invoice_key: &str,
        credit_note: Option<&CreditNote>,
    ) -> Result<Self, ApiError> {
        let currency = Currency::parse(&refund.currency).map_err(anyhow::Error::from)?;
        Ok(Self {
            refund_key: refund.refund_key.clone(),
            invoice_key: invoice_key.to_string(),
            transaction_id: refund.id,
            amount: format_amount(refund.amount, currency),
            currency: refund.currency.clone(),
            status: refund.status.as_str().to_string(),
            reason: refund.reason.clone(),
            decline_code: refund.decline.as_ref().map(|d| d.0.clone()),
            created_at: format_utc(refund.created_at),
            credit_note_key: credit_note.map(|note| note.credit_note_key.clone()),
        })
    }
}

/// An invoice with its membership, customer, refunds and credit notes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDocument {
    /// The invoice's amounts, lines and times.
    #[serde(flatten)]
    pub invoice: InvoiceRecord,
    /// The membership it bills.
    pub membership_key: String,
    /// The customer billed.
    pub customer_key: String,
    /// Its refunds, oldest first.
    pub refunds: Vec<RefundRecord>,
    /// Its credit notes, oldest first.
    pub credit_notes: Vec<CreditNoteRecord>,
    /// A signed link to its PDF that works without a token for 30 days.
    pub pdf_url: String,
}

impl InvoiceDocument {
    /// The document of the invoice `detail` holds, with its refunds and credit notes, its links
    /// signed as of `now` (the server's time).
    pub fn new(
        state: &Platform,
        detail: InvoiceDetail,
        now: DateTime<Utc>,
    ) -> Result<Self, ApiError> {
        let InvoiceDetail {
            invoice,
            membership_key,
            customer_key,
            refunds,
            credit_notes,
        } = detail;
        let note_of = |refund: &Refund| {
            credit_notes
                .iter()
                .find(|note| note.refund_id == Some(refund.id))
        };
        Ok(Self {
            invoice: InvoiceRecord::from(&invoice),
            membership_key,
            customer_key,
            refunds: refunds
                .iter()
                .map(|r| RefundRecord::of(r, &invoice.invoice_key, note_of(r)))
                .collect::<Result<_, _>>()?,
            credit_notes: credit_notes
                .iter()
                .map(|note| CreditNoteRecord::of(state, note, now))
                .collect::<Result<_, _>>()?,
            pdf_url: links::document_url(
                state,
                invoice.merchant_id,
                Document::Invoice,
                &invoice.invoice_key,
                now,
            ),
        })
    }
}

/// Body of `POST /invoice/{invoiceKey}/refund`; may be left out for a full refund.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceRefundRequest {
    /// Amount in the invoice's currency (number or decimal string); what is left to refund when
    /// absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "10.00", pattern = r"^[0-9]+(\.[0-9]+)?$")]
    pub amount: Field<Decimal>,
    /// Why the money is given back (up to 500 characters).
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 500)]
    pub reason: Field<String>,
}

/// Returns an invoice of the merchant's with its refunds.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/invoice/{invoiceKey}",
    tag = "invoices",
    params(("invoiceKey" = String, Path, description = "Key of the invoice (in_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The invoice", body = InvoiceDocument),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such invoice for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_invoice(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(invoice_key): Path<String>,
) -> Result<Json<InvoiceDocument>, ApiError> {
    let detail = invoices::invoice(&state, auth.merchant_id, &invoice_key).await?;
    Ok(Json(InvoiceDocument::new(
        &state,
        detail,
        state.clock.now(),
    )?))
}

/// Refunds all or part of a Paid invoice's card payment through the processor that took it. The
/// refund is notified with `TRANSACTION_DATA_UPDATE`, `TransactionType: Refund`; the membership's
/// status does not change. A refund the processor refuses is recorded as `Failed` (201 either
/// way).
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/invoice/{invoiceKey}/refund",
    tag = "invoices",
    params(("invoiceKey" = String, Path, description = "Key of the invoice (in_…)")),
    request_body(content = Option<InvoiceRefundRequest>, description = "Optional: without it, everything left is refunded"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Refund recorded", body = RefundRecord),
        (status = 400, description = "An amount that is not positive or more than is left to refund", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such invoice for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The invoice is not Paid, is fully refunded, or was paid by credit alone", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn refund_invoice(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(invoice_key): Path<String>,
    OptionalJsonBody(body): OptionalJsonBody<InvoiceRefundRequest>,
) -> Result<(StatusCode, Json<RefundRecord>), ApiError> {
    let ask = InvoiceRefund {
        amount: body.amount,
        reason: body.reason,
    };
    let recorded = invoices::refund(&state, auth.merchant_id, &invoice_key, ask).await?;
    Ok((
        StatusCode::CREATED,
        Json(RefundRecord::of(
            &recorded.refund,
            &invoice_key,
            recorded.credit_note.as_ref(),
        )?),
    ))
}
