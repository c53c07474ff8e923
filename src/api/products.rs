//! A merchant's products (DESIGN §15): `POST /products`, `GET /products`,
//! `GET|PATCH /products/{productId}`, over [`crate::services::catalog`].

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
use crate::services::catalog::{self, NewProduct, ProductChange, ProductFilters};
use crate::state::AppState;
use crate::store::products::Product;

/// Body of a product's creation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProductRequest {
    /// What customers see it called: 1–250 characters on one line, not blank.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 250, example = "Gold plan")]
    pub name: Field<String>,
    /// The merchant's description: 1–1000 characters, line breaks allowed.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 1000)]
    pub description: Field<String>,
}

/// Body of a product's change; omitted fields stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProductRequest {
    /// A new name.
    #[serde(default)]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 250)]
    pub name: Field<String>,
    /// A new description; `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 1000)]
    pub description: Field<String>,
    /// `false` archives the product (it takes no new price), `true` restores it.
    #[serde(default)]
    #[schema(value_type = bool, required = false)]
    pub active: Field<bool>,
}

/// A product.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductRecord {
    /// `prod_` + 24 base62 characters.
    pub product_id: String,
    /// What customers see it called.
    pub name: String,
    /// The merchant's description, if any.
    pub description: Option<String>,
    /// `false` once archived.
    pub active: bool,
    /// When it was created (UTC, the merchant's time).
    pub created_at: String,
    /// When a change last altered it (UTC).
    pub updated_at: String,
}

impl From<Product> for ProductRecord {
    fn from(product: Product) -> Self {
        ProductRecord {
            product_id: product.product_key,
            name: product.name,
            description: product.description,
            active: product.active,
            created_at: format_utc(product.created_at),
            updated_at: format_utc(product.updated_at),
        }
    }
}

/// Creates a product, active.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/products",
    tag = "catalog",
    request_body = CreateProductRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Product created", body = ProductRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_product(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateProductRequest>,
) -> Result<(StatusCode, Json<ProductRecord>), ApiError> {
    let new = NewProduct {
        name: body.name,
        description: body.description,
    };
    let product = catalog::create_product(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(product.into())))
}

/// Lists the merchant's products, archived ones too unless `active` says otherwise, newest
/// first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/products",
    tag = "catalog",
    params(PageParams, ProductFilters),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of products, newest first", body = Page<ProductRecord>),
        (status = 400, description = "A parameter that is not valid (errors name it): a limit outside 1–100, a cursor recur did not give for this list and these filters, an active other than true or false, a parameter given twice", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_products(
    State(state): State<AppState>,
    auth: AuthMerchant,
    ListQuery(page): ListQuery<PageParams>,
    ListQuery(filters): ListQuery<ProductFilters>,
) -> Result<Json<Page<ProductRecord>>, ApiError> {
    let (rows, next) = catalog::product_page(&state, auth.merchant_id, page, filters).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(ProductRecord::from).collect(),
        next,
    )))
}

/// One product.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/products/{productId}",
    tag = "catalog",
    params(("productId" = String, Path, description = "The product's id (prod_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The product", body = ProductRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such product for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_product(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
) -> Result<Json<ProductRecord>, ApiError> {
    let product = catalog::product(&state, auth.merchant_id, &key).await?;
    Ok(Json(product.into()))
}

/// Changes a product's name, description or `active`.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/products/{productId}",
    tag = "catalog",
    params(("productId" = String, Path, description = "The product's id (prod_…)")),
    request_body = UpdateProductRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The product as changed", body = ProductRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such product for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_product(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(key): Path<String>,
    JsonBody(body): JsonBody<UpdateProductRequest>,
) -> Result<Json<ProductRecord>, ApiError> {
    let change = ProductChange {
        name: body.name,
        description: body.description,
        active: body.active,
    };
    let product = catalog::update_product(&state, auth.merchant_id, &key, change).await?;
    Ok(Json(product.into()))
}
