//! SEPA Direct Debit collection files and returns (DESIGN §18): `POST|GET /sepa/batches`,
//! `GET /sepa/batches/{batchId}[/pain.008]` and `POST /sepa/returns`. The operations are [`crate::services::sepa`].

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::sepa::batches::{self, NewBatch};
use crate::services::sepa::returns::{self as return_files};
use crate::state::AppState;
use crate::store::sepa_batches::Batch;
use axum::body::Bytes;
use recur_domain::sepa::returns::FileKind;
use recur_domain::time::format_utc;
use rust_decimal::Decimal;

/// Body of a collection file's making.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateBatchRequest {
    /// The merchant's SEPA processor whose debits it collects.
    #[serde(default)]
    #[schema(required = true, value_type = i64, example = 301)]
    pub payment_processor_id: Field<i64>,
    /// `YYYY-MM-DD`: a TARGET2 business day, today or later on the merchant's clock; every
    /// `Pending` debit due by it is taken. The next business day from today when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date, example = "2026-12-01")]
    pub collection_date: Field<String>,
}

/// A collection file.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchRecord {
    /// `sb_` + 24 base62 characters.
    pub batch_id: String,
    /// The SEPA processor it collects for.
    pub payment_processor_id: i64,
    /// `ReqdColltnDt`: when the debits are collected (and count as paid).
    #[schema(format = Date, example = "2026-12-01")]
    pub collection_date: String,
    /// How many debits it holds.
    pub count: i64,
    /// Their sum, in major units (`"59.90"`).
    #[schema(example = "59.90")]
    pub total: String,
    /// `EUR`.
    #[schema(example = "EUR")]
    pub currency: String,
    /// The file's `MsgId`.
    pub message_id: String,
    /// When it was made (UTC).
    pub created_at: String,
}

impl From<Batch> for BatchRecord {
    fn from(batch: Batch) -> Self {
        Self {
            batch_id: batch.batch_key,
            payment_processor_id: batch.processor_id,
            collection_date: batch.collection_date.format("%Y-%m-%d").to_string(),
            count: batch.count,
            total: Decimal::new(batch.total, 2).to_string(),
            currency: "EUR".into(),
            message_id: batch.message_id,
            created_at: format_utc(batch.created_at),
        }
    }
}

/// Makes a collection file of every `Pending` debit of a SEPA processor due by the collection
/// date. Each debit lands in one file only; it counts as paid on the file's collection date.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/sepa/batches",
    tag = "sepa",
    request_body = CreateBatchRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Made", body = BatchRecord),
        (status = 400, description = "Validation failed: not a SEPA processor of the merchant; a collection date that is no date, in the past or not a TARGET2 business day", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot make collection files", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "No debit is due by the collection date; nothing was made", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_batch(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateBatchRequest>,
) -> Result<(StatusCode, Json<BatchRecord>), ApiError> {
    let new = NewBatch {
        payment_processor_id: body.payment_processor_id,
        collection_date: body.collection_date,
    };
    let batch = batches::create(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(batch.into())))
}

/// Lists the merchant's collection files, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/sepa/batches",
    tag = "sepa",
    params(PageParams),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of collection files, newest first", body = Page<BatchRecord>),
        (status = 400, description = "A limit outside 1–100 or a cursor recur did not give for this list", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_batches(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
) -> Result<Json<Page<BatchRecord>>, ApiError> {
    let (rows, next) = batches::page(&state, auth.merchant_id, page).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(BatchRecord::from).collect(),
        next,
    )))
}

/// One collection file.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/sepa/batches/{batchId}",
    tag = "sepa",
    params(("batchId" = String, Path, description = "The batch's id (sb_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The collection file", body = BatchRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such batch for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_batch(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(batch_id): Path<String>,
) -> Result<Json<BatchRecord>, ApiError> {
    let batch = batches::get(&state, auth.merchant_id, &batch_id).await?;
    Ok(Json(batch.into()))
}

/// The collection file's ISO 20022 `pain.008.001.08` document, as made: what the merchant
/// uploads to its bank.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/sepa/batches/{batchId}/pain.008",
    tag = "sepa",
    params(("batchId" = String, Path, description = "The batch's id (sb_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The pain.008.001.08 document", body = String, content_type = "application/xml"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such batch for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn batch_document(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(batch_id): Path<String>,
) -> Result<Response, ApiError> {
    let document = batches::document(&state, auth.merchant_id, &batch_id).await?;
    let disposition = format!("attachment; filename=\"{batch_id}.pain.008.xml\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/xml".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        document,
    )
        .into_response())
}

/// What a return file changed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReturnsRecord {
    /// `pain.002` or `camt.054`.
    #[schema(example = "camt.054")]
    pub file: String,
    /// Debits this file reversed.
    pub matched: usize,
    /// Debits it names whose return was applied before (the same file again changes nothing).
    pub already_applied: usize,
    /// `EndToEndId`s that name no debit of the merchant.
    pub unknown: Vec<String>,
}

/// Applies a bank's return file: a `pain.002` status report (rejected transactions) or a
/// `camt.054` debit notification (returned entries), as the XML body. Each debit it names is
/// reversed once: its invoice Open again, `TRANSACTION_DATA_UPDATE` Rejected with the ISO
/// reason code, the membership PastDue with dunning; `AC01`, `AC04`, `AC06`, `MD01` and `MD07`
/// also revoke the mandate. A file that cannot be read changes nothing.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/sepa/returns",
    tag = "sepa",
    request_body(content = String, content_type = "application/xml", description = "The pain.002 or camt.054 document"),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Applied", body = ReturnsRecord),
        (status = 400, description = "Not a readable pain.002 or camt.054 document (malformed, a DTD, another message, a return without its end-to-end id, a whole file rejected without its transactions); nothing was applied", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot apply return files", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn apply_returns(
    State(state): State<AppState>,
    auth: AuthMerchant,
    body: Bytes,
) -> Result<Json<ReturnsRecord>, ApiError> {
    let applied = return_files::apply(&state, auth.merchant_id, &body).await?;
    Ok(Json(ReturnsRecord {
        file: match applied.kind {
            FileKind::StatusReport => "pain.002",
            FileKind::DebitNotification => "camt.054",
        }
        .into(),
        matched: applied.matched,
        already_applied: applied.already_applied,
        unknown: applied.unknown,
    }))
}
