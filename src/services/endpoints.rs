//! A merchant's webhook endpoints (DESIGN §12), for the API (`/webhook-endpoints`) and the
//! dashboard's webhook pages alike: register one (absolute HTTPS, not an address the SSRF guard
//! refuses, a filter of known `Action`s), read, change and delete them, rotate a signing secret,
//! read the attempt log and queue a test event. An endpoint's signing secret is answered at
//! creation and at rotation only; it is stored sealed.

use recur_domain::schedule::SECRET_ROTATION_OVERLAP;
use recur_domain::signature::new_whsec;
use recur_domain::validation::{self as rules, FieldErrors};

use super::ServiceError;
use crate::events::{test_payload, Action, TEST_ACTION};
use crate::http::input::{optional_text, required_text, Field};
use crate::http::pagination::{ListScope, PageParams};
use crate::keys::random_bytes;
use crate::state::AppState;
use crate::store::endpoint_deliveries::{self, LoggedAttempt};
use crate::store::webhook_endpoints::{
    self, Changes, Endpoint, NewEndpoint as StoredEndpoint, MAX_PER_MERCHANT,
};

/// Longest endpoint `url`.
const MAX_URL_CHARS: usize = 2048;

/// Longest `description`.
const MAX_DESCRIPTION_CHARS: usize = 500;

/// A new endpoint as given.
#[derive(Debug, Default)]
pub struct NewEndpoint {
    /// Absolute HTTPS URL the events are POSTed to (not a private or loopback address).
    pub url: Field<String>,
    /// The `Action`s it receives, at least one; absent or `null`: every event.
    pub events: Field<Vec<String>>,
    /// The merchant's note, at most 500 characters.
    pub description: Field<String>,
}

/// A change of an endpoint: each field given replaces the stored one; absent fields stay.
#[derive(Debug, Default)]
pub struct EndpointChange {
    /// A new absolute HTTPS URL.
    pub url: Field<String>,
    /// A new filter, at least one `Action`; `null`: every event.
    pub events: Field<Vec<String>>,
    /// `false` stops deliveries (pending ones wait); `true` resumes them and starts the
    /// endpoint's health afresh.
    pub enabled: Field<bool>,
    /// A new note; `null` removes it.
    pub description: Field<String>,
}

/// Checks `new` and registers the merchant's endpoint, enabled: the endpoint and its signing
/// secret, which only this answer holds. Every failing field is listed; a conflict when the
/// merchant holds 20 endpoints already.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    new: NewEndpoint,
) -> Result<(Endpoint, String), ServiceError> {
    let mut errors = FieldErrors::new();
    let allow_private = state.config.webhooks.allow_private;
    let url = required_text(new.url, "url", &mut errors, |v| url_rule(v, allow_private));
    let events = events_filter(new.events, &mut errors);
    let description = optional_text(new.description, "description", &mut errors, |v| {
        rules::bounded_text(v, MAX_DESCRIPTION_CHARS)
    });
    let (Some(url), Some(events)) = (url, events) else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let secret = new_whsec(&random_bytes::<32>());
    let new = StoredEndpoint {
        endpoint_key: crate::ids::webhook_endpoint_id(),
        url,
        description,
        events,
        secret_sealed: state.keys.seal(&secret),
    };
    let now = state.merchant_now(merchant_id).await?;
    let endpoint = webhook_endpoints::insert(&state.store, merchant_id, &new, now)
        .await?
        .ok_or_else(|| {
            ServiceError::Conflict(format!(
                "A merchant holds at most {MAX_PER_MERCHANT} webhook endpoints; delete one first."
            ))
        })?;
    tracing::info!(merchant_id, endpoint_id = %endpoint.endpoint_key, "webhook endpoint registered");
    Ok((endpoint, secret))
}

/// `url`: absolute HTTPS, not an address the SSRF guard refuses, at most 2048 characters.
fn url_rule(input: &str, allow_private: bool) -> Result<String, String> {
    if input.chars().count() > MAX_URL_CHARS {
        return Err(format!("must be at most {MAX_URL_CHARS} characters"));
    }
    rules::webhook_url(input, allow_private)
}

/// `events`: `Some(None)` for every event (absent or `null`), `Some(Some(actions))` for a
/// filter of known `Action`s (at least one, each once, in the order of [`Action::ALL`]), `None`
/// when it is not valid (reported under `events`).
fn events_filter(
    field: Field<Vec<String>>,
    errors: &mut FieldErrors,
) -> Option<Option<Vec<String>>> {
    let given = match field {
        Field::Absent | Field::Null => return Some(None),
        Field::Invalid(message) => {
            errors.add("events", message);
            return None;
        }
        Field::Present(given) => given,
    };
    let names: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
    if given.is_empty() {
        errors.add(
            "events",
            "must name at least one Action; omit it or send null for every event",
        );
        return None;
    }
    let mut valid = true;
    for (index, name) in given.iter().enumerate() {
        if Action::parse(name).is_none() {
            errors.add(
                format!("events[{index}]"),
                format!("must be one of {}", names.join(", ")),
            );
            valid = false;
        }
    }
    valid.then(|| {
        Some(
            names
                .iter()
                .filter(|name| given.iter().any(|g| g == *name))
                .map(|name| name.to_string())
                .collect(),
        )
    })
}

/// The merchant's endpoints, newest first (a merchant holds at most 20).
pub async fn list(state: &AppState, merchant_id: i64) -> Result<Vec<Endpoint>, ServiceError> {
    Ok(webhook_endpoints::for_merchant(state.store.pool(), merchant_id).await?)
}

/// The merchant's endpoint `endpoint_id`.
pub async fn endpoint(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<Endpoint, ServiceError> {
    webhook_endpoints::get(state.store.pool(), merchant_id, endpoint_id)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies `change` to the merchant's endpoint `endpoint_id` in one transaction: the endpoint
/// as changed, every failing field, or not found.
pub async fn update(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
    change: EndpointChange,
) -> Result<Endpoint, ServiceError> {
    let changes = read_changes(change, state.config.webhooks.allow_private)?;
    let mut tx = state.store.begin().await?;
    let endpoint = webhook_endpoints::update(&mut tx, merchant_id, endpoint_id, &changes)
        .await?
        .ok_or(ServiceError::NotFound)?;
    tx.commit().await?;
    Ok(endpoint)
}

fn read_changes(change: EndpointChange, allow_private: bool) -> Result<Changes, ServiceError> {
    let mut errors = FieldErrors::new();
    let mut changes = Changes::default();
    match change.url {
        Field::Absent => {}
        url => changes.url = required_text(url, "url", &mut errors, |v| url_rule(v, allow_private)),
    }
    if !matches!(change.events, Field::Absent) {
        changes.events = events_filter(change.events, &mut errors);
    }
    match change.enabled {
        Field::Absent => {}
        Field::Present(enabled) => changes.enabled = Some(enabled),
        Field::Null => errors.add("enabled", "must be true or false"),
        Field::Invalid(message) => errors.add("enabled", message),
    }
    match change.description {
        Field::Absent => {}
        Field::Null => changes.description = Some(None),
        description => {
            if let Some(text) = optional_text(description, "description", &mut errors, |v| {
                rules::bounded_text(v, MAX_DESCRIPTION_CHARS)
            }) {
                changes.description = Some(Some(text));
            }
        }
    }
    if errors.is_empty() {
        Ok(changes)
    } else {
        Err(ServiceError::Validation(errors))
    }
}

/// Deletes the merchant's endpoint `endpoint_id`: nothing more is sent to it and its pending
/// deliveries end `Undeliverable`. Not found when the merchant has none.
pub async fn delete(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<(), ServiceError> {
    let now = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    if !webhook_endpoints::delete(&mut tx, merchant_id, endpoint_id, now).await? {
        return Err(ServiceError::NotFound);
    }
    tx.commit().await?;
    tracing::info!(merchant_id, endpoint_id, "webhook endpoint deleted");
    Ok(())
}

/// Gives the merchant's endpoint `endpoint_id` a new signing secret: the new secret, which only
/// this answer holds. For 24 hours each delivery's `webhook-signature` carries two `v1,`
/// signatures, with the new and the previous secret; a second rotation within them drops the
/// oldest. Not found when the merchant has no such endpoint.
pub async fn rotate_secret(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<String, ServiceError> {
    let secret = new_whsec(&random_bytes::<32>());
    let now = state.merchant_now(merchant_id).await?;
    let rotated = webhook_endpoints::rotate_secret(
        &state.store,
        merchant_id,
        endpoint_id,
        &state.keys.seal(&secret),
        now + SECRET_ROTATION_OVERLAP,
    )
    .await?;
    if !rotated {
        return Err(ServiceError::NotFound);
    }
    tracing::info!(merchant_id, endpoint_id, "webhook endpoint secret rotated");
    Ok(secret)
}

/// A page of the delivery attempts to the merchant's endpoint `endpoint_id`, newest first, and
/// the cursor of the next. Not found when the merchant has no such endpoint; a validation error
/// for a cursor recur did not give for this list.
pub async fn delivery_page(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
    page: PageParams,
) -> Result<(Vec<LoggedAttempt>, Option<String>), ServiceError> {
    let endpoint = endpoint(state, merchant_id, endpoint_id).await?;
    let scope = ListScope::new(
        "endpoint-deliveries",
        merchant_id,
        &[("endpoint", Some(&endpoint.endpoint_key))],
    );
    let ask = page.read(&state.keys, scope, FieldErrors::new())?;
    let pool = state.store.pool();
    let rows =
        endpoint_deliveries::attempts_page(pool, merchant_id, endpoint.id, ask.window()).await?;
    Ok(ask.cut(rows, |attempt| attempt.id))
}

/// Queues a `WEBHOOK_TEST` event (`{"Action": "WEBHOOK_TEST", "ActionId", "IssuedAt"}`) to the
/// merchant's endpoint `endpoint_id` alone, whatever its filter, on the schedule of every
/// delivery: its `ActionId`. Not found when the merchant has no such endpoint; a conflict when
/// it is disabled (it would receive nothing).
pub async fn send_test(
    state: &AppState,
    merchant_id: i64,
    endpoint_id: &str,
) -> Result<String, ServiceError> {
    let endpoint = endpoint(state, merchant_id, endpoint_id).await?;
    if !endpoint.enabled {
        return Err(ServiceError::Conflict(
            "The endpoint is disabled: enable it to send it a test event.".into(),
        ));
    }
    let now = state.merchant_now(merchant_id).await?;
    let action_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let mut tx = state.store.begin().await?;
    endpoint_deliveries::insert_test(
        &mut tx,
        merchant_id,
        endpoint.id,
        &action_id,
        TEST_ACTION,
        &test_payload(&action_id, now),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(action_id)
}
