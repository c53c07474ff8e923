//! Customer operations: create (idempotent by e-mail), get, update phone, over
//! [`crate::services::customers`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CountryCode, PersonName};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::customers::{self, NewCustomer, PhoneChange};
use crate::state::AppState;
use crate::store::customers::{Created, Customer};

/// Body of `POST /customer`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCustomerRequest {
    /// The merchant's processor key: a canonical GUID.
    #[serde(default)]
    #[schema(required = true, value_type = String, format = "uuid")]
    pub processor_key: Field<String>,
    /// First name.
    #[serde(default)]
    #[schema(required = true, value_type = PersonName)]
    pub first_name: Field<String>,
    /// Last name, same rule as `firstName`.
    #[serde(default)]
    #[schema(required = true, value_type = PersonName)]
    pub last_name: Field<String>,
    /// `name@domain.tld`; unique per merchant, compared case-insensitively.
    #[serde(default)]
    #[schema(required = true, value_type = String, format = Email)]
    pub email: Field<String>,
    /// E.164: `+`, a digit 1-9, then digits; 8 to 15 digits in total.
    #[serde(default)]
    #[schema(required = true, pattern = r"^\+[1-9][0-9]{7,14}$", value_type = String, example = "+4915112345678")]
    pub phone: Field<String>,
    /// Country of the customer.
    #[serde(default)]
    #[schema(required = true, value_type = CountryCode)]
    pub country_code: Field<String>,
    /// Optional, not validated.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub address1: Field<String>,
    /// Optional, not validated.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub address2: Field<String>,
    /// Optional, not validated.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub city: Field<String>,
    /// Optional, not validated.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub state: Field<String>,
    /// Optional, not validated.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub zip_code: Field<String>,
    /// Optional list of `{type, value}`.
    #[serde(default)]
    #[schema(value_type = Option<Vec<TaxIdRecord>>)]
    pub tax_ids: Field<Vec<serde_json::Value>>,
}

/// Body of `PUT /customer/phone`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePhoneRequest {
    /// Key of the customer (`cstmr_…`).
    #[serde(default)]
    #[schema(required = true, pattern = "^cstmr_", value_type = String)]
    pub customer_key: Field<String>,
    /// New E.164 phone.
    #[serde(default)]
    #[schema(required = true, pattern = r"^\+[1-9][0-9]{7,14}$", value_type = String)]
    pub phone: Field<String>,
}

/// A tax id.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TaxIdRecord {
    /// Kind of id.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id.
    pub value: String,
}

/// A customer as returned by every customer operation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerRecord {
    /// `cstmr_` + 24 base62 characters.
    pub customer_key: String,
    /// The merchant's processor key.
    pub processor_key: String,
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// E-mail as first given.
    pub email: String,
    /// E.164 phone.
    pub phone: String,
    /// ISO 3166-1 alpha-2, uppercase.
    pub country_code: String,
    /// Address line 1.
    pub address1: Option<String>,
    /// Address line 2.
    pub address2: Option<String>,
    /// City.
    pub city: Option<String>,
    /// State or region.
    pub state: Option<String>,
    /// Postal code.
    pub zip_code: Option<String>,
    /// Tax ids.
    pub tax_ids: Vec<TaxIdRecord>,
    /// Creation time, UTC.
    pub created_at: String,
    /// Last change, UTC.
    pub updated_at: String,
}

impl From<Customer> for CustomerRecord {
    fn from(customer: Customer) -> Self {
        let f = customer.fields;
        Self {
            customer_key: customer.customer_key,
            processor_key: f.processor_key,
            first_name: f.first_name,
            last_name: f.last_name,
            email: f.email,
            phone: f.phone,
            country_code: f.country_code,
            address1: f.address1,
            address2: f.address2,
            city: f.city,
            state: f.state,
            zip_code: f.zip_code,
            tax_ids: f
                .tax_ids
                .into_iter()
                .map(|t| TaxIdRecord {
                    kind: t.kind,
                    value: t.value,
                })
                .collect(),
            created_at: format_utc(customer.created_at),
            updated_at: format_utc(customer.updated_at),
        }
    }
}

/// Creates a customer, or returns the existing one with the same e-mail (compared
/// case-insensitively): 201 when new, 200 when it existed.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/customer",
    tag = "customers",
    request_body = CreateCustomerRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Customer created", body = CustomerRecord),
        (status = 200, description = "A customer with this e-mail already existed", body = CustomerRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_customer(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateCustomerRequest>,
) -> Result<(StatusCode, Json<CustomerRecord>), ApiError> {
    let new = NewCustomer {
        processor_key: body.processor_key,
        first_name: body.first_name,
        last_name: body.last_name,
        email: body.email,
        phone: body.phone,
        country_code: body.country_code,
        address1: body.address1,
        address2: body.address2,
        city: body.city,
        state: body.state,
        zip_code: body.zip_code,
        tax_ids: body.tax_ids,
    };
    let (customer, created) = customers::create(&state, auth.merchant_id, new).await?;
    let status = match created {
        Created::New => StatusCode::CREATED,
        Created::Existing => StatusCode::OK,
    };
    Ok((status, Json(customer.into())))
}

/// Reads a customer of the calling merchant.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/customer/{customerKey}",
    tag = "customers",
    params(("customerKey" = String, Path, description = "Key of the customer (cstmr_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The customer", body = CustomerRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such customer for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_customer(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(customer_key): Path<String>,
) -> Result<Json<CustomerRecord>, ApiError> {
    let customer = customers::customer(&state, auth.merchant_id, &customer_key).await?;
    Ok(Json(customer.into()))
}

/// Replaces a customer's phone number.
#[utoipa::path(
    put,
    path = "/api/subscriptions/v1/customer/phone",
    tag = "customers",
    request_body = UpdatePhoneRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The updated customer", body = CustomerRecord),
        (status = 400, description = "Validation failed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such customer for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_phone(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<UpdatePhoneRequest>,
) -> Result<Json<CustomerRecord>, ApiError> {
    let change = PhoneChange {
        customer_key: body.customer_key,
        phone: body.phone,
    };
    let customer = customers::update_phone(&state, auth.merchant_id, change).await?;
    Ok(Json(customer.into()))
}
