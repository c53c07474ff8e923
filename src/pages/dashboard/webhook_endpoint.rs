//! One webhook endpoint's page: its URL, events, note and state, its delivery log (newest
//! first, a page at a time, as `GET /webhook-endpoints/{id}/deliveries` lists it), and its
//! actions through the API's service: enable or disable (`PATCH`, [`endpoints::update`]), send a
//! test event ([`endpoints::send_test`]), rotate the secret (shown once on the answer,
//! [`endpoints::rotate_secret`]) and delete ([`endpoints::delete`]), the last two after a
//! confirmation page. Another merchant's endpoint is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::time::format_utc;

use super::confirm::{self, Confirm, Outcome};
use super::staff::Staff;
use super::webhooks::{endpoint_view, Posted, PAGE};
use super::{framed, link, or_bad_request, staff, without_empty};
use crate::http::input::Field;
use crate::http::pagination::{ListQuery, PageParams};
use crate::pages::failure::PageError;
use crate::pages::{notice, session};
use crate::services::endpoints::{self, EndpointChange};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::endpoint_deliveries::LoggedAttempt;

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
    result: Result<(String, Option<String>), ServiceError>,
) -> Result<Response, PageError> {
    let back = page_of(id);
    let (status, outcome, text, secret) = match result {
        Ok((text, secret)) => (StatusCode::OK, "done", text, secret),
        Err(ServiceError::NotFound) => return notice::not_found(state, t),
        Err(ServiceError::Conflict(why)) => (StatusCode::CONFLICT, "refused", why, None),
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

/// An attempt of the delivery log as the page shows it (the fields of the API's record).
fn attempt_view(attempt: LoggedAttempt) -> Value {
    context! {
        actionId => attempt.action_id,
        action => attempt.action,
        attempt => attempt.attempt,
        statusCode => attempt.status_code,
        durationMs => attempt.latency_ms,
        error => attempt.error,
        at => format_utc(attempt.started_at),
    }
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
    let endpoint = match endpoints::endpoint(&state, merchant_id, &id).await {
        Ok(endpoint) => endpoint,
        Err(ServiceError::NotFound) => return notice::not_found(&state, t),
        Err(other) => return Err(other.into()),
    };
    let ListQuery(page) = ListQuery::<PageParams>::parse(&without_empty(query.as_deref()))?;
    let found = endpoints::delivery_page(&state, merchant_id, &id, page).await;
    let (attempts, next) = match or_bad_request(&state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let attempts: Vec<Value> = attempts.into_iter().map(attempt_view).collect();
    framed(
        &state,
        &staff,
        t,
        "dashboard/webhook_endpoint.html",
        "webhooks",
        context! {
            endpoint => endpoint_view(&endpoint),
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
    let change = EndpointChange {
        enabled: Field::Present(enabled),
        ..EndpointChange::default()
    };
    let result = endpoints::update(&state, staff.merchant.id, &id, change)
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
    let result = endpoints::send_test(&state, staff.merchant.id, &id)
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
    match endpoints::endpoint(state, staff.merchant.id, id).await {
        Ok(_) => {}
        Err(ServiceError::NotFound) => return notice::not_found(state, t),
        Err(other) => return Err(other.into()),
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
    let result = endpoints::rotate_secret(&state, staff.merchant.id, &id)
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
    match endpoints::delete(&state, staff.merchant.id, &id).await {
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
