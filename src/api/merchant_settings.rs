//! The merchant's settings (DESIGN §13): `GET` and `PUT /merchant/settings`. A `PUT` merges:
//! a field left out keeps its value, `null` unsets it, a value replaces it; the answer is the
//! whole settings. Hosted pages, customer e-mails and (with issue 31) invoices use them; the
//! portal's price switch follows `portalPlanChange`. The operations are
//! [`crate::services::settings`].

use axum::extract::State;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{BrandColor, CountryCode, HttpsUrl, InvoicePrefix, PlanChange};
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::settings::{self, SettingsChange};
use crate::state::AppState;
use crate::store::merchant_settings::Named;

/// Body of `PUT /merchant/settings`: every field optional. Left out: unchanged; `null`: unset
/// (`displayName`, `invoicePrefix` and `portalPlanChange` then show their defaults); a value:
/// checked and set.
/// Fields the API does not know are ignored, as in every body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsUpdate {
    /// The name customers see on hosted pages and in e-mails: 1–100 characters on one line.
    /// Unset, the merchant's name is shown.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100, example = "Acme Coffee")]
    pub display_name: Field<String>,
    /// The registered company name, for invoices: 1–200 characters on one line.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 200, example = "Acme Coffee GmbH")]
    pub legal_name: Field<String>,
    /// The postal address: 1–500 characters in at most 10 lines (`\n` or `\r\n`, answered as
    /// `\n`), no other control characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 500, example = "Main Street 1\n10115 Berlin")]
    pub address: Field<String>,
    /// The merchant's country (answered uppercase).
    #[serde(default)]
    #[schema(value_type = Option<CountryCode>)]
    pub country: Field<String>,
    /// The merchant's tax id (a VAT number, say), as written: 1–50 characters on one line.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 50, example = "DE123456789")]
    pub tax_id: Field<String>,
    /// Where customers' questions go (`name@domain.tld`): the Reply-To of customer e-mails,
    /// which also name it.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Email, example = "help@acme.example")]
    pub support_email: Field<String>,
    /// The accent colour of hosted pages (buttons, links).
    #[serde(default)]
    #[schema(value_type = Option<BrandColor>)]
    pub brand_color: Field<String>,
    /// The logo on hosted pages, at most 2048 characters; the pages' policy lets images load
    /// from its origin.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub logo_url: Field<String>,
    /// The prefix of invoice numbers. Unset, `INV`.
    #[serde(default)]
    #[schema(value_type = Option<InvoicePrefix>)]
    pub invoice_prefix: Field<String>,
    /// When a price switch a customer makes in the portal applies: `now` (prorated, DESIGN §4)
    /// or `nextPeriod` (at the next renewal, without proration). Unset, `now`.
    #[serde(default)]
    #[schema(value_type = Option<PlanChange>)]
    pub portal_plan_change: Field<String>,
}

/// A merchant's settings, with the defaults in place of unset `displayName`, `invoicePrefix`
/// and `portalPlanChange`; other unset fields are `null`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsRecord {
    /// The name customers see: the merchant's own name until one is set.
    pub display_name: String,
    /// Registered company name.
    pub legal_name: Option<String>,
    /// Postal address, lines separated by `\n`.
    pub address: Option<String>,
    /// ISO 3166-1 alpha-2, uppercase.
    pub country: Option<String>,
    /// Tax id.
    pub tax_id: Option<String>,
    /// Support e-mail.
    pub support_email: Option<String>,
    /// `#RRGGBB`, uppercase.
    pub brand_color: Option<String>,
    /// Logo URL (absolute HTTPS).
    pub logo_url: Option<String>,
    /// Invoice number prefix: `INV` until one is set.
    pub invoice_prefix: String,
    /// When a price switch in the portal applies: `now` until one is set.
    #[schema(pattern = "^(now|nextPeriod)$", example = "now")]
    pub portal_plan_change: String,
    /// When the settings were last changed (UTC); `null` before the first change.
    pub updated_at: Option<String>,
}

impl From<Named> for SettingsRecord {
    fn from(named: Named) -> Self {
        let display_name = named.display_name().to_string();
        let s = named.settings;
        Self {
            display_name,
            invoice_prefix: s.invoice_prefix().to_string(),
            portal_plan_change: s.portal_plan_change().as_str().to_string(),
            legal_name: s.legal_name,
            address: s.address,
            country: s.country,
            tax_id: s.tax_id,
            support_email: s.support_email,
            brand_color: s.brand_color,
            logo_url: s.logo_url,
            updated_at: s.updated_at.map(format_utc),
        }
    }
}

/// The merchant's settings. A read API key may read them.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/merchant/settings",
    tag = "merchant",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The settings, defaults in place of unset displayName, invoicePrefix and portalPlanChange", body = SettingsRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_settings(
    State(state): State<AppState>,
    auth: AuthMerchant,
) -> Result<Json<SettingsRecord>, ApiError> {
    let named = settings::settings(&state, auth.merchant_id).await?;
    Ok(Json(named.into()))
}

/// Changes the fields the body names and answers the whole settings: a field left out is
/// unchanged, `null` unsets it. Every failing field is listed; nothing is changed then.
#[utoipa::path(
    put,
    path = "/api/subscriptions/v1/merchant/settings",
    tag = "merchant",
    request_body = SettingsUpdate,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The settings after the change", body = SettingsRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_settings(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<SettingsUpdate>,
) -> Result<Json<SettingsRecord>, ApiError> {
    let given = SettingsChange {
        display_name: body.display_name,
        legal_name: body.legal_name,
        address: body.address,
        country: body.country,
        tax_id: body.tax_id,
        support_email: body.support_email,
        brand_color: body.brand_color,
        logo_url: body.logo_url,
        invoice_prefix: body.invoice_prefix,
        portal_plan_change: body.portal_plan_change,
    };
    let named = settings::update(&state, auth.merchant_id, given).await?;
    Ok(Json(named.into()))
}
