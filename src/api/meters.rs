//! A merchant's meters (DESIGN §19): `POST /meters`, `GET /meters`, `GET|PATCH /meters/{meterId}`,
//! over [`crate::services::meters`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::services::meters::{self, MeterChange, MeterFilters, NewMeter};
use crate::state::AppState;
use crate::store::meters::Meter;

/// How a meter adds up a period's events.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AggregationName {
    /// The number of events.
    Count,
    /// The sum of the property.
    Sum,
    /// The largest value of the property.
    Max,
    /// The number of distinct values of the property.
    UniqueCount,
    /// The property of the latest event.
    Latest,
}

/// Body of a meter's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateMeterRequest {
    /// What usage events name it by: 1–64 of `A-Z a-z 0-9 _ . : -`, starting with a letter or
    /// digit; unique per merchant (409 otherwise).
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 64, pattern = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$", example = "api_calls")]
    pub code: Field<String>,
    /// What invoices call it: 1–250 characters on one line.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 250, example = "API calls")]
    pub name: Field<String>,
    /// How a period's events add up.
    #[serde(default)]
    #[schema(required = true, value_type = AggregationName)]
    pub aggregation: Field<String>,
    /// The event property it reads (numeric, any for `unique_count`); required for every
    /// aggregation but `count`, for which it must be absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100)]
    pub property: Field<String>,
}

/// Body of a meter's change; its code, aggregation and property never change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateMeterRequest {
    /// A new name.
    #[serde(default)]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 250)]
    pub name: Field<String>,
    /// `false` archives the meter (it takes no events and no new prices), `true` restores it.
    #[serde(default)]
    #[schema(value_type = bool, required = false)]
    pub active: Field<bool>,
    #[serde(default)]
    #[schema(ignore)]
    code: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    aggregation: Field<serde_json::Value>,
    #[serde(default)]
    #[schema(ignore)]
    property: Field<serde_json::Value>,
}

/// A meter.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeterRecord {
    /// `mtr_` + 24 base62 characters.
    pub meter_id: String,
    /// What usage events name it by.
    pub code: String,
    /// What invoices call it.
    pub name: String,
    /// How a period's events add up.
    #[schema(value_type = AggregationName)]
    pub aggregation: String,
    /// The event property it reads; null for `count`.
    pub property: Option<String>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC, the merchant's time).
    pub created_at: String,
}

impl From<Meter> for MeterRecord {
    fn from(meter: Meter) -> Self {
        MeterRecord {
            meter_id: meter.meter_key,
            code: meter.code,
            name: meter.name,
            aggregation: meter.aggregation.as_str().to_string(),
            property: meter.property,
            active: meter.active,
            created_at: format_utc(meter.created_at),
        }
    }
}

/// Creates a meter, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/meters",
    tag = "usage",
    request_body = CreateMeterRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Meter created", body = MeterRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The merchant has a meter with this code (errors.code)", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_meter(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateMeterRequest>,
) -> Result<(StatusCode, Json<MeterRecord>), ApiError> {
    let new = NewMeter {
        code: body.code,
        name: body.name,
        aggregation: body.aggregation,
        property: body.property,
    };
    let meter = meters::create_meter(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(meter.into())))
}

/// Lists the merchant's meters, archived ones too unless `active` says otherwise, newest first,
/// a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/meters",
    tag = "usage",
    params(PageParams, MeterFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of meters, newest first", body = Page<MeterRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_meters(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<MeterFilters>,
) -> Result<Json<Page<MeterRecord>>, ApiError> {
    let (rows, next) = meters::meter_page(&state, auth.merchant_id, page, filters).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(MeterRecord::from).collect(),
        next,
    )))
}

/// One meter.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/meters/{meterId}",
    tag = "usage",
    params(("meterId" = String, Path, description = "The meter's id (mtr_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The meter", body = MeterRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such meter for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_meter(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<MeterRecord>, ApiError> {
    let meter = meters::meter(&state, auth.merchant_id, &key).await?;
    Ok(Json(meter.into()))
}

/// Renames, archives or restores a meter; its code, aggregation and property never change.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/meters/{meterId}",
    tag = "usage",
    params(("meterId" = String, Path, description = "The meter's id (mtr_…)")),
    request_body = UpdateMeterRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The meter as changed", body = MeterRecord),
        (status = 400, description = "Validation failed: a name or active that is not valid, or the body names code, aggregation or property, which cannot change", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such meter for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_meter(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdateMeterRequest>,
) -> Result<Json<MeterRecord>, ApiError> {
    let change = MeterChange {
        name: body.name,
        active: body.active,
        terms: vec![
            ("code", body.code.is_given()),
            ("aggregation", body.aggregation.is_given()),
            ("property", body.property.is_given()),
        ],
    };
    let meter = meters::update_meter(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(meter.into()))
}
