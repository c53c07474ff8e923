//! A merchant's products (DESIGN §15): `POST /products`, `GET /products`,
//! `GET|PATCH /products/{productId}`. A product names what its prices sell; an archived product
//! (`active: false`) stays listed and keeps its prices, but takes no new price.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::settings::single_line;
use recur_domain::time::format_utc;
use recur_domain::validation::{self as rules, FieldErrors};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::{optional_flag, optional_text, required_text, Field};
use crate::http::pagination::{flag, Given, ListQuery, ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::products::{self, Changes, Product};

/// Longest product `name`.
pub const MAX_NAME_CHARS: usize = 250;
/// Longest product `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

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

/// Filters of `GET /products`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProductFilters {
    /// Only active products (`true`) or only archived ones (`false`).
    #[serde(default)]
    #[param(value_type = Option<bool>)]
    active: Field<Given>,
}

fn name_rule(v: &str) -> Result<String, String> {
    single_line(v, MAX_NAME_CHARS)
}

/// `description`: not blank, at most [`MAX_DESCRIPTION_CHARS`] characters; lines break at `\n`
/// or `\r\n` (kept as `\n`), no other control characters.
fn description_rule(v: &str) -> Result<String, String> {
    let text = rules::bounded_text(&v.replace("\r\n", "\n"), MAX_DESCRIPTION_CHARS)?;
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err("must hold no control characters but line breaks".into());
    }
    Ok(text)
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
    let product = create(&state, auth.merchant_id, body).await?;
    Ok((StatusCode::CREATED, Json(product.into())))
}

/// Creates the product `body` describes for the merchant, active, or lists every failing field:
/// `POST /products` and the dashboard's catalog page.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    body: CreateProductRequest,
) -> Result<Product, ApiError> {
    let mut errors = FieldErrors::new();
    let name = required_text(body.name, "name", &mut errors, name_rule);
    let description = optional_text(
        body.description,
        "description",
        &mut errors,
        description_rule,
    );
    let Some(name) = name.filter(|_| errors.is_empty()) else {
        return Err(ApiError::Validation(errors));
    };
    let now = state.merchant_now(merchant_id).await?;
    let product = products::insert(
        state.store.writer(),
        merchant_id,
        &ids::product_key(),
        &name,
        description.as_deref(),
        now,
    )
    .await?;
    Ok(product)
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
    let (rows, next) = product_page(&state, auth.merchant_id, page, filters).await?;
    Ok(Json(Page::new(
        rows.into_iter().map(ProductRecord::from).collect(),
        next,
    )))
}

/// The page of the merchant's products that `page` and `filters` ask for, and the cursor of the
/// next: `GET /products` and the dashboard's catalog page.
pub async fn product_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: ProductFilters,
) -> Result<(Vec<Product>, Option<String>), ApiError> {
    let mut errors = FieldErrors::new();
    let active = flag(filters.active, "active", &mut errors);
    let active_name = active.map(|a| if a { "true" } else { "false" });
    let scope = ListScope::new("products", merchant_id, &[("active", active_name)]);
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = products::page(state.store.pool(), merchant_id, active, ask.window()).await?;
    Ok(ask.cut(rows, |p| p.id))
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
    let product = products::get(state.store.pool(), auth.merchant_id, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
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
    let product = update(&state, auth.merchant_id, &key, body).await?;
    Ok(Json(product.into()))
}

/// Applies the change `body` to the merchant's product `key`: the product as changed, every
/// failing field, or not found. `PATCH /products/{productId}` and the dashboard's archive and
/// restore.
pub async fn update(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    body: UpdateProductRequest,
) -> Result<Product, ApiError> {
    let mut errors = FieldErrors::new();
    let mut changes = Changes::default();
    if !matches!(body.name, Field::Absent) {
        changes.name = required_text(body.name, "name", &mut errors, name_rule);
    }
    match body.description {
        Field::Absent => {}
        Field::Null => changes.description = Some(None),
        description => {
            changes.description =
                optional_text(description, "description", &mut errors, description_rule).map(Some);
        }
    }
    changes.active = optional_flag(body.active, "active", &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let now = state.merchant_now(merchant_id).await?;
    products::update(state.store.writer(), merchant_id, key, &changes, now)
        .await?
        .ok_or(ApiError::NotFound)
}
