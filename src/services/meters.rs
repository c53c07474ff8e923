//! Meters (DESIGN §19): what a merchant counts and how a period's usage events add up, for the
//! API (`/meters`) and the dashboard alike. A meter's code, aggregation and property never
//! change, since metered prices and stored totals read them; its name does, and an archived
//! meter (`active: false`) takes no events and no new prices.

use recur_domain::settings::single_line;
use recur_domain::usage::meter::{self as rules, Aggregation};
use recur_domain::validation::FieldErrors;
use serde::Deserialize;
use utoipa::IntoParams;

use super::ServiceError;
use crate::http::input::{optional_flag, refuse_given, required_text, Field};
use crate::http::pagination::{flag, Given, ListScope, PageParams};
use crate::ids;
use crate::state::AppState;
use crate::store::meters::{self, Meter, NewMeter as StoredMeter};

/// Longest meter `name`.
pub const MAX_NAME_CHARS: usize = 250;

/// A new meter as given.
#[derive(Debug, Default)]
pub struct NewMeter {
    /// What events name it by.
    pub code: Field<String>,
    /// What invoices call it.
    pub name: Field<String>,
    /// `count`, `sum`, `max`, `unique_count` or `latest`.
    pub aggregation: Field<String>,
    /// The event property it reads; required for all but `count`.
    pub property: Field<String>,
}

/// A change of a meter: its name and `active`; the terms named are refused.
#[derive(Debug, Default)]
pub struct MeterChange {
    /// A new name.
    pub name: Field<String>,
    /// `false` archives the meter, `true` restores it.
    pub active: Field<bool>,
    /// The fixed terms the change names (`code`, `aggregation`, `property`) with whether each
    /// is given: each given one is refused.
    pub terms: Vec<(&'static str, bool)>,
}

/// Which meters a page lists.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MeterFilters {
    /// Only active meters (`true`) or only archived ones (`false`).
    #[serde(default)]
    #[param(value_type = Option<bool>)]
    pub active: Field<Given>,
}

/// Why a change of a meter's term is refused.
const TERMS_ARE_FIXED: &str = "cannot change: a meter's code, aggregation and property are \
     fixed once created; archive it (active: false) and create another meter";

fn name_rule(v: &str) -> Result<String, String> {
    single_line(v, MAX_NAME_CHARS)
}

/// Creates the meter `new` describes for the merchant, active, or lists every failing field; a
/// code the merchant has already is a 409 on `code`.
pub async fn create_meter(
    state: &AppState,
    merchant_id: i64,
    new: NewMeter,
) -> Result<Meter, ServiceError> {
    let mut errors = FieldErrors::new();
    let code = required_text(new.code, "code", &mut errors, rules::meter_code);
    let name = required_text(new.name, "name", &mut errors, name_rule);
    let aggregation = required_text(new.aggregation, "aggregation", &mut errors, |v| {
        Aggregation::parse(v).map(|a| a.as_str().to_string())
    })
    .and_then(|v| Aggregation::parse(&v).ok());
    let property = match (aggregation, new.property) {
        (Some(Aggregation::Count), Field::Absent | Field::Null) => None,
        (Some(Aggregation::Count), _) => {
            errors.add("property", "must be absent: a count meter counts events");
            None
        }
        (_, property) => required_text(property, "property", &mut errors, rules::property_name),
    };
    let (Some(code), Some(name), Some(aggregation), true) =
        (code, name, aggregation, errors.is_empty())
    else {
        return Err(ServiceError::Validation(errors));
    };
    let new = StoredMeter {
        meter_key: ids::meter_key(),
        code,
        name,
        aggregation,
        property,
    };
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let Some(meter) = meters::insert(&mut tx, merchant_id, &new, now).await? else {
        let mut conflict = FieldErrors::new();
        conflict.add("code", "is the code of another meter of this merchant");
        return Err(ServiceError::FieldConflict(conflict));
    };
    tx.commit().await?;
    Ok(meter)
}

/// The page of the merchant's meters that `page` and `filters` ask for, newest first, and the
/// cursor of the next.
pub async fn meter_page(
    state: &AppState,
    merchant_id: i64,
    page: PageParams,
    filters: MeterFilters,
) -> Result<(Vec<Meter>, Option<String>), ServiceError> {
    let mut errors = FieldErrors::new();
    let active = flag(filters.active, "active", &mut errors);
    let active_name = active.map(|a| if a { "true" } else { "false" });
    let scope = ListScope::new("meters", merchant_id, &[("active", active_name)]);
    let ask = page.read(&state.keys, scope, errors)?;
    let rows = meters::page(state.store.pool(), merchant_id, active, ask.window()).await?;
    Ok(ask.cut(rows, |m| m.id))
}

/// The merchant's meter `key`.
pub async fn meter(state: &AppState, merchant_id: i64, key: &str) -> Result<Meter, ServiceError> {
    meters::get(state.store.pool(), merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies `change` to the merchant's meter `key`: renamed and/or archived or restored; a fixed
/// term named is refused.
pub async fn update_meter(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    change: MeterChange,
) -> Result<Meter, ServiceError> {
    let mut errors = FieldErrors::new();
    let name = if change.name.is_given() {
        required_text(change.name, "name", &mut errors, name_rule)
    } else {
        None
    };
    let active = optional_flag(change.active, "active", &mut errors);
    refuse_given(&change.terms, TERMS_ARE_FIXED, &mut errors);
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    meters::update(
        state.store.writer(),
        merchant_id,
        key,
        name.as_deref(),
        active,
    )
    .await?
    .ok_or(ServiceError::NotFound)
}
