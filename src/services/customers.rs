//! A merchant's customers: create (one per e-mail, compared case-insensitively: a second create
//! with the same e-mail answers the first customer), read, and replace the phone number.

use recur_domain::validation::{self as rules, FieldErrors};

use super::ServiceError;
use crate::http::input::{required_text, Field};
use crate::ids;
use crate::state::AppState;
use crate::store::customers::{self, Created, Customer, NewCustomer as StoredCustomer, TaxId};

/// A new customer as given.
#[derive(Debug, Default)]
pub struct NewCustomer {
    /// The merchant's processor key: a canonical GUID, and the merchant's own.
    pub processor_key: Field<String>,
    /// First name.
    pub first_name: Field<String>,
    /// Last name, same rule as `first_name`.
    pub last_name: Field<String>,
    /// `name@domain.tld`; unique per merchant, compared case-insensitively.
    pub email: Field<String>,
    /// E.164: `+`, a digit 1-9, then digits; 8 to 15 digits in total.
    pub phone: Field<String>,
    /// ISO 3166-1 alpha-2.
    pub country_code: Field<String>,
    /// Optional, not validated.
    pub address1: Field<String>,
    /// Optional, not validated.
    pub address2: Field<String>,
    /// Optional, not validated.
    pub city: Field<String>,
    /// Optional, not validated.
    pub state: Field<String>,
    /// Optional, not validated.
    pub zip_code: Field<String>,
    /// Optional list of `{type, value}` objects, each value a string.
    pub tax_ids: Field<Vec<serde_json::Value>>,
}

/// A new phone number for a customer.
#[derive(Debug, Default)]
pub struct PhoneChange {
    /// Key of the customer (`cstmr_…`).
    pub customer_key: Field<String>,
    /// New E.164 phone.
    pub phone: Field<String>,
}

/// Creates the customer `new` describes for the merchant, or finds the merchant's customer with
/// the same e-mail (compared case-insensitively; concurrent creates share one statement, see
/// [`customers::create_or_get`]): the customer and whether it is new. Every failing field is
/// listed; not found when the merchant itself is unknown.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    new: NewCustomer,
) -> Result<(Customer, Created), ServiceError> {
    let processor_key = state
        .processor_keys
        .of(&state.store, merchant_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let new_customer = validate_create(new, &processor_key)?;
    let now = state.clock.now();
    Ok(customers::create_or_get(
        &state.store,
        merchant_id,
        ids::customer_key(),
        new_customer,
        now,
    )
    .await?)
}

fn validate_create(
    body: NewCustomer,
    merchant_processor_key: &str,
) -> Result<StoredCustomer, ServiceError> {
    let mut errors = FieldErrors::new();
    let processor_key = required_text(
        body.processor_key,
        "processorKey",
        &mut errors,
        rules::canonical_guid,
    )
    .and_then(|key| {
        let owned = key == merchant_processor_key;
        errors.check(
            "processorKey",
            owned
                .then_some(key)
                .ok_or_else(|| "is not this merchant's processor key".to_string()),
        )
    });
    let first_name = required_text(
        body.first_name,
        "firstName",
        &mut errors,
        rules::person_name,
    );
    let last_name = required_text(body.last_name, "lastName", &mut errors, rules::person_name);
    let email = required_text(body.email, "email", &mut errors, rules::email);
    let phone = required_text(body.phone, "phone", &mut errors, rules::e164_phone);
    let country_code = required_text(
        body.country_code,
        "countryCode",
        &mut errors,
        rules::country_code,
    );
    let address1 = body.address1.optional("address1", &mut errors);
    let address2 = body.address2.optional("address2", &mut errors);
    let city = body.city.optional("city", &mut errors);
    let state = body.state.optional("state", &mut errors);
    let zip_code = body.zip_code.optional("zipCode", &mut errors);
    let tax_ids = body
        .tax_ids
        .optional("taxIds", &mut errors)
        .map(|items| tax_id_items(items, &mut errors))
        .unwrap_or_default();
    match (
        processor_key,
        first_name,
        last_name,
        email,
        phone,
        country_code,
    ) {
        (
            Some(processor_key),
            Some(first_name),
            Some(last_name),
            Some(email),
            Some(phone),
            Some(country_code),
        ) if errors.is_empty() => Ok(StoredCustomer {
            processor_key,
            first_name,
            last_name,
            email_identity: rules::email_identity(&email),
            email,
            phone,
            country_code,
            address1,
            address2,
            city,
            state,
            zip_code,
            tax_ids,
        }),
        _ => Err(ServiceError::Validation(errors)),
    }
}

/// Each item must be an object with string `type` and `value`.
fn tax_id_items(items: Vec<serde_json::Value>, errors: &mut FieldErrors) -> Vec<TaxId> {
    let mut tax_ids = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Some(object) = item.as_object() else {
            errors.add(
                format!("taxIds[{i}]"),
                "must be an object with type and value",
            );
            continue;
        };
        let mut text = |name: &str| match object.get(name) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Null) | None => {
                errors.add(format!("taxIds[{i}].{name}"), "is required");
                None
            }
            Some(_) => {
                errors.add(format!("taxIds[{i}].{name}"), "must be a string");
                None
            }
        };
        if let (Some(kind), Some(value)) = (text("type"), text("value")) {
            tax_ids.push(TaxId { kind, value });
        }
    }
    tax_ids
}

/// The merchant's customer `customer_key`.
pub async fn customer(
    state: &AppState,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Customer, ServiceError> {
    customers::get(&state.store, merchant_id, customer_key)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Replaces the phone number of the merchant's customer `change.customer_key`: the customer as
/// changed, every failing field, or not found.
pub async fn update_phone(
    state: &AppState,
    merchant_id: i64,
    change: PhoneChange,
) -> Result<Customer, ServiceError> {
    let mut errors = FieldErrors::new();
    let customer_key = required_text(change.customer_key, "customerKey", &mut errors, |key| {
        if key.starts_with("cstmr_") {
            Ok(key.to_string())
        } else {
            Err("must start with cstmr_".into())
        }
    });
    let phone = required_text(change.phone, "phone", &mut errors, rules::e164_phone);
    let (Some(customer_key), Some(phone)) = (customer_key, phone) else {
        return Err(ServiceError::Validation(errors));
    };
    let mut tx = state.store.begin().await?;
    let customer = customers::update_phone(
        &mut tx,
        merchant_id,
        &customer_key,
        &phone,
        state.clock.now(),
    )
    .await?
    .ok_or(ServiceError::NotFound)?;
    tx.commit().await?;
    Ok(customer)
}
