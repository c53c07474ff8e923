//! The catalog (DESIGN §15): the merchant's products, newest first, a page at a time (the
//! cursors and `active` filter of `GET /products`), each with its newest prices, and the form
//! that creates a product; a product's page with all its prices (those of
//! `GET /prices?productId=`) and the form that adds a price; archiving and restoring products and
//! prices. Everything goes through the catalog service ([`catalog`]): the same rules as the API,
//! their refusals shown beside the fields (400). A price's terms never change, so nothing is edited:
//! archive a price and add another. Another merchant's product or price is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::{context, Value};
use recur_domain::calendar::IntervalType;
use recur_domain::money::{display_amount, Currency};
use serde::Deserialize;

use super::confirm::{self, Outcome};
use super::fields::{self, beside, ActiveForm};
use super::lists::StatusFilter;
use super::staff::Staff;
use super::{framed, link, or_bad_request, staff, without_empty};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::format::{display_time, interval_phrase};
use crate::pages::render::with_status;
use crate::pages::{notice, session};
use crate::services::catalog::{
    self, NewPrice, NewProduct, PriceFilters, ProductChange, ProductFilters,
};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::prices::{self as stored_prices, CatalogPrice};
use crate::store::products::Product;

/// The catalog's address.
pub const PAGE: &str = "/dashboard/catalog";

/// How many of a product's newest prices the catalog shows under it; its page shows them all.
const PRICES_SHOWN: usize = 5;

/// The address of product `key`'s page.
fn product_url(key: &str) -> String {
    format!("{PAGE}/products/{key}")
}

/// The product form as posted.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
}

/// The price form as posted.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    currency: String,
    #[serde(default)]
    unit_amount: String,
    #[serde(default)]
    interval_type: String,
    #[serde(default)]
    interval_count: String,
    #[serde(default)]
    trial_days: String,
}

impl Default for PriceForm {
    /// An empty form: a monthly price.
    fn default() -> Self {
        Self {
            csrf_token: String::new(),
            currency: String::new(),
            unit_amount: String::new(),
            interval_type: IntervalType::Monthly.as_str().to_string(),
            interval_count: "1".to_string(),
            trial_days: String::new(),
        }
    }
}

/// An amount in the currency `code`, as the page's language writes it.
fn money(minor: i64, code: &str, lang: &str) -> String {
    Currency::parse(code).map_or_else(|_| minor.to_string(), |c| display_amount(minor, c, lang))
}

/// A price as a row of a table.
fn price_row(t: &BTreeMap<String, String>, lang: &str, price: &CatalogPrice) -> Value {
    let cycle = price.cycle;
    context! {
        id => price.price_key,
        amount => money(price.unit_amount, &price.currency, lang),
        currency => price.currency,
        interval => interval_phrase(t, cycle.interval_type, cycle.interval_count),
        trial_days => price.trial_days,
        active => price.active,
        created => display_time(price.created_at, lang),
    }
}

/// A product as the pages show it.
fn product_view(lang: &str, product: &Product) -> Value {
    context! {
        id => product.product_key,
        name => product.name,
        description => product.description,
        active => product.active,
        created => display_time(product.created_at, lang),
        url => product_url(&product.product_key),
    }
}

/// The catalog read with `query` (filter and cursor), with the product form showing `form` and
/// `errors` beside its fields.
async fn catalog_page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    query: &str,
    form: &ProductForm,
    errors: BTreeMap<String, String>,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    let ListQuery(page) = ListQuery::<PageParams>::parse(query)?;
    let ListQuery(filters) = ListQuery::<ProductFilters>::parse(query)?;
    let found = catalog::product_page(state, staff.merchant.id, page, filters).await;
    let (rows, next) = match or_bad_request(state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let ids: Vec<i64> = rows.iter().map(|p| p.id).collect();
    let each = i64::try_from(PRICES_SHOWN + 1).unwrap_or(i64::MAX);
    let prices =
        stored_prices::newest_of_products(state.store.pool(), staff.merchant.id, &ids, each)
            .await?;
    let products: Vec<Value> = rows
        .iter()
        .map(|product| {
            let mut own: Vec<&CatalogPrice> = prices
                .iter()
                .filter(|price| price.product_id == product.id)
                .collect();
            let more = own.len() > PRICES_SHOWN;
            own.truncate(PRICES_SHOWN);
            let own: Vec<Value> = own.into_iter().map(|p| price_row(t, lang, p)).collect();
            context! { prices => own, more_prices => more, ..product_view(lang, product) }
        })
        .collect();
    let filter = StatusFilter {
        path: PAGE,
        template: "dashboard/catalog.html",
        nav: "catalog",
        param: "active",
        names: &["true", "false"],
        label_prefix: "dash_catalog_active_",
    };
    let rows = context! {
        products => products,
        name => form.name,
        description => form.description,
        errors => errors,
    };
    filter.render(state, staff, t, query, rows, next)
}

/// `GET /dashboard/catalog?active=&cursor=`: the products, newest first, with their newest
/// prices.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let query = without_empty(query.as_deref());
    let form = ProductForm::default();
    catalog_page(&state, &staff, t, &query, &form, BTreeMap::new()).await
}

/// `POST /dashboard/catalog/products` (`name`, `description`): creates the product and leads to
/// its page, where its prices are added; the catalog again with each field's error (400).
pub async fn create_product(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<ProductForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let new = NewProduct {
        name: fields::text(&form.name),
        description: fields::text(&form.description),
    };
    match catalog::create_product(&state, staff.merchant.id, new).await {
        Ok(product) => Ok(Redirect::to(&product_url(&product.product_key)).into_response()),
        Err(ServiceError::Validation(errors)) => {
            let page = catalog_page(&state, &staff, t, "", &form, beside(errors)).await?;
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(other) => Err(other.into()),
    }
}

/// Product `key`'s page read with `query` (its prices' cursor), with the price form showing
/// `form` and `errors` beside its fields; the 404 page when the merchant has no such product.
async fn product_page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    query: &str,
    form: &PriceForm,
    errors: BTreeMap<String, String>,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    let merchant_id = staff.merchant.id;
    let product = match catalog::product(state, merchant_id, key).await {
        Ok(product) => product,
        Err(ServiceError::NotFound) => return notice::not_found(state, t),
        Err(other) => return Err(other.into()),
    };
    let ListQuery(page) = ListQuery::<PageParams>::parse(query)?;
    let found = catalog::price_page(state, merchant_id, page, PriceFilters::of_product(key)).await;
    let (rows, next) = match or_bad_request(state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let url = product_url(key);
    let intervals: Vec<Value> = IntervalType::ALL
        .iter()
        .map(|interval| {
            context! {
                name => interval.as_str(),
                label => t.get(&format!("dash_interval_{}", interval.as_str())),
                selected => interval.as_str().eq_ignore_ascii_case(&form.interval_type),
            }
        })
        .collect();
    framed(
        state,
        staff,
        t,
        "dashboard/catalog_product.html",
        "catalog",
        context! {
            product => product_view(lang, &product),
            prices => rows.iter().map(|p| price_row(t, lang, p)).collect::<Vec<_>>(),
            next_url => next.as_deref().map(|cursor| link(&url, &[("cursor", Some(cursor))])),
            intervals => intervals,
            form => context! {
                currency => form.currency,
                unit_amount => form.unit_amount,
                interval_count => form.interval_count,
                trial_days => form.trial_days,
            },
            errors => errors,
        },
    )
}

/// `GET /dashboard/catalog/products/{productId}?cursor=`: the product, its prices (newest
/// first, a page at a time) and the form that adds one.
pub async fn show_product(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(key): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let query = without_empty(query.as_deref());
    let form = PriceForm::default();
    product_page(&state, &staff, t, &key, &query, &form, BTreeMap::new()).await
}

/// `POST /dashboard/catalog/products/{productId}/prices`: adds a price to the product and shows
/// its page again (303); the page with each field's error (400), the product's refusal (an
/// archived one) above the form.
pub async fn create_price(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<PriceForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let new = NewPrice {
        product_id: Field::Present(key.clone()),
        currency: fields::text(&form.currency),
        unit_amount: fields::text(&form.unit_amount),
        interval_type: fields::text(&form.interval_type),
        interval_count: fields::number(&form.interval_count),
        trial_days: fields::number(&form.trial_days),
        metered: Default::default(),
    };
    match catalog::create_price(&state, staff.merchant.id, new).await {
        Ok(_) => Ok(Redirect::to(&product_url(&key)).into_response()),
        Err(ServiceError::Validation(errors)) => {
            let errors = beside(errors);
            let page = product_page(&state, &staff, t, &key, "", &form, errors).await?;
            // Another merchant's product (or none) stays the 404 page.
            if page.status() == StatusCode::NOT_FOUND {
                return Ok(page);
            }
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(other) => Err(other.into()),
    }
}

/// The outcome page of archiving or restoring, with a link to product `key`'s page.
fn told(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    key: &str,
    text: &str,
) -> Result<Response, PageError> {
    let back = product_url(key);
    let told = Outcome {
        nav: "catalog",
        back: &back,
        back_label: "dash_back_to_product",
        outcome: "done",
        text: t.get(text).cloned().unwrap_or_default().into(),
        secret: None,
    };
    confirm::outcome(state, staff, t, StatusCode::OK, told)
}

/// `POST /dashboard/catalog/products/{productId}/active` (`active` = `false` or `true`):
/// archives the product (it takes no new price; its prices and memberships stay) or restores it.
pub async fn set_product_active(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActiveForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let Some(active) = form.active() else {
        return notice::bad_request(&state, t);
    };
    let change = ProductChange {
        active: Field::Present(active),
        ..ProductChange::default()
    };
    match catalog::update_product(&state, staff.merchant.id, &key, change).await {
        Ok(_) if active => told(&state, &staff, t, &key, "dash_product_restored"),
        Ok(_) => told(&state, &staff, t, &key, "dash_product_archived"),
        Err(ServiceError::NotFound) => notice::not_found(&state, t),
        Err(other) => Err(other.into()),
    }
}

/// `POST /dashboard/catalog/prices/{priceId}/active` (`active` = `false` or `true`): archives
/// the price (it sells no new membership; those made from it keep its terms) or restores it.
pub async fn set_price_active(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActiveForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let Some(active) = form.active() else {
        return notice::bad_request(&state, t);
    };
    match catalog::set_price_active(&state, staff.merchant.id, &key, active).await {
        Ok(price) if active => told(&state, &staff, t, &price.product_key, "dash_price_restored"),
        Ok(price) => told(&state, &staff, t, &price.product_key, "dash_price_archived"),
        Err(ServiceError::NotFound) => notice::not_found(&state, t),
        Err(other) => Err(other.into()),
    }
}
