//! Opening a cashier session for one order (`POST /api/payment/hosted-page`, DESIGN §6): the
//! order's rules, the signature check, the re-post rule and storing the session.
//!
//! The body's `signature` = SHA-256 hex of `email;timestamp;secret`, with `timestamp` within ±15
//! minutes of the server's time (400 otherwise, like every other field). The signature is made
//! with the merchant secret whichever credential the request carries.

use chrono::{DateTime, Duration, Utc};
use recur_domain::money::{self, Currency};
use recur_domain::signature::{constant_time_eq, hosted_page_signature};
use recur_domain::time::format_utc;
use recur_domain::validation::{self as rules, FieldErrors};
use rust_decimal::Decimal;
use serde::Serialize;

use crate::http::input::{optional_text, required_text, Field};
use crate::ids;
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::cashier_sessions::{self, NewCashierSession};
use crate::store::cashier_transactions::{self, TransactionKind};

/// Allowed distance between the request's `timestamp` and the server's time.
pub const TIMESTAMP_TOLERANCE: Duration = Duration::minutes(15);
/// How long a cashier session stays usable.
pub const SESSION_LIFETIME: Duration = Duration::hours(1);
/// Longest `cashierDescription`.
const MAX_DESCRIPTION: usize = 1024;

/// A session as the merchant asks for it.
#[derive(Debug, Default)]
pub struct NewSession {
    /// Unix epoch seconds, as a string or a JSON integer.
    pub timestamp: Field<serde_json::Value>,
    /// Hex SHA-256 (any case) of `<billingDetails.email>;<timestamp>;<merchant secret>`.
    pub signature: Field<String>,
    /// Absolute HTTPS URL receiving the transaction notifications.
    pub webhook_url: Field<String>,
    /// Where the customer goes after a successful payment.
    pub success_redirect_url: Field<String>,
    /// Where the customer goes after a failed payment.
    pub failed_redirect_url: Field<String>,
    /// The payer and the currency.
    pub billing_details: Field<BillingDetailsInput>,
    /// The merchant's order id, 1–255 characters.
    pub order_id: Field<String>,
    /// Processor ids hidden in the cashier.
    pub disabled_psp_ids: Field<Vec<i64>>,
    /// Only card processors.
    pub credit_card_only: Field<bool>,
    /// Shown in the cashier; at most 1024 characters.
    pub cashier_description: Field<String>,
    /// Payout mode: the customer receives money.
    pub is_pay_out: Field<bool>,
}

/// `billingDetails` as given.
#[derive(Debug, Default)]
pub struct BillingDetailsInput {
    /// Fixed amount; absent lets the customer choose.
    pub locked_amount: Field<Decimal>,
    /// First name, or full name when no last name is given; 1–100 characters.
    pub first_name: Field<String>,
    /// Last name, 1–100 characters.
    pub last_name: Field<String>,
    /// E-mail, `name@domain.tld`.
    pub email: Field<String>,
    /// Street.
    pub street: Field<String>,
    /// Region.
    pub region: Field<String>,
    /// City.
    pub city: Field<String>,
    /// ISO 3166-1 alpha-2 country of the payer.
    pub country: Field<String>,
    /// Postal code.
    pub zip_code: Field<String>,
    /// E.164 phone.
    pub phone: Field<String>,
    /// `YYYY-MM-dd`, from 1900-01-01 to today.
    pub date_of_birth: Field<String>,
    /// `Male` or `Female`, any letter case.
    pub gender: Field<String>,
    /// ISO 4217 currency of the order.
    pub currency: Field<String>,
}

/// The validated payer, as stored with the session (prefills the cashier).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Payer {
    first_name: String,
    last_name: Option<String>,
    email: String,
    street: Option<String>,
    region: Option<String>,
    city: Option<String>,
    country: String,
    zip_code: Option<String>,
    phone: String,
    date_of_birth: Option<String>,
    gender: Option<String>,
}

/// Opens a cashier session for the merchant's order, `secret` being the merchant secret the
/// `signature` is checked with, and answers its `redirectUrl`
/// (`{cashier}/cashier?sessionToken=hp-…&m_orderId=…`). A repeated `orderId` whose session is
/// still open answers that session's address again when every value is the same, and is a
/// conflict on `orderId` when any differs; after it expired, a new session is opened; an order
/// that was paid (or paid out) is final and refused.
pub async fn open_session(
    state: &AppState,
    merchant_id: i64,
    secret: &str,
    new: NewSession,
) -> Result<String, ServiceError> {
    let now = state.clock.now();
    let session = validate(new, secret, now, state.config.webhooks.allow_private)?;
    for kind in [TransactionKind::PayIn, TransactionKind::PayOut] {
        if cashier_transactions::latest_success(
            state.store.pool(),
            merchant_id,
            &session.order_id,
            kind,
        )
        .await?
        .is_some()
        {
            return Err(ServiceError::invalid(
                "orderId",
                "was already paid; use a new order id",
            ));
        }
    }
    let mut tx = state.store.begin().await?;
    let token = match cashier_sessions::open_for_order(&mut tx, merchant_id, &session.order_id, now)
        .await?
    {
        Some(open) => {
            let changed = changed_fields(&open.fields, &session);
            if !changed.is_empty() {
                let mut errors = FieldErrors::new();
                errors.add(
                    "orderId",
                    format!(
                        "has an open session with other values ({}) until {}; send the \
                             same values, or a new order id",
                        changed.join(", "),
                        format_utc(open.expires_at)
                    ),
                );
                return Err(ServiceError::FieldConflict(errors));
            }
            state.keys.open(&open.token_sealed)?
        }
        None => {
            let token = ids::prefixed("hp-", 32);
            cashier_sessions::insert(
                &mut tx,
                merchant_id,
                &session,
                &state.keys.lookup_digest(&token),
                &state.keys.seal(&token),
                now,
                now + SESSION_LIFETIME,
            )
            .await?;
            token
        }
    };
    tx.commit().await?;
    let mut redirect =
        url::Url::parse(&format!("{}/cashier", state.public_url)).map_err(anyhow::Error::from)?;
    redirect
        .query_pairs_mut()
        .append_pair("sessionToken", &token)
        .append_pair("m_orderId", &session.order_id);
    Ok(redirect.into())
}

/// Checks the input and its signature; `allow_private`: the operator lets webhooks reach
/// internal addresses.
fn validate(
    body: NewSession,
    secret: &str,
    now: DateTime<Utc>,
    allow_private: bool,
) -> Result<NewCashierSession, ServiceError> {
    let mut errors = FieldErrors::new();
    let timestamp = body
        .timestamp
        .required("timestamp", &mut errors)
        .and_then(|value| errors.check("timestamp", epoch_text(&value)));
    let signature = body.signature.required("signature", &mut errors);
    let webhook_url = optional_text(body.webhook_url, "webhookUrl", &mut errors, |url| {
        rules::webhook_url(url, allow_private)
    });
    let success_redirect_url = optional_text(
        body.success_redirect_url,
        "successRedirectUrl",
        &mut errors,
        rules::web_url,
    );
    let failed_redirect_url = optional_text(
        body.failed_redirect_url,
        "failedRedirectUrl",
        &mut errors,
        rules::web_url,
    );
    let order_id = required_text(body.order_id, "orderId", &mut errors, |v| {
        rules::bounded_text(v, 255)
    });
    let mut disabled_psp_ids = body
        .disabled_psp_ids
        .optional("disabledPspIds", &mut errors)
        .unwrap_or_default();
    // A set of ids: kept in one order, so that a repeated session compares equal.
    disabled_psp_ids.sort_unstable();
    disabled_psp_ids.dedup();
    let credit_card_only = body
        .credit_card_only
        .optional("creditCardOnly", &mut errors)
        .unwrap_or(false);
    let is_payout = body
        .is_pay_out
        .optional("isPayOut", &mut errors)
        .unwrap_or(false);
    let cashier_description = optional_text(
        body.cashier_description,
        "cashierDescription",
        &mut errors,
        |v| {
            if v.chars().count() > MAX_DESCRIPTION {
                Err(format!("must be at most {MAX_DESCRIPTION} characters"))
            } else {
                Ok(v.to_string())
            }
        },
    );
    let billing = body
        .billing_details
        .required("billingDetails", &mut errors)
        .and_then(|details| billing_details(details, now, &mut errors));

    if let (Some(timestamp), Some(signature), Some((payer, _, _))) =
        (&timestamp, &signature, &billing)
    {
        let expected = hosted_page_signature(&payer.email, timestamp, secret);
        if !constant_time_eq(
            expected.as_bytes(),
            signature.to_ascii_lowercase().as_bytes(),
        ) {
            errors.add(
                "signature",
                "does not match SHA-256 of email;timestamp;secret",
            );
        }
        if let Ok(seconds) = timestamp.parse::<i64>() {
            let sent = DateTime::from_timestamp(seconds, 0).unwrap_or_default();
            if (now - sent).abs() > TIMESTAMP_TOLERANCE {
                errors.add(
                    "timestamp",
                    "must be within 15 minutes of the server's time",
                );
            }
        }
    }
    match (order_id, billing) {
        (Some(order_id), Some((payer, currency, locked_amount))) if errors.is_empty() => {
            Ok(NewCashierSession {
                order_id,
                currency: currency.code().to_string(),
                locked_amount,
                billing_details: serde_json::to_string(&payer).map_err(anyhow::Error::from)?,
                webhook_url,
                success_redirect_url,
                failed_redirect_url,
                disabled_psp_ids,
                credit_card_only,
                is_payout,
                cashier_description,
            })
        }
        _ => Err(ServiceError::Validation(errors)),
    }
}

/// The request paths whose values differ between an `open` session of an order and a `new`
/// request for it, in a fixed order. Every value the session keeps is the order as the
/// customer will pay it (amount, currency, payout mode), where its outcome goes (webhook and
/// redirect URLs), what the cashier offers (processors, description) or the payer it prefills,
/// so a repeat must match all of them, compared in their normal form.
fn changed_fields(open: &NewCashierSession, new: &NewCashierSession) -> Vec<String> {
    let mut changed: Vec<String> = Vec::new();
    let mut compare = |path: &str, same: bool| {
        if !same {
            changed.push(path.to_string());
        }
    };
    compare("webhookUrl", open.webhook_url == new.webhook_url);
    compare(
        "successRedirectUrl",
        open.success_redirect_url == new.success_redirect_url,
    );
    compare(
        "failedRedirectUrl",
        open.failed_redirect_url == new.failed_redirect_url,
    );
    compare(
        "billingDetails.lockedAmount",
        open.locked_amount == new.locked_amount,
    );
    compare("billingDetails.currency", open.currency == new.currency);
    let payer = |text: &str| {
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text).unwrap_or_default()
    };
    let (old_payer, new_payer) = (payer(&open.billing_details), payer(&new.billing_details));
    let mut keys: Vec<&String> = old_payer.keys().chain(new_payer.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        compare(
            &format!("billingDetails.{key}"),
            old_payer.get(key) == new_payer.get(key),
        );
    }
    compare(
        "disabledPspIds",
        open.disabled_psp_ids == new.disabled_psp_ids,
    );
    compare(
        "creditCardOnly",
        open.credit_card_only == new.credit_card_only,
    );
    compare(
        "cashierDescription",
        open.cashier_description == new.cashier_description,
    );
    compare("isPayOut", open.is_payout == new.is_payout);
    changed
}

/// The payer, the currency and the locked amount in minor units.
fn billing_details(
    details: BillingDetailsInput,
    now: DateTime<Utc>,
    errors: &mut FieldErrors,
) -> Option<(Payer, Currency, Option<i64>)> {
    let path = |name: &str| format!("billingDetails.{name}");
    let first_name = required_text(details.first_name, &path("firstName"), errors, |v| {
        rules::bounded_text(v, 100)
    });
    let last_name = optional_text(details.last_name, &path("lastName"), errors, |v| {
        rules::bounded_text(v, 100)
    });
    let email = required_text(details.email, &path("email"), errors, rules::email);
    let country = required_text(
        details.country,
        &path("country"),
        errors,
        rules::country_code,
    );
    let phone = required_text(details.phone, &path("phone"), errors, rules::e164_phone);
    let date_of_birth = optional_text(details.date_of_birth, &path("dateOfBirth"), errors, |v| {
        rules::date_of_birth(v, now.date_naive()).map(|date| date.format("%Y-%m-%d").to_string())
    });
    let gender = optional_text(details.gender, &path("gender"), errors, |v| {
        match v.to_ascii_lowercase().as_str() {
            "male" => Ok("Male".to_string()),
            "female" => Ok("Female".to_string()),
            _ => Err("must be Male or Female".to_string()),
        }
    });
    let currency = details
        .currency
        .required(&path("currency"), errors)
        .and_then(|code| {
            errors.check(
                &path("currency"),
                Currency::parse(&code).map_err(|e| e.to_string()),
            )
        });
    let locked = details
        .locked_amount
        .optional(&path("lockedAmount"), errors);
    let locked_amount = match (locked, currency) {
        (Some(amount), Some(currency)) => {
            let minor = money::decimal_to_minor(amount, currency)
                .map_err(|e| e.to_string())
                .and_then(|minor| {
                    if minor > 0 {
                        Ok(minor)
                    } else {
                        Err("must be greater than 0".into())
                    }
                });
            errors.check(&path("lockedAmount"), minor).map(Some)?
        }
        _ => None,
    };
    let street = details.street.optional(&path("street"), errors);
    let region = details.region.optional(&path("region"), errors);
    let city = details.city.optional(&path("city"), errors);
    let zip_code = details.zip_code.optional(&path("zipCode"), errors);
    let payer = Payer {
        first_name: first_name?,
        last_name,
        email: email?,
        street,
        region,
        city,
        country: country?,
        zip_code,
        phone: phone?,
        date_of_birth,
        gender,
    };
    Some((payer, currency?, locked_amount))
}

/// `timestamp` as the text that was signed: digits of Unix epoch seconds.
fn epoch_text(value: &serde_json::Value) -> Result<String, String> {
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if n.is_u64() => n.to_string(),
        _ => return Err("must be Unix epoch seconds".into()),
    };
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("must be Unix epoch seconds".into());
    }
    Ok(text)
}
