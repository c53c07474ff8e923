//! The settings page: the merchant's settings form, checked and saved by the service of
//! `PUT /merchant/settings` ([`settings`]): the same rules and the same upsert. Every field is posted: a blank one unsets the setting (`null` in the API), so the
//! defaults show again (the merchant's name, `INV`). `portalPlanChange` is a choice of its
//! values, showing the default (`now`) when unset. Each field's error is shown beside it.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::settings::PortalPlanChange;
use serde::Deserialize;

use super::staff::Staff;
use super::{framed, staff};
use crate::http::input::Field;
use crate::pages::brand::Brand;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::render::with_status;
use crate::pages::session;
use crate::services::settings::{self, SettingsChange};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::merchant_settings::Settings;

/// The form as posted; a field left out of the post counts as blank.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    legal_name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    country: String,
    #[serde(default)]
    tax_id: String,
    #[serde(default)]
    support_email: String,
    #[serde(default)]
    brand_color: String,
    #[serde(default)]
    logo_url: String,
    #[serde(default)]
    invoice_prefix: String,
    #[serde(default)]
    portal_plan_change: String,
}

impl SettingsForm {
    /// The form filled with the stored `settings` (unset ones blank, but for the choice of
    /// `portalPlanChange`, which shows its default).
    fn of(settings: Settings) -> Self {
        Self {
            portal_plan_change: settings.portal_plan_change().as_str().to_string(),
            csrf_token: String::new(),
            display_name: settings.display_name.unwrap_or_default(),
            legal_name: settings.legal_name.unwrap_or_default(),
            address: settings.address.unwrap_or_default(),
            country: settings.country.unwrap_or_default(),
            tax_id: settings.tax_id.unwrap_or_default(),
            support_email: settings.support_email.unwrap_or_default(),
            brand_color: settings.brand_color.unwrap_or_default(),
            logo_url: settings.logo_url.unwrap_or_default(),
            invoice_prefix: settings.invoice_prefix.unwrap_or_default(),
        }
    }

    /// The fields in the form's order: `(JSON name, value)`.
    fn fields(&self) -> [(&'static str, &str); 10] {
        [
            ("displayName", &self.display_name),
            ("legalName", &self.legal_name),
            ("address", &self.address),
            ("country", &self.country),
            ("taxId", &self.tax_id),
            ("supportEmail", &self.support_email),
            ("brandColor", &self.brand_color),
            ("logoUrl", &self.logo_url),
            ("invoicePrefix", &self.invoice_prefix),
            ("portalPlanChange", &self.portal_plan_change),
        ]
    }

    /// The change it asks for: every field set, a blank one unset.
    fn change(&self) -> SettingsChange {
        let field = |text: &str| {
            if text.trim().is_empty() {
                Field::Null
            } else {
                Field::Present(text.to_string())
            }
        };
        SettingsChange {
            display_name: field(&self.display_name),
            legal_name: field(&self.legal_name),
            address: field(&self.address),
            country: field(&self.country),
            tax_id: field(&self.tax_id),
            support_email: field(&self.support_email),
            brand_color: field(&self.brand_color),
            logo_url: field(&self.logo_url),
            invoice_prefix: field(&self.invoice_prefix),
            portal_plan_change: field(&self.portal_plan_change),
        }
    }
}

/// The settings page showing `form`, each field's error from `errors` beside it, and whether
/// the settings were just `saved`.
fn settings_page(
    state: &AppState,
    staff: &staff::Staff,
    t: &BTreeMap<String, String>,
    form: &SettingsForm,
    errors: &BTreeMap<String, Vec<String>>,
    saved: bool,
) -> Result<Response, PageError> {
    let fields: Vec<Value> = form
        .fields()
        .into_iter()
        .map(|(name, value)| {
            let options = (name == "portalPlanChange").then(|| plan_change_options(t, value));
            context! {
                name => name,
                label => t.get(&format!("settings_{name}")),
                value => value,
                multiline => name == "address",
                options => options,
                error => errors.get(name).map(|messages| messages.join("; ")),
            }
        })
        .collect();
    framed(
        state,
        staff,
        t,
        "dashboard/settings.html",
        "settings",
        context! { fields => fields, saved => saved, merchant_name => staff.merchant.name },
    )
}

/// The choices of `portalPlanChange`, the one matching `value` selected.
fn plan_change_options(t: &BTreeMap<String, String>, value: &str) -> Vec<Value> {
    PortalPlanChange::ALL
        .into_iter()
        .map(|choice| {
            let name = choice.as_str();
            context! {
                value => name,
                label => t.get(&format!("settings_portalPlanChange_{name}")),
                selected => name == value,
            }
        })
        .collect()
}

/// `GET /dashboard/settings`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let named = settings::settings(&state, staff.merchant.id).await?;
    let form = SettingsForm::of(named.settings);
    settings_page(&state, &staff, t, &form, &BTreeMap::new(), false)
}

/// `POST /dashboard/settings`: saves the form, or shows it again with each field's error
/// (400; nothing is changed then).
pub async fn save(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SettingsForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    match settings::update(&state, staff.merchant.id, form.change()).await {
        Ok(named) => {
            // The frame shows the display name just saved.
            let staff = staff::Staff {
                brand: Brand::load(&state, &staff.merchant).await?,
                ..staff
            };
            let saved = SettingsForm::of(named.settings);
            settings_page(&state, &staff, t, &saved, &BTreeMap::new(), true)
        }
        Err(ServiceError::Validation(errors)) => {
            let page = settings_page(&state, &staff, t, &form, errors.as_map(), false)?;
            Ok(with_status(page, StatusCode::BAD_REQUEST))
        }
        Err(other) => Err(other.into()),
    }
}
