//! A merchant's tax rates (DESIGN §14), for the API (`/tax-rates`), and the check of a
//! membership's `taxRateIds`.
//!
//! A rate's `percentage`, `inclusive` and `country` change only while no membership or invoice
//! carries it (a conflict after): a membership's invoices follow the rate it was sold with.
//! `name` and `active` change at any time; an archived rate (`active: false`) stays listed and on
//! the memberships that have it, but is given to no new one.

use recur_domain::tax::{
    parse_percentage, rate_id_path, rate_set, requested_rate_ids, FoundRate, TaxRate, TAX_RATE_IDS,
};
use recur_domain::validation::{self as rules, FieldErrors};
use sqlx::{Any, Executor};

use super::ServiceError;
use crate::http::input::{optional_text, required_text, Field};
use crate::http::pagination::{ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::tax_rates::{self, StoredRate};

/// Longest rate `name`.
const MAX_NAME_CHARS: usize = 100;

/// A new rate as given.
#[derive(Debug, Default)]
pub struct NewTaxRate {
    /// What invoices call it, 1–100 characters.
    pub name: Field<String>,
    /// A decimal string from 0 to 100, at most 4 decimal places.
    pub percentage: Field<String>,
    /// Contained in the price (`true`) or added to it (`false`).
    pub inclusive: Field<bool>,
    /// ISO 3166-1 alpha-2 country, optional.
    pub country: Field<String>,
}

/// A change of a rate; absent fields stay.
#[derive(Debug, Default)]
pub struct TaxRateChange {
    /// A new name.
    pub name: Field<String>,
    /// `false` archives the rate, `true` restores it.
    pub active: Field<bool>,
    /// A new percentage: only while the rate is unused.
    pub percentage: Field<String>,
    /// A new inclusiveness: only while the rate is unused.
    pub inclusive: Field<bool>,
    /// A new country (`null` removes it): only while the rate is unused.
    pub country: Field<String>,
}

fn name_rule(v: &str) -> Result<String, String> {
    rules::bounded_text(v, MAX_NAME_CHARS)
}

fn percentage_rule(v: &str) -> Result<String, String> {
    parse_percentage(v)
        .map(|p| p.to_string())
        .map_err(str::to_string)
}

/// Creates the rate `new` describes for the merchant, active, or lists every failing field.
pub async fn create_tax_rate(
    state: &AppState,
    merchant_id: i64,
    new: NewTaxRate,
) -> Result<StoredRate, ServiceError> {
    let mut errors = FieldErrors::new();
    let name = required_text(new.name, "name", &mut errors, name_rule);
    let percentage = required_text(new.percentage, "percentage", &mut errors, percentage_rule);
    let inclusive = new.inclusive.required("inclusive", &mut errors);
    let country = optional_text(new.country, "country", &mut errors, rules::country_code);
    let (Some(name), Some(percentage), Some(inclusive)) = (name, percentage, inclusive) else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let rate = TaxRate {
        tax_rate_id: ids::tax_rate_key(),
        name,
        percentage: parse_percentage(&percentage).map_err(anyhow::Error::msg)?,
        inclusive,
        country,
    };
    let stored =
        tax_rates::insert(state.store.pool(), merchant_id, &rate, state.clock.now()).await?;
    Ok(stored)
}

/// The page of the merchant's rates that `page` asks for, newest first (archived ones too), and
/// the cursor of the next.
pub async fn tax_rate_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
) -> Result<(Vec<StoredRate>, Option<String>), ServiceError> {
    let scope = ListScope::new("tax-rates", merchant_id, &[]);
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let rows = tax_rates::page(state.store.pool(), merchant_id, ask.window()).await?;
    Ok(ask.cut(rows, |r| r.id))
}

/// The merchant's rate `key`.
pub async fn tax_rate(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<StoredRate, ServiceError> {
    tax_rates::get(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies `change` to the merchant's rate `key`: `name` and `active` at any time;
/// `percentage`, `inclusive` and `country` only while no membership or invoice carries it (a
/// conflict after). The rate as changed, every failing field, or not found.
pub async fn update_tax_rate(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    change: TaxRateChange,
) -> Result<StoredRate, ServiceError> {
    let mut errors = FieldErrors::new();
    let name = optional_text(change.name, "name", &mut errors, name_rule);
    let active = change.active.optional("active", &mut errors);
    let percentage = optional_text(
        change.percentage,
        "percentage",
        &mut errors,
        percentage_rule,
    );
    let inclusive = change.inclusive.optional("inclusive", &mut errors);
    let country = match change.country {
        Field::Absent => None,
        Field::Null => Some(None),
        field => optional_text(field, "country", &mut errors, rules::country_code).map(Some),
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let mut tx = state.store.begin().await?;
    let mut stored = tax_rates::by_key(&mut tx, state.store.backend(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)?;
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
        return Err(ServiceError::Conflict(
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
    tax_rates::save(&mut tx, merchant_id, &stored).await?;
    tx.commit().await?;
    Ok(stored)
}

/// A membership's `taxRateIds`, checked against the merchant's rates (one statement on
/// `executor`) by the domain's rules ([`requested_rate_ids`], then [`rate_set`]): each an active
/// rate of this merchant, none twice, at most
/// [`MAX_RATES_PER_MEMBERSHIP`](recur_domain::tax::MAX_RATES_PER_MEMBERSHIP), all inclusive or
/// all exclusive. A request otherwise valid so far (no `errors`) claims them (their terms are
/// fixed from then on), in `executor`'s transaction when it has one. The rates in the order
/// given; `None` (with the errors added) when one fails or the field is absent.
pub async fn resolve<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    field: Field<Vec<Field<String>>>,
    errors: &mut FieldErrors,
) -> Result<Option<Vec<TaxRate>>, ServiceError> {
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
    let stored = if errors.is_empty() {
        tax_rates::claim(executor, merchant_id, &keys).await?
    } else {
        tax_rates::by_keys(executor, merchant_id, &keys).await?
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
