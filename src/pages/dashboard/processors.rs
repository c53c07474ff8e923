//! The processors page (DESIGN §17, §18): the merchant's sandbox gateways, connected Stripe
//! accounts (kind, default or not, a key's last four, live or test, the webhook URL to give
//! Stripe) and SEPA processors (creditor and collection account), the form that connects a
//! Stripe account (a SEPA processor's is [`super::sepa_processor`]), and per processor the
//! buttons that make it the default, rename it or replace its keys, and remove it, through the
//! service of `/processors` ([`processors`]): the same
//! checks (the key's shape and mode, then one call to Stripe), the same limit. A success
//! redirects back to the page with what was done; a refused field shows the form again with the
//! reason beside it (400), Stripe out of reach or the limit above it (503, 409). The secret key
//! and the webhook secret are never shown back, not even in a form refused. Removal goes
//! through a confirmation page; another merchant's processor is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::{context, Value};
use recur_domain::time::format_utc;
use serde::Deserialize;

use super::confirm::{self, Confirm, Outcome};
use super::fields::{self, beside};
use super::staff::{self, Staff};
use super::{framed_with_status, param};
use crate::http::input::Field;
use crate::pages::failure::PageError;
use crate::pages::form::{PageForm, TokenForm};
use crate::pages::{notice, session};
use crate::services::processors::{self, Kind, NewProcessor, Processor, ProcessorChange};
use crate::services::ServiceError;
use crate::state::AppState;

/// The page's address.
const PAGE: &str = "/dashboard/processors";

/// What a redirect back to the page may say was done (`?done=`).
const DONE: [&str; 7] = [
    "connected",
    "connected_sepa",
    "default",
    "removed",
    "removed_sepa",
    "secret",
    "changed",
];

/// The connection form as posted. `Debug` leaves the two secrets out.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    /// The account's name.
    #[serde(default)]
    name: String,
    /// `sk_test_…` or `sk_live_…`: never shown back.
    #[serde(default)]
    secret_key: String,
    /// `pk_test_…` or `pk_live_…`.
    #[serde(default)]
    publishable_key: String,
    /// `whsec_…`: never shown back.
    #[serde(default)]
    webhook_secret: String,
    /// `true` when "make default" is ticked, blank when not.
    #[serde(default)]
    default: String,
}

impl std::fmt::Debug for ConnectForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectForm")
            .field("name", &self.name)
            .field("publishable_key", &self.publishable_key)
            .field("default", &self.default)
            .finish_non_exhaustive()
    }
}

impl ConnectForm {
    /// The connection it asks for, each field as the API's body would give it.
    fn new_stripe(&self) -> NewProcessor {
        NewProcessor {
            kind: Field::Present("stripe".to_string()),
            name: fields::text(&self.name),
            secret_key: fields::text(&self.secret_key),
            publishable_key: fields::text(&self.publishable_key),
            webhook_secret: fields::text(&self.webhook_secret),
            default: match self.default.trim() {
                "" => Field::Absent,
                "true" => Field::Present(true),
                _ => Field::Invalid("must be true or not given".to_string()),
            },
            sepa: Default::default(),
        }
    }

    /// `text` with the form's secrets blanked out, should a message ever quote one.
    fn without_secrets(&self, text: &str) -> String {
        [&self.secret_key, &self.webhook_secret]
            .into_iter()
            .map(|secret| secret.trim())
            .filter(|secret| !secret.is_empty())
            .fold(text.to_string(), |text, secret| text.replace(secret, "…"))
    }
}

/// A Stripe account's new webhook signing secret as posted. `Debug` leaves the secret out.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    /// `whsec_…` of the endpoint added in Stripe's dashboard: never shown back.
    #[serde(default)]
    webhook_secret: String,
}

impl std::fmt::Debug for SecretForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretForm").finish_non_exhaustive()
    }
}

/// A Stripe account's new name and keys as posted; a blank field keeps what is stored.
/// `Debug` leaves the secret key out.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeysForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    /// A new name.
    #[serde(default)]
    name: String,
    /// A new `sk_…`, checked with Stripe: never shown back.
    #[serde(default)]
    secret_key: String,
    /// A new `pk_…`.
    #[serde(default)]
    publishable_key: String,
}

impl std::fmt::Debug for KeysForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeysForm")
            .field("name", &self.name)
            .field("publishable_key", &self.publishable_key)
            .finish_non_exhaustive()
    }
}

/// What the page shows besides the list: what was just done, why a post was refused, and the
/// connection forms' values (never a secret) and errors.
#[derive(Default)]
pub(super) struct Shown {
    /// What was just done.
    pub(super) done: Option<String>,
    /// Why the post was refused, above the list.
    pub(super) error: Option<String>,
    /// The name typed.
    pub(super) name: String,
    /// The publishable key typed.
    pub(super) publishable_key: String,
    /// Whether "make default" was ticked.
    pub(super) make_default: bool,
    /// Each field's error.
    pub(super) errors: BTreeMap<String, String>,
    /// The SEPA form's values, by field name.
    pub(super) sepa_form: BTreeMap<String, String>,
    /// The SEPA form's errors, by field name.
    pub(super) sepa_errors: BTreeMap<String, String>,
}

/// A processor as the page shows it; `first_card` is the first sandbox card gateway, which
/// stands for the sandbox set.
fn processor_view(t: &BTreeMap<String, String>, p: Processor, first_card: Option<i64>) -> Value {
    let kind = match p.kind {
        Kind::SandboxCard => "dash_processor_kind_sandbox_card",
        Kind::SandboxAlternative => "dash_processor_kind_sandbox_alternative",
        Kind::Stripe => "dash_processor_kind_stripe",
        Kind::SepaDebit => "dash_processor_kind_sepa_debit",
    };
    let stands_for_sandbox = first_card == Some(p.processor_id);
    context! {
        id => p.processor_id,
        name => p.name,
        kind => p.kind.as_str(),
        kind_label => t.get(kind),
        default => p.default,
        stands_for_sandbox => stands_for_sandbox,
        can_default => !p.default && (p.kind == Kind::Stripe || stands_for_sandbox),
        removable => matches!(p.kind, Kind::Stripe | Kind::SepaDebit),
        created => p.created_at.map(format_utc),
        stripe => p.stripe.map(|s| context! {
            live => s.live,
            last4 => s.secret_key_last4,
            publishable_key => s.publishable_key,
            webhook_url => s.webhook_url,
        }),
        sepa => p.sepa.map(|c| context! {
            creditor_id => c.creditor_id,
            creditor_name => c.creditor_name,
            iban => c.iban,
            bic => c.bic,
            lead_days => c.lead_days,
        }),
    }
}

/// The page with the merchant's processors and `shown`, answered with `status`.
pub(super) async fn list_page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    shown: Shown,
) -> Result<Response, PageError> {
    let listed = processors::list(state, staff.merchant.id).await?;
    let first_card = listed
        .iter()
        .find(|p| p.kind == Kind::SandboxCard)
        .map(|p| p.processor_id);
    let rows: Vec<Value> = listed
        .into_iter()
        .map(|p| processor_view(t, p, first_card))
        .collect();
    framed_with_status(
        state,
        staff,
        t,
        status,
        "dashboard/processors.html",
        "processors",
        context! {
            processors => rows,
            done => shown.done,
            error => shown.error,
            form => context! {
                name => shown.name,
                publishable_key => shown.publishable_key,
                make_default => shown.make_default,
            },
            errors => shown.errors,
            sepa_form => shown.sepa_form,
            sepa_errors => shown.sepa_errors,
        },
    )
}

/// Back to the page, telling what was `done` (one of [`DONE`]).
pub(super) fn done(what: &str) -> Response {
    Redirect::to(&format!("{PAGE}?done={what}")).into_response()
}

/// `GET /dashboard/processors?done=`.
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let done = param(query.as_deref().unwrap_or_default(), "done")
        .filter(|d| DONE.contains(&d.as_str()))
        .and_then(|d| t.get(&format!("dash_processor_done_{d}")).cloned());
    let shown = Shown {
        done,
        ..Shown::default()
    };
    list_page(&state, &staff, t, StatusCode::OK, shown).await
}

/// `POST /dashboard/processors` (`name`, `secretKey`, `publishableKey`, `webhookSecret`,
/// `default` = `true` when ticked): connects the Stripe account once Stripe took its key, and
/// goes back to the page (303); else the form again, without its secrets, with each field's
/// error (400: a key of the wrong shape or mode, a key Stripe refused), or why nothing was
/// stored (503 Stripe out of reach, 409 the limit).
pub async fn connect(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<ConnectForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let (status, error, errors) =
        match processors::connect(&state, staff.merchant.id, form.new_stripe()).await {
            Ok(_) => return Ok(done("connected")),
            Err(ServiceError::Validation(errors)) => {
                (StatusCode::BAD_REQUEST, None, beside(errors))
            }
            Err(ServiceError::Unavailable(why)) => {
                (StatusCode::SERVICE_UNAVAILABLE, Some(why), BTreeMap::new())
            }
            Err(ServiceError::Conflict(why)) => (StatusCode::CONFLICT, Some(why), BTreeMap::new()),
            Err(other) => return Err(other.into()),
        };
    let shown = Shown {
        done: None,
        error: error.map(|why| form.without_secrets(&why)),
        errors: errors
            .into_iter()
            .map(|(field, message)| (field, form.without_secrets(&message)))
            .collect(),
        make_default: form.default.trim() == "true",
        name: form.name,
        publishable_key: form.publishable_key,
        ..Shown::default()
    };
    list_page(&state, &staff, t, status, shown).await
}

/// The processor id of a path; not a number is no processor of the merchant.
fn processor_id(text: &str) -> Result<i64, ServiceError> {
    text.parse().map_err(|_| ServiceError::NotFound)
}

/// `POST /dashboard/processors/{paymentProcessorId}/default`: makes the processor the default
/// card processor (a Stripe account, or the first sandbox card gateway for the sandbox set) and
/// goes back to the page; a processor that cannot be the default is refused with the reason
/// (400).
pub async fn make_default(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let change = ProcessorChange {
        default: Field::Present(true),
        ..ProcessorChange::default()
    };
    apply(&state, &staff, t, &id, change, "default", "").await
}

/// `POST /dashboard/processors/{paymentProcessorId}/webhook-secret` (`webhookSecret`): replaces
/// a Stripe account's webhook signing secret (the one of the endpoint added in Stripe's
/// dashboard at the URL the page shows) and goes back to the page; a secret of the wrong shape
/// is refused with the reason (400), never with the secret.
pub async fn replace_webhook_secret(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    PageForm(form): PageForm<SecretForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let change = ProcessorChange {
        webhook_secret: fields::text(&form.webhook_secret),
        ..ProcessorChange::default()
    };
    let secret = form.webhook_secret.trim();
    apply(&state, &staff, t, &id, change, "secret", secret).await
}

/// `POST /dashboard/processors/{paymentProcessorId}/keys` (`name`, `secretKey`,
/// `publishableKey`; blank keeps what is stored): renames a Stripe account or replaces its keys
/// (a new secret key is checked with Stripe as on connecting) and goes back to the page; a
/// refused field is said with the reason (400, never with the key), Stripe out of reach too
/// (503, nothing changed).
pub async fn change_keys(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    PageForm(form): PageForm<KeysForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let change = ProcessorChange {
        name: fields::text(&form.name),
        secret_key: fields::text(&form.secret_key),
        publishable_key: fields::text(&form.publishable_key),
        ..ProcessorChange::default()
    };
    let secret = form.secret_key.trim();
    apply(&state, &staff, t, &id, change, "changed", secret).await
}

/// Applies `change` to the processor of the path's `id` and goes back to the page saying
/// `done`; a refused change shows the page with the reason (400, `secret` blanked out of it),
/// Stripe out of reach too (503), another merchant's processor the 404 page.
async fn apply(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    id: &str,
    change: ProcessorChange,
    done_what: &str,
    secret: &str,
) -> Result<Response, PageError> {
    let result = match processor_id(id) {
        Ok(id) => processors::change(state, staff.merchant.id, id, change).await,
        Err(error) => Err(error),
    };
    let (status, why) = match result {
        Ok(_) => return Ok(done(done_what)),
        Err(ServiceError::NotFound) => return notice::not_found(state, t),
        Err(ServiceError::Validation(errors)) => {
            let why: Vec<String> = beside(errors).into_values().collect();
            (StatusCode::BAD_REQUEST, why.join("; "))
        }
        Err(ServiceError::Unavailable(why)) => (StatusCode::SERVICE_UNAVAILABLE, why),
        Err(other) => return Err(other.into()),
    };
    let why = if secret.is_empty() {
        why
    } else {
        why.replace(secret, "…")
    };
    let shown = Shown {
        error: Some(why),
        ..Shown::default()
    };
    list_page(state, staff, t, status, shown).await
}

/// The kind of the merchant's processor `id` when it can be removed: a Stripe account or a
/// SEPA processor (the sandbox set is not removed).
async fn removable(
    state: &AppState,
    merchant_id: i64,
    id: &str,
) -> Result<Option<Kind>, PageError> {
    let Ok(id) = processor_id(id) else {
        return Ok(None);
    };
    match processors::get(state, merchant_id, id).await {
        Ok(p) => Ok(matches!(p.kind, Kind::Stripe | Kind::SepaDebit).then_some(p.kind)),
        Err(ServiceError::NotFound) => Ok(None),
        Err(other) => Err(other.into()),
    }
}

/// `GET /dashboard/processors/{paymentProcessorId}/remove`: asks to confirm the removal, in
/// the words of the processor's kind. A sandbox processor or another merchant's processor is
/// the 404 page.
pub async fn confirm_remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(kind) = removable(&state, staff.merchant.id, &id).await? else {
        return notice::not_found(&state, t);
    };
    let prefix = match kind {
        Kind::SepaDebit => "dash_sepa_remove",
        _ => "dash_processor_remove",
    };
    let (title, text, button) = (
        format!("{prefix}_title"),
        format!("{prefix}_text"),
        format!("{prefix}_button"),
    );
    let confirm = Confirm {
        nav: "processors",
        title: &title,
        text: &text,
        button: &button,
        action: format!("{PAGE}/{id}/remove"),
        field: None,
    };
    confirm::page(&state, &staff, t, PAGE, confirm)
}

/// `POST /dashboard/processors/{paymentProcessorId}/remove`: disconnects the Stripe account or
/// SEPA processor and goes back to the page; refused with the reason (409) while a customer's
/// payment method (a card, a mandate) is held by it. A sandbox processor or another merchant's
/// processor is the 404 page.
pub async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let Some(kind) = removable(&state, staff.merchant.id, &id).await? else {
        return notice::not_found(&state, t);
    };
    let result = match processor_id(&id) {
        Ok(id) => processors::disconnect(&state, staff.merchant.id, id).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(()) if kind == Kind::SepaDebit => Ok(done("removed_sepa")),
        Ok(()) => Ok(done("removed")),
        Err(ServiceError::NotFound) => notice::not_found(&state, t),
        Err(ServiceError::Conflict(why)) => {
            let told = Outcome {
                nav: "processors",
                back: PAGE,
                back_label: "dash_back_to_processors",
                outcome: "refused",
                text: why.into(),
                secret: None,
            };
            confirm::outcome(&state, &staff, t, StatusCode::CONFLICT, told)
        }
        Err(other) => Err(other.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_apis_body_and_keeps_its_secrets_out_of_messages() {
        let form = ConnectForm {
            name: " Stripe EU ".into(),
            secret_key: " sk_test_51Secret ".into(),
            webhook_secret: "whsec_Secret".into(),
            default: "true".into(),
            ..ConnectForm::default()
        };
        let new = form.new_stripe();
        assert!(matches!(new.kind, Field::Present(k) if k == "stripe"));
        assert!(matches!(new.name, Field::Present(n) if n == "Stripe EU"));
        assert!(matches!(new.secret_key, Field::Present(k) if k == "sk_test_51Secret"));
        assert!(matches!(new.publishable_key, Field::Absent));
        assert!(matches!(new.default, Field::Present(true)));
        let odd = ConnectForm {
            default: "on".into(),
            ..ConnectForm::default()
        };
        assert!(matches!(odd.new_stripe().default, Field::Invalid(_)));
        assert!(matches!(
            ConnectForm::default().new_stripe().default,
            Field::Absent
        ));

        let quoted = "Invalid API Key provided: sk_test_51Secret (whsec_Secret)";
        assert_eq!(
            form.without_secrets(quoted),
            "Invalid API Key provided: … (…)"
        );
        assert_eq!(ConnectForm::default().without_secrets("as is"), "as is");
        let debug = format!("{form:?}");
        assert!(!debug.contains("Secret"), "{debug}");
    }
}
