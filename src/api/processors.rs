//! A merchant's payment processors (DESIGN §17, §18): `GET|POST /processors` and
//! `GET|PATCH|DELETE /processors/{paymentProcessorId}`. The sandbox set is listed beside the
//! Stripe accounts and SEPA processors the merchant connects; no answer ever holds a secret (a
//! secret key shows its last four). The operations are [`crate::services::processors`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use recur_domain::time::format_utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::page::Page;
use super::problem::{ApiError, Problem};
use crate::http::input::Field;
use crate::services::processors::{self, NewProcessor, Processor, ProcessorChange};
use crate::services::sepa::creditors::{NewSepa, SepaChange};
use crate::state::AppState;

/// Body of a processor's connection: a Stripe account (`secretKey`, `publishableKey`,
/// `webhookSecret`, `default`) or a SEPA processor (`creditorId`, `creditorName`, `iban`,
/// `bic`, `leadDays`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectProcessorRequest {
    /// `stripe` or `sepa_debit`.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "stripe")]
    pub kind: Field<String>,
    /// Shown in the cashier, events and the dashboard; 1–100 characters.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 100)]
    pub name: Field<String>,
    /// Stripe: the account's secret key, `sk_test_…` for a sandbox merchant, `sk_live_…` for
    /// a live one. Checked with Stripe before anything is stored; stored sealed, never
    /// answered.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "sk_test_…")]
    pub secret_key: Field<String>,
    /// Stripe: the publishable key of the same mode (`pk_test_…` or `pk_live_…`).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "pk_test_…")]
    pub publishable_key: Field<String>,
    /// Stripe: the signing secret (`whsec_…`) of the webhook endpoint added in Stripe's
    /// dashboard for this processor's `webhookUrl`. Stored sealed, never answered.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "whsec_…")]
    pub webhook_secret: Field<String>,
    /// Stripe: `true` makes it the default card processor at once.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub default: Field<bool>,
    /// SEPA: the SEPA creditor identifier (ISO 7064 mod 97-10 check digits).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "DE98ZZZ09999999999")]
    pub creditor_id: Field<String>,
    /// SEPA: the creditor name on mandates and collection files (≤ 70 characters); `name`
    /// when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 70)]
    pub creditor_name: Field<String>,
    /// SEPA: the collection account's IBAN (country length and mod 97 checked).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "DE89370400440532013000")]
    pub iban: Field<String>,
    /// SEPA: the collection account's BIC (8 or 11 characters).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "COBADEFFXXX")]
    pub bic: Field<String>,
    /// SEPA: days between a debit's pre-notification and its collection, 1–14 (default 5).
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 14)]
    pub lead_days: Field<i64>,
}

/// Body of a processor's change: each field given replaces the stored one. A sandbox card
/// gateway takes `default` only; a Stripe account `name`, its keys and `default`; a SEPA
/// processor `name`, `creditorName`, `iban`, `bic` and `leadDays` (its `creditorId` stays).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProcessorRequest {
    /// A new name.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100)]
    pub name: Field<String>,
    /// A new secret key of the merchant's mode, checked with Stripe first.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub secret_key: Field<String>,
    /// A new publishable key.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub publishable_key: Field<String>,
    /// A new webhook signing secret.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub webhook_secret: Field<String>,
    /// `true` makes it the default card processor; the default is changed by making another
    /// one the default.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub default: Field<bool>,
    /// Refused: mandates name the creditor identifier they were signed for.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub creditor_id: Field<String>,
    /// A new creditor name.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 70)]
    pub creditor_name: Field<String>,
    /// A new collection IBAN.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub iban: Field<String>,
    /// A new BIC; `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub bic: Field<String>,
    /// New lead days, 1–14.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 14)]
    pub lead_days: Field<i64>,
}

/// A processor, without any secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessorRecord {
    /// `PaymentProcessorId`: 101–202 for the sandbox set, 301 and up for connected accounts.
    pub payment_processor_id: i64,
    /// Its name.
    pub name: String,
    /// `sandbox-card`, `sandbox-alternative`, `stripe` or `sepa_debit`.
    #[schema(example = "stripe")]
    pub kind: String,
    /// Whether it takes new cards on the checkout, portal and pay-now pages.
    pub default: bool,
    /// When it was connected (UTC); `null` for the sandbox set.
    pub created_at: Option<String>,
    /// A Stripe account's public details; `null` for other kinds.
    pub stripe: Option<StripeRecord>,
    /// A SEPA processor's creditor; `null` for other kinds.
    pub sepa_debit: Option<SepaDebitRecord>,
}

/// A SEPA processor's creditor: what its mandates and collection files name.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SepaDebitRecord {
    /// The SEPA creditor identifier.
    #[schema(example = "DE98ZZZ09999999999")]
    pub creditor_id: String,
    /// The creditor name.
    pub creditor_name: String,
    /// The collection account's IBAN.
    pub iban: String,
    /// The collection account's BIC, when given.
    pub bic: Option<String>,
    /// Days between a debit's pre-notification and its collection.
    pub lead_days: i64,
    /// `EUR`: SEPA Direct Debit collects euros only.
    #[schema(example = "EUR")]
    pub currency: String,
}

/// What is shown of a connected Stripe account.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StripeRecord {
    /// Whether its keys are live ones.
    pub live: bool,
    /// The secret key's last four characters.
    pub secret_key_last4: String,
    /// The publishable key.
    pub publishable_key: String,
    /// The URL to add as a webhook endpoint in Stripe's dashboard (events
    /// `payment_intent.succeeded`, `payment_intent.payment_failed`, `charge.refunded`,
    /// `charge.dispute.created`).
    pub webhook_url: String,
}

impl From<Processor> for ProcessorRecord {
    fn from(processor: Processor) -> Self {
        Self {
            payment_processor_id: processor.processor_id,
            name: processor.name,
            kind: processor.kind.as_str().to_owned(),
            default: processor.default,
            created_at: processor.created_at.map(format_utc),
            stripe: processor.stripe.map(|stripe| StripeRecord {
                live: stripe.live,
                secret_key_last4: stripe.secret_key_last4,
                publishable_key: stripe.publishable_key,
                webhook_url: stripe.webhook_url,
            }),
            sepa_debit: processor.sepa.map(|creditor| SepaDebitRecord {
                creditor_id: creditor.creditor_id,
                creditor_name: creditor.creditor_name,
                iban: creditor.iban,
                bic: creditor.bic,
                lead_days: creditor.lead_days,
                currency: "EUR".into(),
            }),
        }
    }
}

/// The processor id of a path: not a number is no processor of the merchant.
fn processor_id(text: &str) -> Result<i64, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound)
}

/// Lists the merchant's processors: the sandbox set in cascade order, then the connected
/// Stripe accounts, all in one page.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/processors",
    tag = "processors",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The processors, all in one page", body = Page<ProcessorRecord>),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn list_processors(
    State(state): State<AppState>,
    auth: AuthMerchant,
) -> Result<Json<Page<ProcessorRecord>>, ApiError> {
    let listed = processors::list(&state, auth.merchant_id).await?;
    let data = listed.into_iter().map(ProcessorRecord::from).collect();
    Ok(Json(Page::new(data, None)))
}

/// Connects a Stripe account or a SEPA processor. For Stripe, recur checks the secret key with
/// one Stripe call (`GET /v1/balance`) before it stores anything.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/processors",
    tag = "processors",
    request_body = ConnectProcessorRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Connected", body = ProcessorRecord),
        (status = 400, description = "Validation failed: every failing field is listed (a key of the other mode or kind; a secret key Stripe refuses)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot connect processors", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The merchant already connected 10 processors of this kind", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Stripe did not answer the key check; nothing was stored", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn connect_processor(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<ConnectProcessorRequest>,
) -> Result<(StatusCode, Json<ProcessorRecord>), ApiError> {
    let new = NewProcessor {
        kind: body.kind,
        name: body.name,
        secret_key: body.secret_key,
        publishable_key: body.publishable_key,
        webhook_secret: body.webhook_secret,
        default: body.default,
        sepa: NewSepa {
            creditor_id: body.creditor_id,
            creditor_name: body.creditor_name,
            iban: body.iban,
            bic: body.bic,
            lead_days: body.lead_days,
        },
    };
    let processor = processors::connect(&state, auth.merchant_id, new).await?;
    Ok((StatusCode::CREATED, Json(processor.into())))
}

/// A processor of the merchant.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/processors/{paymentProcessorId}",
    tag = "processors",
    params(("paymentProcessorId" = i64, Path, description = "The processor's id")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The processor", body = ProcessorRecord),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such processor for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_processor(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(id): Path<String>,
) -> Result<Json<ProcessorRecord>, ApiError> {
    let processor = processors::get(&state, auth.merchant_id, processor_id(&id)?).await?;
    Ok(Json(processor.into()))
}

/// Changes a processor: a Stripe account's name and keys, a SEPA processor's name and
/// creditor details, or which card processor is the default.
#[utoipa::path(
    patch,
    path = "/api/subscriptions/v1/processors/{paymentProcessorId}",
    tag = "processors",
    params(("paymentProcessorId" = i64, Path, description = "The processor's id")),
    request_body = UpdateProcessorRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The processor as changed", body = ProcessorRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot change processors", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such processor for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Stripe did not answer the new key's check; nothing changed", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_processor(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<UpdateProcessorRequest>,
) -> Result<Json<ProcessorRecord>, ApiError> {
    let change = ProcessorChange {
        name: body.name,
        secret_key: body.secret_key,
        publishable_key: body.publishable_key,
        webhook_secret: body.webhook_secret,
        default: body.default,
        sepa: SepaChange {
            creditor_id: body.creditor_id,
            creditor_name: body.creditor_name,
            iban: body.iban,
            bic: body.bic,
            lead_days: body.lead_days,
        },
    };
    let processor =
        processors::change(&state, auth.merchant_id, processor_id(&id)?, change).await?;
    Ok(Json(processor.into()))
}

/// Disconnects a Stripe account or a SEPA processor; the sandbox set stays.
#[utoipa::path(
    delete,
    path = "/api/subscriptions/v1/processors/{paymentProcessorId}",
    tag = "processors",
    params(("paymentProcessorId" = i64, Path, description = "The processor's id")),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Disconnected"),
        (status = 401, description = "Missing or invalid bearer token or API key", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "A read API key cannot remove processors", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such connected processor for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "A customer's payment method (card or mandate) is held by it, or a cashier payment waits on it", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn delete_processor(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    processors::disconnect(&state, auth.merchant_id, processor_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}
