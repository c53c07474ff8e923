//! The catalog (DESIGN §15): a merchant's products and prices, for the API (`/products`,
//! `/prices`) and the dashboard's catalog pages alike. A product names what its prices sell; an
//! archived product (`active: false`) stays listed and keeps its prices, but takes no new price.
//! A price is what one unit of an active product costs per billing cycle, in one currency, with
//! an optional free trial; its terms never change (archive it and create another), so every
//! membership made from a price was sold on the terms the price still shows. A metered price
//! ([`metered`]) bills a meter's usage in arrears instead of a unit in advance.

pub mod metered;

use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership::trial_days;
use recur_domain::settings::single_line;
use recur_domain::validation::{self as rules, FieldErrors};
use serde::Deserialize;
use utoipa::IntoParams;

use super::fields::{amount, currency, interval_count};
use super::ServiceError;
use crate::http::input::{optional_flag, optional_text, refuse_given, required_text, Field};
use crate::http::pagination::{flag, text, Given, ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::meters;
use crate::store::prices::{self, CatalogPrice, Filter, NewPrice as StoredPrice};
use crate::store::products::{self, Changes, Product};
use metered::MeteredInput;

/// Longest product `name`.
pub const MAX_NAME_CHARS: usize = 250;
/// Longest product `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

/// A new product as given.
#[derive(Debug, Default)]
pub struct NewProduct {
    /// What customers see it called: required, one line of at most [`MAX_NAME_CHARS`].
    pub name: Field<String>,
    /// The merchant's description: optional, at most [`MAX_DESCRIPTION_CHARS`].
    pub description: Field<String>,
}

/// A change of a product; absent fields stay.
#[derive(Debug, Default)]
pub struct ProductChange {
    /// A new name.
    pub name: Field<String>,
    /// A new description; `null` removes it.
    pub description: Field<String>,
    /// `false` archives the product, `true` restores it.
    pub active: Field<bool>,
}

/// Which products a page lists.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProductFilters {
    /// Only active products (`true`) or only archived ones (`false`).
    #[serde(default)]
    #[param(value_type = Option<bool>)]
    pub active: Field<Given>,
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

/// Creates the product `new` describes for the merchant, active, or lists every failing field.
pub async fn create_product(
    state: &AppState,
    merchant_id: i64,
    new: NewProduct,
) -> Result<Product, ServiceError> {
    let mut errors = FieldErrors::new();
    let name = required_text(new.name, "name", &mut errors, name_rule);
    let description = optional_text(
        new.description,
        "description",
        &mut errors,
        description_rule,
    );
    let Some(name) = name.filter(|_| errors.is_empty()) else {
        return Err(ServiceError::Validation(errors));
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

/// The page of the merchant's products that `page` and `filters` ask for, newest first (archived
/// ones too unless `active` says otherwise), and the cursor of the next.
pub async fn product_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: ProductFilters,
) -> Result<(Vec<Product>, Option<String>), ServiceError> {
    let mut errors = FieldErrors::new();
    let active = flag(filters.active, "active", &mut errors);
    let active_name = active.map(|a| if a { "true" } else { "false" });
    let scope = ListScope::new("products", merchant_id, &[("active", active_name)]);
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = products::page(state.store.pool(), merchant_id, active, ask.window()).await?;
    Ok(ask.cut(rows, |p| p.id))
}

/// The merchant's product `key`.
pub async fn product(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Product, ServiceError> {
    products::get(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies `change` to the merchant's product `key`: the product as changed, every failing
/// field, or not found.
pub async fn update_product(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    change: ProductChange,
) -> Result<Product, ServiceError> {
    let mut errors = FieldErrors::new();
    let mut changes = Changes::default();
    if change.name.is_given() {
        changes.name = required_text(change.name, "name", &mut errors, name_rule);
    }
    match change.description {
        Field::Absent => {}
        Field::Null => changes.description = Some(None),
        description => {
            changes.description =
                optional_text(description, "description", &mut errors, description_rule).map(Some);
        }
    }
    changes.active = optional_flag(change.active, "active", &mut errors);
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let now = state.merchant_now(merchant_id).await?;
    products::update(state.store.writer(), merchant_id, key, &changes, now)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// A new price as given.
#[derive(Debug, Default)]
pub struct NewPrice {
    /// The active product it sells (`prod_…`).
    pub product_id: Field<String>,
    /// ISO 4217 code.
    pub currency: Field<String>,
    /// The price of one unit per cycle, a decimal string.
    pub unit_amount: Field<String>,
    /// Daily, Weekly, Monthly or Annually, in any letter case.
    pub interval_type: Field<String>,
    /// Units of `interval_type` between charges, default 1.
    pub interval_count: Field<i64>,
    /// The free trial of a membership made from it, in days.
    pub trial_days: Field<i64>,
    /// The meter and pricing of a metered price.
    pub metered: MeteredInput,
}

/// A change of a price: `active` alone, since its terms never change.
#[derive(Debug, Default)]
pub struct PriceChange {
    /// `false` archives the price (it sells no new membership), `true` restores it.
    pub active: Field<bool>,
    /// The terms the change names (`productId`, `currency`, …) with whether each is given: each
    /// given one is refused.
    pub terms: Vec<(&'static str, bool)>,
}

/// Which prices a page lists.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PriceFilters {
    /// Only the prices of this product (`prod_…`).
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    pub product_id: Field<Given>,
    /// Only active prices (`true`) or only archived ones (`false`).
    #[serde(default)]
    #[param(value_type = Option<bool>)]
    pub active: Field<Given>,
}

impl PriceFilters {
    /// The prices of the product `product_key`, archived ones too.
    pub fn of_product(product_key: &str) -> Self {
        Self {
            product_id: Field::Present(Given(product_key.to_string())),
            active: Field::Absent,
        }
    }
}

/// Why a change of a price's term is refused.
const TERMS_ARE_FIXED: &str = "cannot change: a price's terms are fixed once created; archive \
     it (active: false) and create another price";

/// `intervalType` and `intervalCount` (default 1) as a cycle of at most three years; a count
/// the type does not allow is reported under `intervalCount`.
fn cycle(
    interval_type: Field<String>,
    count: Field<i64>,
    errors: &mut FieldErrors,
) -> Option<BillingCycle> {
    let interval_type = required_text(interval_type, "intervalType", errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let count = match count.optional("intervalCount", errors) {
        Some(n) => errors.check("intervalCount", interval_count(&n.into()))?,
        None => 1,
    };
    let cycle = BillingCycle::new(interval_type?, count).map_err(|e| e.to_string());
    errors.check("intervalCount", cycle)
}

/// The product a new price may sell, or why `product` (as read for `productId`) cannot.
fn usable(product: Option<Product>) -> Result<Product, &'static str> {
    match product {
        None => Err("does not match a product of this merchant"),
        Some(p) if !p.active => Err("is an archived product: restore it or use an active one"),
        Some(p) => Ok(p),
    }
}

/// Creates the price `new` describes for an active product of the merchant, active, or lists
/// every failing field (the product's and a metered price's meter's too).
pub async fn create_price(
    state: &AppState,
    merchant_id: i64,
    mut new: NewPrice,
) -> Result<CatalogPrice, ServiceError> {
    let mut errors = FieldErrors::new();
    let product_key = new.product_id.required("productId", &mut errors);
    let currency = currency(new.currency, "currency", &mut errors);
    let metered_input = std::mem::take(&mut new.metered);
    let is_metered = metered_input.meter_id.is_given();
    let meter_key = match is_metered {
        true => metered_input
            .meter_id
            .clone()
            .required("meterId", &mut errors),
        false => None,
    };
    let (unit_amount, pricing) = if is_metered {
        if new.trial_days.is_given() {
            errors.add(
                "trialDays",
                "must be absent for a metered price: it bills usage",
            );
        }
        let pricing = metered::pricing(metered_input, new.unit_amount, &mut errors);
        (Some(0), pricing)
    } else {
        let named = metered_input.named();
        refuse_given(
            &named,
            "is for a metered price only (with meterId)",
            &mut errors,
        );
        (
            amount(new.unit_amount, "unitAmount", currency, &mut errors),
            None,
        )
    };
    let cycle = cycle(new.interval_type, new.interval_count, &mut errors);
    let trial = new
        .trial_days
        .optional("trialDays", &mut errors)
        .and_then(|days| errors.check("trialDays", trial_days(days)));
    let Some(product_key) = product_key else {
        return Err(ServiceError::Validation(errors));
    };
    let valid = (currency, unit_amount, cycle, errors.is_empty());
    let (Some(currency), Some(unit_amount), Some(cycle), true) = valid else {
        // The product and the meter are judged too, so that every failing field is listed;
        // nothing is written.
        let product = products::get(state.store.pool(), merchant_id, &product_key).await?;
        if let Err(refusal) = usable(product) {
            errors.add("productId", refusal);
        }
        if let Some(key) = &meter_key {
            let meter = meters::get(state.store.pool(), merchant_id, key).await?;
            if let Err(refusal) = usable_meter(meter) {
                errors.add("meterId", refusal);
            }
        }
        return Err(ServiceError::Validation(errors));
    };
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let backend = state.store.backend();
    let product = products::locked(&mut tx, backend, merchant_id, &product_key).await?;
    let product = usable(product);
    let meter = match &meter_key {
        Some(key) => Some(usable_meter(
            meters::locked(&mut tx, backend, merchant_id, key).await?,
        )),
        None => None,
    };
    let mut refused = FieldErrors::new();
    let product = refused.check("productId", product.map_err(String::from));
    let meter = meter
        .transpose()
        .map_err(|refusal| refused.add("meterId", refusal))
        .ok()
        .flatten();
    let Some(product) = product.filter(|_| refused.is_empty()) else {
        return Err(ServiceError::Validation(refused));
    };
    let new = StoredPrice {
        price_key: ids::price_key(),
        currency: currency.code().to_string(),
        unit_amount,
        cycle,
        trial_days: trial,
        metered: meter
            .zip(pricing)
            .map(|(meter, pricing)| (meter.id, pricing)),
    };
    let price = prices::insert(&mut tx, merchant_id, &product, &new, now).await?;
    tx.commit().await?;
    Ok(price)
}

/// The meter a new metered price may bill, or why `meter` (as read for `meterId`) cannot.
fn usable_meter(meter: Option<meters::Meter>) -> Result<meters::Meter, &'static str> {
    match meter {
        None => Err("does not match a meter of this merchant"),
        Some(m) if !m.active => Err("is an archived meter: restore it or use an active one"),
        Some(m) => Ok(m),
    }
}

/// The page of the merchant's prices that `page` and `filters` ask for, newest first, and the
/// cursor of the next.
pub async fn price_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: PriceFilters,
) -> Result<(Vec<CatalogPrice>, Option<String>), ServiceError> {
    let mut errors = FieldErrors::new();
    let filter = Filter {
        product_key: text(filters.product_id, "productId", &mut errors),
        active: flag(filters.active, "active", &mut errors),
    };
    let scope = ListScope::new(
        "prices",
        merchant_id,
        &[
            ("productId", filter.product_key.as_deref()),
            (
                "active",
                filter.active.map(|a| if a { "true" } else { "false" }),
            ),
        ],
    );
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = prices::page(state.store.pool(), merchant_id, &filter, ask.window()).await?;
    Ok(ask.cut(rows, |p| p.id))
}

/// The merchant's price `key`.
pub async fn price(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<CatalogPrice, ServiceError> {
    prices::by_key(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies `change` to the merchant's price `key`: archived or restored (`active`), the price
/// as it is when `active` is absent; a term named is refused.
pub async fn update_price(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    change: PriceChange,
) -> Result<CatalogPrice, ServiceError> {
    let mut errors = FieldErrors::new();
    let active = optional_flag(change.active, "active", &mut errors);
    refuse_given(&change.terms, TERMS_ARE_FIXED, &mut errors);
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    match active {
        None => price(state, merchant_id, key).await,
        Some(active) => set_price_active(state, merchant_id, key, active).await,
    }
}

/// Archives (`false`) or restores the merchant's price `key`: the price as changed, or not
/// found.
pub async fn set_price_active(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    active: bool,
) -> Result<CatalogPrice, ServiceError> {
    let mut tx = state.store.begin().await?;
    if !prices::set_active(&mut tx, merchant_id, key, active).await? {
        return Err(ServiceError::NotFound);
    }
    let price = prices::by_key(&mut *tx, merchant_id, key).await?;
    tx.commit().await?;
    price.ok_or(ServiceError::NotFound)
}
