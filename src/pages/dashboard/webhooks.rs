//! The webhook endpoints page: the merchant's endpoints and the form that adds one (URL, the
//! events it takes as checkboxes, a note), through the service of `POST /webhook-endpoints`
//! ([`endpoints::create`]): the same checks (absolute HTTPS, the SSRF guard, known `Action`s),
//! the same limit, the signing secret shown once on the page that answers and stored only
//! sealed. Each endpoint's own page is [`super::webhook_endpoint`].

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::time::format_utc;

use super::confirm::{self, Outcome};
use super::staff::Staff;
use super::{framed, staff};
use crate::events::Action;
use crate::http::input::Field;
use crate::http::{nul_text, problem};
use crate::pages::failure::PageError;
use crate::pages::render::with_status;
use crate::pages::session;
use crate::services::endpoints::{self, NewEndpoint};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::webhook_endpoints::Endpoint;

/// The page's address.
pub const PAGE: &str = "/dashboard/webhooks";

/// A form as posted, its fields in order (a field may repeat: the event checkboxes).
pub struct Posted(Vec<(String, String)>);

/// A posted form whose body holds U+0000 is refused at the edge as every form's is
/// ([`PageForm`](crate::pages::form::PageForm)): a 400 problem document.
impl<S: Send + Sync> FromRequest<S> for Posted {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let body = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| problem::malformed_body(rejection.body_text()))?;
        let text = String::from_utf8_lossy(&body);
        nul_text::check_form(&text).map_err(problem::validation)?;
        Ok(Self(
            url::form_urlencoded::parse(text.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ))
    }
}

impl Posted {
    /// The first value of `name`, or blank.
    pub fn one(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Every value of `name`.
    fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// An endpoint as the pages show it (the fields of the API's record).
pub(super) fn endpoint_view(endpoint: &Endpoint) -> Value {
    context! {
        endpointId => endpoint.endpoint_key,
        url => endpoint.url,
        events => endpoint.events,
        enabled => endpoint.enabled,
        description => endpoint.description,
        createdAt => format_utc(endpoint.created_at),
        disabledAt => endpoint.disabled_at.map(format_utc),
    }
}

/// What the page shows besides the list: the form's values and errors, or the endpoint just
/// added with its secret.
#[derive(Default)]
struct Shown {
    url: String,
    events: Vec<String>,
    description: String,
    errors: BTreeMap<String, String>,
    created: Option<(String, String)>,
}

/// The page with the merchant's endpoints and `shown`.
async fn list_page(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    shown: Shown,
) -> Result<Response, PageError> {
    let endpoints: Vec<Value> = endpoints::list(state, staff.merchant.id)
        .await?
        .iter()
        .map(endpoint_view)
        .collect();
    let actions: Vec<Value> = Action::ALL
        .iter()
        .map(|a| {
            let name = a.as_str();
            context! { name => name, checked => shown.events.iter().any(|e| e == name) }
        })
        .collect();
    framed(
        state,
        staff,
        t,
        "dashboard/webhooks.html",
        "webhooks",
        context! {
            endpoints => endpoints,
            actions => actions,
            url => shown.url,
            description => shown.description,
            errors => shown.errors,
            created => shown.created.map(|(id, secret)| context! { id => id, secret => secret }),
        },
    )
}

/// `GET /dashboard/webhooks`.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    list_page(&state, &staff, t, Shown::default()).await
}

/// `POST /dashboard/webhooks` (`url`, `events` once per box ticked, none for every event,
/// `description`): adds the endpoint and shows its secret once; the form again with each
/// field's error (400), or the limit's reason (409).
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    posted: Posted,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, posted.one("csrfToken")).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let events = posted.all("events");
    let description = posted.one("description").trim().to_string();
    let new = NewEndpoint {
        url: Field::Present(posted.one("url").trim().to_string()),
        events: if events.is_empty() {
            Field::Null
        } else {
            Field::Present(events.clone())
        },
        description: if description.is_empty() {
            Field::Null
        } else {
            Field::Present(description.clone())
        },
    };
    match endpoints::create(&state, staff.merchant.id, new).await {
        Ok((endpoint, secret)) => {
            let shown = Shown {
                created: Some((endpoint.endpoint_key, secret)),
                ..Shown::default()
            };
            list_page(&state, &staff, t, shown).await
        }
        Err(ServiceError::Validation(errors)) => {
            let errors = errors
                .into_map()
                .into_iter()
                .map(|(field, messages)| {
                    // `events[2]` is the events field's error.
                    let field = field.split('[').next().unwrap_or_default().to_string();
                    (field, messages.join("; "))
                })
                .collect();
            let shown = Shown {
                url: posted.one("url").to_string(),
                events,
                description,
                errors,
                created: None,
            };
            let page = list_page(&state, &staff, t, shown).await?;
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(ServiceError::Conflict(why)) => {
            let told = Outcome {
                nav: "webhooks",
                back: PAGE,
                back_label: "dash_back_to_webhooks",
                outcome: "refused",
                text: why.into(),
                secret: None,
            };
            confirm::outcome(&state, &staff, t, StatusCode::CONFLICT, told)
        }
        Err(other) => Err(other.into()),
    }
}
