//! A merchant's tax rates (DESIGN §14): `POST /tax-rates`, `GET /tax-rates`,
//! `GET|PATCH /tax-rates/{taxRateId}`, and the check of a membership's `taxRateIds`.
//!
//! A rate's `percentage`, `inclusive` and `country` change only while no membership or invoice
//! carries it (409 after): a membership's invoices follow the rate it was sold with. `name` and
//! `active` change at any time; an archived rate (`active: false`) stays listed and on the
//! memberships that have it, but is given to no new one.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::tax::{
    parse_percentage, rate_id_path, rate_set, requested_rate_ids, FoundRate, TaxRate, TAX_RATE_IDS,
};
use recur_domain::time::format_utc;
use recur_domain::validation::{self as rules, FieldErrors};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::{optional_text, required_text, Field};
use crate::http::pagination::{ListQuery, ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::tax_rates::{self, StoredRate};

/// Longest rate `name`.
const MAX_NAME_CHARS: usize = 100;

/// Body of a rate's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaxRateRequest {
    /// What invoices call it, 1–100 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100, example = "VAT")]
    pub name: Field<String>,
    /// A decimal string from 0 to 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "19.0")]
    pub percentage: Field<String>,
    /// Contained in the price (`true`) or added to it (`false`).
    #[serde(default)]
    #[schema(required = true, value_type = bool)]
    pub inclusive: Field<bool>,
    /// ISO 3166-1 alpha-2 country; a rate of an EU member state is skipped under reverse charge.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "DE")]
    pub country: Field<String>,
}

/// Body of a rate's change; omitted fields stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaxRateRequest {
    /// New name.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100)]
    pub name: Field<String>,
    /// `false` archives the rate, `true` restores it.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub active: Field<bool>,
    /// New percentage: only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub percentage: Field<String>,
    /// New inclusiveness: only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub inclusive: Field<bool>,
    /// New country (`null` removes it): only while the rate is unused (409 after).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub country: Field<String>,
}

/// A tax rate.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaxRateRecord {
    /// `txr_` + 24 base62 characters.
    pub tax_rate_id: String,
    /// What invoices call it.
    pub name: String,
    /// Decimal string, 0–100.
    pub percentage: String,
    /// Contained in the price.
    pub inclusive: bool,
    /// ISO alpha-2 country, if any.
    pub country: Option<String>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC).
    pub created_at: String,
}

impl From<StoredRate> for TaxRateRecord {
    fn from(stored: StoredRate) -> Self {
        TaxRateRecord {
            tax_rate_id: stored.rate.tax_rate_id,
            name: stored.rate.name,
            percentage: stored.rate.percentage.to_string(),
            inclusive: stored.rate.inclusive,
            country: stored.rate.country,
            active: stored.active,
            created_at: format_utc(stored.created_at),
        }
    }
}

fn name_rule(v: &str) -> Result<String, String> {
    rules::bounded_text(v, MAX_NAME_CHARS)
}

fn percentage_rule(v: &str) -> Result<String, String> {
    parse_percentage(v)
        .map(|p| p.to_string())
        .map_err(str::to_string)
}

/// Creates a rate, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/tax-rates",
    tag = "taxes",
    request_body = CreateTaxRateRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Rate created", body = TaxRateRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateTaxRateRequest>,
) -> Result<(StatusCode, Json<TaxRateRecord>), ApiError> {
    let mut errors = FieldErrors::new();
    let name = required_text(body.name, "name", &mut errors, name_rule);
    let percentage = required_text(body.percentage, "percentage", &mut errors, percentage_rule);
    let inclusive = body.inclusive.required("inclusive", &mut errors);
    let country = optional_text(body.country, "country", &mut errors, rules::country_code);
    let (Some(name), Some(percentage), Some(inclusive)) = (name, percentage, inclusive) else {
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let rate = TaxRate {
        tax_rate_id: ids::tax_rate_key(),
        name,
        percentage: parse_percentage(&percentage).map_err(anyhow::Error::msg)?,
        inclusive,
        country,
    };
    let stored = tax_rates::insert(
        state.store.pool(),
        auth.merchant_id,
        &rate,
        state.clock.now(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(stored.into())))
}

/// Lists the merchant's rates, archived ones too, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/tax-rates",
    tag = "taxes",
    params(PageParams),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of rates, newest first", body = Page<TaxRateRecord>),
        (status = 400, description = "A limit outside 1–100 or a cursor recur did not give for this list", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_tax_rates(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
) -> Result<Json<Page<TaxRateRecord>>, ApiError> {
    let scope = ListScope::new("tax-rates", auth.merchant_id, &[]);
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows = tax_rates::page(state.store.pool(), auth.merchant_id, ask.window()).await?;
    let (rows, next) = ask.cut(rows, |r| r.id);
    Ok(Json(Page::new(
        rows.into_iter().map(TaxRateRecord::from).collect(),
        next,
    )))
}

/// One rate.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/tax-rates/{taxRateId}",
    tag = "taxes",
    params(("taxRateId" = String, Path, description = "The rate's id (txr_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The rate", body = TaxRateRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rate for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<TaxRateRecord>, ApiError> {
    let stored = tax_rates::get(state.store.pool(), auth.merchant_id, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(stored.into()))
}

/// Changes a rate: `name` and `active` at any time; `percentage`, `inclusive` and `country`
/// only while no membership or invoice carries it.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/tax-rates/{taxRateId}",
    tag = "taxes",
    params(("taxRateId" = String, Path, description = "The rate's id (txr_…)")),
    request_body = UpdateTaxRateRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The rate as changed", body = TaxRateRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rate for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rate is used: its percentage, inclusiveness and country are fixed", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_tax_rate(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdateTaxRateRequest>,
) -> Result<Json<TaxRateRecord>, ApiError> {
    let mut errors = FieldErrors::new();
    let name = optional_text(body.name, "name", &mut errors, name_rule);
    let active = body.active.optional("active", &mut errors);
    let percentage = optional_text(body.percentage, "percentage", &mut errors, percentage_rule);
    let inclusive = body.inclusive.optional("inclusive", &mut errors);
    let country = match body.country {
        Field::Absent => None,
        Field::Null => Some(None),
        field => optional_text(field, "country", &mut errors, rules::country_code).map(Some),
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let mut tx = state.store.begin().await?;
    let mut stored = tax_rates::by_key(&mut tx, state.store.backend(), auth.merchant_id, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
    let before = stored.rate.clone();
    if let Some(p) = percentage {
        stored.rate.percentage = parse_percentage(&p).map_err(anyhow::Error::msg)?;
    }
    if let Some(inclusive) = inclusive {
        stored.rate.inclusive = inclusive;
    }
    if let Some(country) = country {
        stored.rate.country = country;
    }
    let terms_changed = stored.rate != before;
    if terms_changed && stored.used {
        return Err(ApiError::Conflict(
            "The rate is used by a membership or an invoice: only its name and active can \
             change. Create a new rate instead."
                .into(),
        ));
    }
    if let Some(name) = name {
        stored.rate.name = name;
    }
    if let Some(active) = active {
        stored.active = active;
    }
    tax_rates::save(&mut tx, auth.merchant_id, &stored).await?;
    tx.commit().await?;
    Ok(Json(stored.into()))
}

/// A membership's `taxRateIds`, checked against the merchant's rates (one statement) by the
/// domain's rules ([`requested_rate_ids`], then [`rate_set`]): each an active rate of this
/// merchant, none twice, at most
/// [`MAX_RATES_PER_MEMBERSHIP`](recur_domain::tax::MAX_RATES_PER_MEMBERSHIP), all inclusive or
/// all exclusive.
/// The rates in the order given; `None` (with the errors added) when one fails or the field is
/// absent.
pub async fn resolve(
    state: &AppState,
    merchant_id: i64,
    field: Field<Vec<Field<String>>>,
    errors: &mut FieldErrors,
) -> Result<Option<Vec<TaxRate>>, ApiError> {
    let Some(items) = field.optional(TAX_RATE_IDS, errors) else {
        return Ok(None);
    };
    let read = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| item.required(&rate_id_path(i), errors));
    let keys = match requested_rate_ids(read) {
        Ok(keys) => keys,
        Err(refused) => {
            errors.append(refused);
            return Ok(None);
        }
    };
    // Only a request that is otherwise valid fixes the rates' terms.
    let stored = if errors.is_empty() {
        tax_rates::claim(state.store.writer(), merchant_id, &keys).await?
    } else {
        tax_rates::by_keys(state.store.pool(), merchant_id, &keys).await?
    };
    let found: Vec<FoundRate> = stored
        .iter()
        .map(|s| FoundRate {
            rate: &s.rate,
            active: s.active,
        })
        .collect();
    match rate_set(&keys, &found) {
        Ok(rates) => Ok(Some(rates)),
        Err(refused) => {
            errors.append(refused);
            Ok(None)
        }
    }
}
