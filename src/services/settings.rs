//! The merchant's settings (DESIGN §13), for the API (`/merchant/settings`) and the dashboard's
//! settings page alike. A change merges: a field left out keeps its value, `null` unsets it, a
//! value replaces it once its rule accepts it. Hosted pages, customer e-mails and invoices use
//! them; the portal's price switch follows `portalPlanChange`.

use recur_domain::settings::{
    self as rules, MAX_DISPLAY_NAME_CHARS, MAX_LEGAL_NAME_CHARS, MAX_TAX_ID_CHARS,
};
use recur_domain::validation::{self, FieldErrors};

use super::ServiceError;
use crate::http::input::Field;
use crate::state::AppState;
use crate::store::merchant_settings::{self, Change, Named, Patch};

/// A change of the settings as given: absent, keep; `null`, unset (`displayName`,
/// `invoicePrefix` and `portalPlanChange` then show their defaults); a value, check and set.
#[derive(Debug, Default)]
pub struct SettingsChange {
    /// The name customers see: one line of at most [`MAX_DISPLAY_NAME_CHARS`].
    pub display_name: Field<String>,
    /// The registered company name: one line of at most [`MAX_LEGAL_NAME_CHARS`].
    pub legal_name: Field<String>,
    /// The postal address, in lines.
    pub address: Field<String>,
    /// ISO 3166-1 alpha-2 country code.
    pub country: Field<String>,
    /// The tax id: one line of at most [`MAX_TAX_ID_CHARS`].
    pub tax_id: Field<String>,
    /// Where customers' questions go.
    pub support_email: Field<String>,
    /// The accent colour of hosted pages, `#RRGGBB`.
    pub brand_color: Field<String>,
    /// The logo on hosted pages (absolute HTTPS).
    pub logo_url: Field<String>,
    /// The prefix of invoice numbers.
    pub invoice_prefix: Field<String>,
    /// `now` or `nextPeriod`.
    pub portal_plan_change: Field<String>,
}

/// The merchant's settings, with its name.
pub async fn settings(state: &AppState, merchant_id: i64) -> Result<Named, ServiceError> {
    merchant_settings::with_name(state.store.pool(), merchant_id)
        .await?
        .ok_or(ServiceError::NotFound)
}

/// Applies the change `given` to the merchant's settings in one transaction (the upsert; nothing when it
/// changes nothing) and returns them as they then are. Every failing field is listed, under its
/// JSON name; nothing is changed then.
pub async fn update(
    state: &AppState,
    merchant_id: i64,
    given: SettingsChange,
) -> Result<Named, ServiceError> {
    let patch = read(given)?;
    if patch.is_empty() {
        return settings(state, merchant_id).await;
    }
    let mut tx = state.store.begin().await?;
    merchant_settings::update(&mut tx, merchant_id, &patch, state.clock.now()).await?;
    let named = merchant_settings::with_name(&mut *tx, merchant_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    tx.commit().await?;
    Ok(named)
}

/// The patch `given` asks for, checked field by field: every failing field is listed.
fn read(given: SettingsChange) -> Result<Patch, ServiceError> {
    let mut errors = FieldErrors::new();
    let e = &mut errors;
    let patch = Patch {
        display_name: change(given.display_name, "displayName", e, |v| {
            rules::single_line(v, MAX_DISPLAY_NAME_CHARS)
        }),
        legal_name: change(given.legal_name, "legalName", e, |v| {
            rules::single_line(v, MAX_LEGAL_NAME_CHARS)
        }),
        address: change(given.address, "address", e, rules::address),
        country: change(given.country, "country", e, validation::country_code),
        tax_id: change(given.tax_id, "taxId", e, |v| {
            rules::single_line(v, MAX_TAX_ID_CHARS)
        }),
        support_email: change(given.support_email, "supportEmail", e, validation::email),
        brand_color: change(given.brand_color, "brandColor", e, rules::brand_color),
        logo_url: change(given.logo_url, "logoUrl", e, rules::logo_url),
        invoice_prefix: change(
            given.invoice_prefix,
            "invoicePrefix",
            e,
            rules::invoice_prefix,
        ),
        portal_plan_change: change(
            given.portal_plan_change,
            "portalPlanChange",
            e,
            rules::portal_plan_change,
        ),
    };
    if errors.is_empty() {
        Ok(patch)
    } else {
        Err(ServiceError::Validation(errors))
    }
}

/// What a change asks of one field: left out, keep it; `null`, unset it; a value, set it once
/// `rule` accepts it (a refusal, or a value of the wrong type, is reported under `path`).
fn change(
    field: Field<String>,
    path: &str,
    errors: &mut FieldErrors,
    rule: impl FnOnce(&str) -> Result<String, String>,
) -> Change {
    match field {
        Field::Absent => Change::Keep,
        Field::Null => Change::Clear,
        Field::Invalid(message) => {
            errors.add(path, message);
            Change::Keep
        }
        Field::Present(text) => errors
            .check(path, rule(&text))
            .map_or(Change::Keep, Change::Set),
    }
}
