//! The API keys page: the merchant's live keys (name, id, scope, created, last used), the form
//! that creates one (name, scope) and each key's revocation, through the service of
//! `POST /api-keys`, `GET /api-keys` and `DELETE /api-keys/{apiKeyId}` ([`keys`]): the same
//! checks, the same limit, the secret shown once on the page that answers the creation and
//! never stored.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::time::format_utc;
use serde::Deserialize;

use super::confirm::{self, Confirm, Outcome};
use super::fields::beside;
use super::staff::Staff;
use super::{framed, staff};
use crate::http::input::Field;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::render::with_status;
use crate::pages::{notice, session};
use crate::services::keys::{self, NewKey};
use crate::services::ServiceError;
use crate::state::AppState;

/// The page's address.
const PAGE: &str = "/dashboard/api-keys";

/// The creation form as posted.
#[derive(Debug, Deserialize)]
pub struct KeyForm {
    /// The session's form token.
    #[serde(rename = "csrfToken", default)]
    csrf_token: String,
    /// The key's name.
    #[serde(default)]
    name: String,
    /// `read` or `write`.
    #[serde(default)]
    scope: String,
}

/// What the page shows besides the list: the form's values and errors, or the key just created.
#[derive(Default)]
struct Shown {
    /// The name typed.
    name: String,
    /// The scope chosen.
    scope: String,
    /// Each field's error.
    errors: BTreeMap<String, String>,
    /// The key just created and its secret, shown this once.
    created: Option<(String, String)>,
}

/// The page with the merchant's live keys and `shown`.
async fn list_page(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    shown: Shown,
) -> Result<Response, PageError> {
    let keys: Vec<Value> = keys::list(state, staff.merchant.id)
        .await?
        .into_iter()
        .map(|key| {
            context! {
                id => key.key_id,
                name => key.name,
                scope => key.scope.as_str(),
                created => format_utc(key.created_at),
                last_used => key.last_used_at.map(format_utc),
            }
        })
        .collect();
    framed(
        state,
        staff,
        t,
        "dashboard/api_keys.html",
        "api-keys",
        context! {
            keys => keys,
            name => shown.name,
            scope => shown.scope,
            errors => shown.errors,
            created => shown.created.map(|(id, secret)| context! { id => id, secret => secret }),
        },
    )
}

/// `GET /dashboard/api-keys`.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    list_page(&state, &staff, t, Shown::default()).await
}

/// `POST /dashboard/api-keys`: creates a key and shows its secret once; the form again with
/// each field's error beside it (400), or the limit's reason (409).
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<KeyForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let new = NewKey {
        name: Field::Present(form.name.clone()),
        scope: Field::Present(form.scope.clone()),
    };
    match keys::create(&state, staff.merchant.id, new).await {
        Ok((key, secret)) => {
            let shown = Shown {
                created: Some((key.key_id, secret)),
                ..Shown::default()
            };
            list_page(&state, &staff, t, shown).await
        }
        Err(ServiceError::Validation(errors)) => {
            let shown = Shown {
                name: form.name,
                scope: form.scope,
                errors: beside(errors),
                created: None,
            };
            let page = list_page(&state, &staff, t, shown).await?;
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(ServiceError::Conflict(why)) => {
            told(&state, &staff, t, StatusCode::CONFLICT, "refused", why)
        }
        Err(other) => Err(other.into()),
    }
}

/// The outcome page of an action on the keys.
fn told(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    outcome: &str,
    text: String,
) -> Result<Response, PageError> {
    let told = Outcome {
        nav: "api-keys",
        back: PAGE,
        back_label: "dash_back_to_api_keys",
        outcome,
        text: text.into(),
        secret: None,
    };
    confirm::outcome(state, staff, t, status, told)
}

/// Whether the merchant holds the live key `key_id`.
async fn holds(state: &AppState, merchant_id: i64, key_id: &str) -> Result<bool, PageError> {
    let keys = keys::list(state, merchant_id).await?;
    Ok(keys.iter().any(|key| key.key_id == key_id))
}

/// `GET /dashboard/api-keys/{apiKeyId}/revoke`: asks to confirm the revocation. Another
/// merchant's key, or one revoked already, is the 404 page.
pub async fn confirm_revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(key_id): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    if !holds(&state, staff.merchant.id, &key_id).await? {
        return notice::not_found(&state, t);
    }
    let confirm = Confirm {
        nav: "api-keys",
        title: "dash_revoke_title",
        text: "dash_revoke_text",
        button: "dash_revoke_button",
        action: format!("{PAGE}/{key_id}/revoke"),
        field: None,
    };
    confirm::page(&state, &staff, t, PAGE, confirm)
}

/// `POST /dashboard/api-keys/{apiKeyId}/revoke`: revokes the key; refused at once.
pub async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key_id): Path<String>,
    PageForm(form): PageForm<KeyForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    match keys::revoke(&state, staff.merchant.id, &key_id).await {
        Ok(()) => {
            let text = t.get("dash_revoked").cloned().unwrap_or_default();
            told(&state, &staff, t, StatusCode::OK, "done", text)
        }
        Err(ServiceError::NotFound) => notice::not_found(&state, t),
        Err(other) => Err(other.into()),
    }
}
