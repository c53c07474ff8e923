//! One webhook endpoint's page: its URL, events, note and state, its delivery log (newest
//! first, a page at a time, as `GET /webhook-endpoints/{id}/deliveries` lists it), and its
//! actions through the API's code: enable or disable (`PATCH`,
//! [`webhook_endpoints::update`]), send a test event ([`endpoint_deliveries::queue_test`]),
//! rotate the secret (shown once on the answer, [`webhook_endpoints::rotate`]) and delete
//! ([`webhook_endpoints::delete`]), the last two after a confirmation page. Another merchant's
//! endpoint is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};

use super::confirm::{self, Confirm, Outcome};
use super::staff::Staff;
use super::webhooks::{Posted, PAGE};
use super::{framed, link, or_bad_request_api, staff, without_empty};
use crate::api::endpoint_deliveries;
use crate::api::problem::ApiError;
use crate::api::webhook_endpoints::{self, EndpointRecord};
use crate::http::pagination::{ListQuery, PageParams};
use crate::pages::failure::PageError;
use crate::pages::{notice, session};
use crate::state::AppState;
use crate::store::webhook_endpoints::{self as stored, Changes};

/// The address of endpoint `id`'s page.
fn page_of(id: &str) -> String {
    format!("{PAGE}/{id}")
}

/// The outcome page of an action on endpoint `id`.
fn told(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    id: &str,
    result: Result<(String, Option<String>), ApiError>,
) -> Result<Response, PageError> {
    let back = page_of(id);
    let (status, outcome, text, secret) = match result {
        Ok((text, secret)) => (StatusCode::OK, "done", text, secret),
        Err(ApiError::NotFound) => return notice::not_found(state, t),
        Err(ApiError::Conflict(why)) => (StatusCode::CONFLICT, "refused", why, None),
        Err(other) => return Err(other.into()),
    };
    let told = Outcome {
        nav: "webhooks",
        back: &back,
        back_label: "dash_back_to_endpoint",
        outcome,
        text: text.into(),
        secret,
    };
    confirm::outcome(state, staff, t, status, told)
}

/// `GET /dashboard/webhooks/{endpointId}?cursor=`: the endpoint and its delivery log.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let merchant_id = staff.merchant.id;
    let Some(endpoint) = stored::get(state.store.pool(), merchant_id, &id).await? else {
        return notice::not_found(&state, t);
    };
    let ListQuery(page) = ListQuery::<PageParams>::parse(&without_empty(query.as_deref()))?;
    let found = endpoint_deliveries::attempts(&state, merchant_id, &id, page).await;
    let (attempts, next) = match or_bad_request_api(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let attempts: Vec<Value> = attempts.into_iter().map(Value::from_serialize).collect();
    framed(
        &state,
        &staff,
        t,
        "dashboard/webhook_endpoint.html",
        "webhooks",
        context! {
            endpoint => Value::from_serialize(EndpointRecord::new(endpoint)),
            page => page_of(&id),
            attempts => attempts,
            next_url => next.as_deref().map(|cursor| link(&page_of(&id), &[("cursor", Some(cursor))])),
        },
    )
}

/// `POST /dashboard/webhooks/{endpointId}/enabled` (`enabled` = `true` or `false`): enables
/// (its health starts afresh) or disables the endpoint.
pub async fn set_enabled(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, posted.one("csrfToken")).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let enabled = match posted.one("enabled") {
        "true" => true,
        "false" => false,
        _ => return notice::bad_request(&state, t),
    };
    let changes = Changes {
        enabled: Some(enabled),
        ..Changes::default()
    };
    let result = webhook_endpoints::update(&state, staff.merchant.id, &id, &changes)
        .await
        .map(|_| {
            let key = if enabled {
                "dash_enabled"
            } else {
                "dash_disabled"
            };
            (t.get(key).cloned().unwrap_or_default(), None)
        });
    told(&state, &staff, t, &id, result)
}

/// `POST /dashboard/webhooks/{endpointId}/test`: queues a `WEBHOOK_TEST` event to the
/// endpoint (409 when it is disabled).
pub async fn send_test(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, posted.one("csrfToken")).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let result = endpoint_deliveries::queue_test(&state, staff.merchant.id, &id)
        .await
        .map(|action_id| {
            let text = t
                .get("dash_test_queued")
                .map(|s| s.replace("{id}", &action_id))
                .unwrap_or_default();
            (text, None)
        });
    told(&state, &staff, t, &id, result)
}

/// `GET /dashboard/webhooks/{endpointId}/rotate`: asks to confirm the rotation.
pub async fn confirm_rotate(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    confirm_action(&state, &headers, &id, "rotate").await
}

/// `GET /dashboard/webhooks/{endpointId}/delete`: asks to confirm the deletion.
pub async fn confirm_delete(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    confirm_action(&state, &headers, &id, "delete").await
}

/// The confirmation page of `action` (`rotate` or `delete`) on the merchant's endpoint `id`.
async fn confirm_action(
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    action: &str,
) -> Result<Response, PageError> {
    let staff = match staff::require(state, headers).await? {
        Ok(staff) => staff,
        Err(redirect) => return Ok(redirect),
    };
    let t = session::strings(state, headers);
    if stored::get(state.store.pool(), staff.merchant.id, id)
        .await?
        .is_none()
    {
        return notice::not_found(state, t);
    }
    let title = format!("dash_{action}_title");
    let text = format!("dash_{action}_text");
    let button = format!("dash_{action}_button");
    let confirm = Confirm {
        nav: "webhooks",
        title: &title,
        text: &text,
        button: &button,
        action: format!("{}/{action}", page_of(id)),
        field: None,
    };
    confirm::page(state, &staff, t, &page_of(id), confirm)
}

/// `POST /dashboard/webhooks/{endpointId}/rotate`: a new signing secret, shown this once; the
/// previous one signs too for 24 hours.
pub async fn rotate(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, posted.one("csrfToken")).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let result = webhook_endpoints::rotate(&state, staff.merchant.id, &id)
        .await
        .map(|secret| {
            (
                t.get("dash_rotated").cloned().unwrap_or_default(),
                Some(secret),
            )
        });
    told(&state, &staff, t, &id, result)
}

/// `POST /dashboard/webhooks/{endpointId}/delete`: nothing more is sent to the endpoint.
pub async fn delete(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, posted.one("csrfToken")).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    match webhook_endpoints::delete(&state, staff.merchant.id, &id).await {
        Ok(()) => {
            let done = Outcome {
                nav: "webhooks",
                back: PAGE,
                back_label: "dash_back_to_webhooks",
                outcome: "done",
                text: t.get("dash_deleted").cloned().unwrap_or_default().into(),
                secret: None,
            };
            confirm::outcome(&state, &staff, t, StatusCode::OK, done)
        }
        Err(error) => told(&state, &staff, t, &id, Err(error)),
    }
}
