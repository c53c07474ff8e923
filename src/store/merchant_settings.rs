//! The `merchant_settings` table: a merchant's display name, legal details, support e-mail,
//! branding and how the portal switches prices (DESIGN §13), one row per merchant, written by its first update. A merchant without
//! a row has every field unset.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use recur_domain::settings::{PortalPlanChange, DEFAULT_INVOICE_PREFIX};
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Tx};

/// A merchant's settings as stored: `None` is unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// The name customers see; unset: the merchant's name ([`Settings::display_name_or`]).
    pub display_name: Option<String>,
    /// The registered name, for invoices.
    pub legal_name: Option<String>,
    /// The postal address, lines separated by `\n`.
    pub address: Option<String>,
    /// ISO 3166-1 alpha-2, uppercase.
    pub country: Option<String>,
    /// The merchant's tax id (VAT number and the like), as given.
    pub tax_id: Option<String>,
    /// Where customers' questions go: the Reply-To of customer e-mails.
    pub support_email: Option<String>,
    /// The accent of hosted pages, `#RRGGBB` uppercase.
    pub brand_color: Option<String>,
    /// The logo on hosted pages: an absolute `https://` URL.
    pub logo_url: Option<String>,
    /// Invoice numbers' prefix; unset: [`DEFAULT_INVOICE_PREFIX`] ([`Settings::invoice_prefix`]).
    pub invoice_prefix: Option<String>,
    /// When a price switch in the portal applies, `now` or `nextPeriod`; unset: `now`
    /// ([`Settings::portal_plan_change`]).
    pub portal_plan_change: Option<String>,
    /// When they were last changed; `None` before the first change.
    pub updated_at: Option<DateTime<Utc>>,
}

impl Settings {
    /// The name customers see: the display name, or `merchant_name` when it is unset.
    pub fn display_name_or<'a>(&'a self, merchant_name: &'a str) -> &'a str {
        self.display_name.as_deref().unwrap_or(merchant_name)
    }

    /// The seller's name on invoices: the legal name, or the name customers see
    /// ([`Settings::display_name_or`]) when it is unset.
    pub fn legal_name_or<'a>(&'a self, merchant_name: &'a str) -> &'a str {
        self.legal_name
            .as_deref()
            .unwrap_or_else(|| self.display_name_or(merchant_name))
    }

    /// The postal address's lines, then the country, as invoices and e-mails print them; empty
    /// when neither is set.
    pub fn address_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .address
            .iter()
            .flat_map(|a| a.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        lines.extend(self.country.clone());
        lines
    }

    /// The prefix of invoice numbers: the merchant's, or [`DEFAULT_INVOICE_PREFIX`].
    pub fn invoice_prefix(&self) -> &str {
        self.invoice_prefix
            .as_deref()
            .unwrap_or(DEFAULT_INVOICE_PREFIX)
    }

    /// When a price switch in the portal applies: the merchant's choice, or
    /// [`PortalPlanChange::Now`] (stored values were checked on the way in).
    pub fn portal_plan_change(&self) -> PortalPlanChange {
        self.portal_plan_change
            .as_deref()
            .and_then(|value| PortalPlanChange::parse(value).ok())
            .unwrap_or_default()
    }
}

/// A merchant's settings with its name, which the display name falls back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The merchant's name (`merchants.name`).
    pub merchant_name: String,
    /// Its settings.
    pub settings: Settings,
}

impl Named {
    /// The name customers see.
    pub fn display_name(&self) -> &str {
        self.settings.display_name_or(&self.merchant_name)
    }
}

/// What an update does to one field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Change {
    /// Leaves it as it is.
    #[default]
    Keep,
    /// Unsets it.
    Clear,
    /// Sets it to this (checked) value.
    Set(String),
}

/// An update of a merchant's settings, field by field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// `display_name`.
    pub display_name: Change,
    /// `legal_name`.
    pub legal_name: Change,
    /// `address`.
    pub address: Change,
    /// `country`.
    pub country: Change,
    /// `tax_id`.
    pub tax_id: Change,
    /// `support_email`.
    pub support_email: Change,
    /// `brand_color`.
    pub brand_color: Change,
    /// `logo_url`.
    pub logo_url: Change,
    /// `invoice_prefix`.
    pub invoice_prefix: Change,
    /// `portal_plan_change`.
    pub portal_plan_change: Change,
}

impl Patch {
    /// The changes in the order of [`FIELDS`].
    fn changes(&self) -> [&Change; 10] {
        [
            &self.display_name,
            &self.legal_name,
            &self.address,
            &self.country,
            &self.tax_id,
            &self.support_email,
            &self.brand_color,
            &self.logo_url,
            &self.invoice_prefix,
            &self.portal_plan_change,
        ]
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changes().iter().all(|c| **c == Change::Keep)
    }
}

/// The settings columns, in the order of [`Settings`] and [`Patch::changes`].
const FIELDS: [&str; 10] = [
    "display_name",
    "legal_name",
    "address",
    "country",
    "tax_id",
    "support_email",
    "brand_color",
    "logo_url",
    "invoice_prefix",
    "portal_plan_change",
];

type SettingsRow = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

fn from_row(row: SettingsRow) -> Settings {
    let (
        display_name,
        legal_name,
        address,
        country,
        tax_id,
        support_email,
        brand,
        logo,
        prefix,
        plan_change,
        at,
    ) = row;
    Settings {
        display_name,
        legal_name,
        address,
        country,
        tax_id,
        support_email,
        brand_color: brand,
        logo_url: logo,
        invoice_prefix: prefix,
        portal_plan_change: plan_change,
        updated_at: at.map(from_micros),
    }
}

/// `s.display_name, …, s.updated_at`.
fn columns(alias: &str) -> String {
    FIELDS
        .iter()
        .chain(["updated_at"].iter())
        .map(|column| format!("{alias}.{column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The settings of `merchant_id`; all unset when it has none.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Settings, sqlx::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {} FROM merchant_settings s WHERE s.merchant_id = $1",
            columns("s")
        )
    });
    let row: Option<SettingsRow> = sqlx::query_as(&SQL)
        .bind(merchant_id)
        .fetch_optional(executor)
        .await?;
    Ok(row.map(from_row).unwrap_or_default())
}

/// The settings of `merchant_id` with its name, in one statement; `None` when there is no such
/// merchant.
pub async fn with_name<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Option<Named>, sqlx::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT m.name, {} FROM merchants m \
             LEFT JOIN merchant_settings s ON s.merchant_id = m.id WHERE m.id = $1",
            columns("s")
        )
    });
    let row: Option<sqlx::any::AnyRow> = sqlx::query(&SQL)
        .bind(merchant_id)
        .fetch_optional(executor)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let text = |at: usize| row.try_get::<Option<String>, _>(at);
    let settings = from_row((
        text(1)?,
        text(2)?,
        text(3)?,
        text(4)?,
        text(5)?,
        text(6)?,
        text(7)?,
        text(8)?,
        text(9)?,
        text(10)?,
        row.try_get(11)?,
    ));
    Ok(Some(Named {
        merchant_name: row.try_get(0)?,
        settings,
    }))
}

/// Applies `patch` to the settings of `merchant_id` at `now`, in one statement: the row is
/// created by the first update (fields the patch keeps start unset), and each later update
/// changes only the fields it names, so concurrent updates of different fields both hold.
pub async fn update(
    tx: &mut Tx,
    merchant_id: i64,
    patch: &Patch,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    // $1 merchant, then one value per field, the time, and one flag per field (whether it
    // changes): $2..$11, $12, $13..$22.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let values: Vec<String> = (2..=FIELDS.len() + 2).map(|n| format!("${n}")).collect();
        let updates: Vec<String> = FIELDS
            .iter()
            .enumerate()
            .map(|(i, column)| {
                format!(
                    "{column} = CASE WHEN ${} = 1 THEN excluded.{column} \
                     ELSE merchant_settings.{column} END",
                    i + FIELDS.len() + 3
                )
            })
            .collect();
        format!(
            "INSERT INTO merchant_settings (merchant_id, {}, updated_at) VALUES ($1, {}) \
             ON CONFLICT (merchant_id) DO UPDATE SET {}, updated_at = excluded.updated_at",
            FIELDS.join(", "),
            values.join(", "),
            updates.join(", ")
        )
    });
    let mut query = sqlx::query(&SQL).bind(merchant_id);
    for change in patch.changes() {
        query = query.bind(match change {
            Change::Set(value) => Some(value.clone()),
            Change::Keep | Change::Clear => None,
        });
    }
    query = query.bind(to_micros(now));
    for change in patch.changes() {
        query = query.bind(i64::from(*change != Change::Keep));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
