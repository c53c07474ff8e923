//! Membership operations: create (idempotent by order id per customer), get, update with
//! proration, cancel.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::membership::{self as rules, ChargeDirective};
use recur_domain::money::{self, format_amount, Currency};
use recur_domain::validation::{self as field_rules, FieldErrors};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CurrencyCode, HttpsUrl};
use super::format_utc;
use super::input::{optional_text, prefixed, required_text, Field};
use super::problem::{ApiError, Problem};
use crate::app::AppState;
use crate::billing::lifecycle::{self, created_at};
use crate::billing::update::{self, Changes};
use crate::billing::{customer_and_merchant_now, merchant_now, next_billing_date};
use crate::ids;
use crate::store::customers::Created;
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::memberships::{self, ClockCondition, Membership, NewMembership};

/// Longest `productInfo.orderId`.
const MAX_ORDER_ID_CHARS: usize = 255;

/// Body of `POST /membership`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateMembershipRequest {
    /// Key of an existing customer of this merchant (`cstmr_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^cstmr_")]
    pub customer_key: Field<String>,
    /// 1–250 characters; shown on invoices and in the portal.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 250)]
    pub subscription_name: Field<String>,
    /// UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour ahead. No cycle starts at or after it.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2027-12-31T00:00:00", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub end_date: Field<String>,
    /// Absolute HTTPS URL receiving this membership's events; not an internal IP literal.
    #[serde(default)]
    #[schema(required = true, value_type = HttpsUrl)]
    pub webhook_url: Field<String>,
    /// Free-form merchant string.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub metadata: Field<String>,
    /// Sandbox testing: outcomes of the recurring charge attempts, in order.
    #[serde(default)]
    #[schema(value_type = Option<Vec<ChargeEmitterInput>>, min_items = 1)]
    pub charge_emitter_queue: Field<Vec<Field<ChargeEmitterInput>>>,
    /// The merchant's order.
    #[serde(default)]
    #[schema(required = true, value_type = ProductInfoInput)]
    pub product_info: Field<ProductInfoInput>,
    /// Price and currency.
    #[serde(default)]
    #[schema(required = true, value_type = PricingInfoInput)]
    pub pricing_info: Field<PricingInfoInput>,
    /// How often the membership renews.
    #[serde(default)]
    #[schema(required = true, value_type = BillingCycleInput)]
    pub billing_cycle: Field<BillingCycleInput>,
}

/// `chargeEmitterQueue` item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct ChargeEmitterInput {
    /// `Success` or `Rejected`, any letter case.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "Rejected", pattern = "^([Ss][Uu][Cc][Cc][Ee][Ss][Ss]|[Rr][Ee][Jj][Ee][Cc][Tt][Ee][Dd])$")]
    transaction_status: Field<String>,
    /// Decline message of a `Rejected` item; default `Insufficient funds.`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Field<String>,
}

/// `productInfo` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct ProductInfoInput {
    /// The merchant's order id, 1–255 characters; unique per customer.
    #[serde(default)]
    #[schema(required = true, value_type = String, min_length = 1, max_length = 255)]
    order_id: Field<String>,
    /// Free text.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Field<String>,
}

/// `pricingInfo` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct PricingInfoInput {
    /// ISO 4217 code.
    #[serde(default)]
    #[schema(required = true, value_type = CurrencyCode)]
    currency: Field<String>,
    /// Decimal string > 0 with at most the currency's decimals.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "29.97", pattern = "^[0-9]+(\\.[0-9]+)?$")]
    total_amount: Field<String>,
    /// Optional, > 0 (a number or a decimal string). With quantity, their product must equal
    /// totalAmount.
    #[serde(default)]
    #[schema(value_type = Option<f64>, example = 9.99, exclusive_minimum = 0)]
    price_per_unit: Field<serde_json::Value>,
    /// Optional integer > 0.
    #[serde(default)]
    #[schema(value_type = Option<i64>, example = 3, minimum = 1)]
    quantity: Field<i64>,
}

/// `billingCycle` of the create body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", expecting = "an object")]
pub struct BillingCycleInput {
    /// Daily, Weekly, Monthly or Annually.
    #[serde(default)]
    #[schema(required = true, value_type = String, example = "Monthly", pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    interval_type: Field<String>,
    /// Integer ≥ 1, default 1.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    interval_count: Field<serde_json::Value>,
}

/// A `chargeEmitterQueue` item.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeEmitterItem {
    /// `Success` or `Rejected`.
    pub transaction_status: String,
    /// Decline message of a `Rejected` item.
    pub description: Option<String>,
}

/// `productInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductInfoRecord {
    /// The merchant's order id; unique per customer.
    pub order_id: String,
    /// Free text.
    pub description: Option<String>,
}

/// `pricingInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PricingInfoRecord {
    /// ISO 4217 code.
    pub currency: String,
    /// Price per period, decimal string.
    pub total_amount: String,
    /// Price per unit, decimal string, when given.
    pub price_per_unit: Option<String>,
    /// Quantity, when given.
    pub quantity: Option<i64>,
}

/// `billingCycle`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillingCycleRecord {
    /// Daily, Weekly, Monthly or Annually.
    pub interval_type: String,
    /// Units between charges, at least 1.
    pub interval_count: u32,
}

/// An invoice line.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLineRecord {
    /// What it is for.
    pub description: String,
    /// Signed decimal string; credit lines are negative.
    pub amount: String,
}

/// An invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceRecord {
    /// `in_` + 24 base62 characters.
    pub invoice_key: String,
    /// `first`, `renewal` or `proration`.
    pub kind: String,
    /// Draft, Open, Paid, Void or Uncollectible.
    pub status: String,
    /// ISO 4217 code.
    pub currency: String,
    /// Start of the billed period.
    pub period_start: Option<String>,
    /// End of the billed period.
    pub period_end: Option<String>,
    /// Sum of the lines before credit.
    pub subtotal: String,
    /// Credit consumed.
    pub credit_applied: String,
    /// Due from the payment method.
    pub amount_due: String,
    /// Paid by the payment method.
    pub amount_paid: String,
    /// Lines, credit last.
    pub lines: Vec<InvoiceLineRecord>,
    /// Creation time.
    pub created_at: String,
    /// Payment time.
    pub paid_at: Option<String>,
    /// Void time.
    pub voided_at: Option<String>,
}

impl From<&Invoice> for InvoiceRecord {
    fn from(invoice: &Invoice) -> Self {
        let currency = Currency::parse(&invoice.currency).ok();
        let money =
            |minor: i64| currency.map_or_else(|| minor.to_string(), |c| format_amount(minor, c));
        InvoiceRecord {
            invoice_key: invoice.invoice_key.clone(),
            kind: invoice.kind.as_str().to_string(),
            status: invoice.status.as_str().to_string(),
            currency: invoice.currency.clone(),
            period_start: invoice.period.map(|p| format_utc(p.start)),
            period_end: invoice.period.map(|p| format_utc(p.end)),
            subtotal: money(invoice.subtotal),
            credit_applied: money(invoice.credit_applied),
            amount_due: money(invoice.amount_due),
            amount_paid: money(invoice.amount_paid),
            lines: invoice
                .lines
                .iter()
                .map(|l| InvoiceLineRecord {
                    description: l.description.clone(),
                    amount: money(l.amount),
                })
                .collect(),
            created_at: format_utc(invoice.created_at),
            paid_at: invoice.paid_at.map(format_utc),
            voided_at: invoice.voided_at.map(format_utc),
        }
    }
}

/// A membership as returned by every membership operation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MembershipRecord {
    /// `mmbrshp_` + 24 base62 characters.
    pub membership_key: String,
    /// Owning customer.
    pub customer_key: String,
    /// Display name.
    pub subscription_name: String,
    /// End date, UTC.
    pub end_date: Option<String>,
    /// Event endpoint.
    pub webhook_url: String,
    /// Merchant's free-form string.
    pub metadata: Option<String>,
    /// Where the customer is sent after an update.
    pub return_to_website_link: Option<String>,
    /// Sandbox outcomes of recurring attempts.
    pub charge_emitter_queue: Option<Vec<ChargeEmitterItem>>,
    /// The merchant's order.
    pub product_info: ProductInfoRecord,
    /// Price and currency.
    pub pricing_info: PricingInfoRecord,
    /// Renewal cycle.
    pub billing_cycle: BillingCycleRecord,
    /// Incomplete, Expired, Active, PastDue, Unpaid, Canceled or Completed.
    pub status: String,
    /// Start of the current period.
    pub current_period_start: Option<String>,
    /// End of the current period.
    pub current_period_end: Option<String>,
    /// Next charge attempt.
    pub next_billing_date: Option<String>,
    /// Credit applied first at the next charges, decimal string.
    pub credit_balance: String,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// Cancellation time.
    pub canceled_at: Option<String>,
    /// Latest invoices first.
    pub invoices: Vec<InvoiceRecord>,
}

impl MembershipRecord {
    /// The record of `m` with its recent invoices.
    pub fn new(m: &Membership, invoices: &[Invoice]) -> Self {
        let currency = m.currency();
        MembershipRecord {
            membership_key: m.membership_key.clone(),
            customer_key: m.customer_key.clone(),
            subscription_name: m.subscription_name.clone(),
            end_date: m.end_date.map(format_utc),
            webhook_url: m.webhook_url.clone(),
            metadata: m.metadata.clone(),
            return_to_website_link: m.return_to_website_link.clone(),
            charge_emitter_queue: m.charge_emitter_queue.as_ref().map(|queue| {
                queue
                    .iter()
                    .map(|d| ChargeEmitterItem {
                        transaction_status: if d.succeed { "Success" } else { "Rejected" }.into(),
                        description: (!d.succeed).then(|| d.description.clone()),
                    })
                    .collect()
            }),
            product_info: ProductInfoRecord {
                order_id: m.order_id.clone(),
                description: m.order_description.clone(),
            },
            pricing_info: PricingInfoRecord {
                currency: m.currency.clone(),
                total_amount: format_amount(m.total_amount, currency),
                price_per_unit: m.price_per_unit.map(|p| format_amount(p, currency)),
                quantity: m.quantity,
            },
            billing_cycle: BillingCycleRecord {
                interval_type: m.interval_type.as_str().into(),
                interval_count: m.interval_count,
            },
            status: m.status.as_str().into(),
            current_period_start: m.current_period.map(|p| format_utc(p.start)),
            current_period_end: m.current_period.map(|p| format_utc(p.end)),
            next_billing_date: next_billing_date(m).map(format_utc),
            credit_balance: format_amount(m.credit_balance, currency),
            created_at: format_utc(m.created_at),
            updated_at: format_utc(m.updated_at),
            canceled_at: m.canceled_at.map(format_utc),
            invoices: invoices.iter().map(InvoiceRecord::from).collect(),
        }
    }
}

/// Reads the record of a membership (with its recent invoices) after a change.
pub async fn record_of(state: &AppState, m: &Membership) -> Result<MembershipRecord, ApiError> {
    let invoices = invoices::recent(state.store.pool(), m.id, RECENT_INVOICES).await?;
    Ok(MembershipRecord::new(m, &invoices))
}

/// Creates a membership, or returns the customer's existing one with the same
/// `productInfo.orderId`: 201 when new, 200 when it existed. New memberships are Incomplete.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership",
    tag = "memberships",
    request_body = CreateMembershipRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Membership created (Incomplete)", body = MembershipRecord),
        (status = 200, description = "The customer already had a membership for this order id", body = MembershipRecord),
        (status = 400, description = "Validation failed: every failing field is listed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn create_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<CreateMembershipRequest>,
) -> Result<(StatusCode, Json<MembershipRecord>), ApiError> {
    let mut errors = FieldErrors::new();
    let CreateDraft {
        customer_key,
        end_date,
        membership: new,
    } = validate_create(
        body,
        auth.merchant_id,
        state.config.webhooks.allow_private,
        &mut errors,
    );
    // Most creates are valid, for an existing customer of a merchant without a test clock,
    // whose time is then the injected clock's: one statement finds the customer and inserts.
    let wall = state.clock.now();
    if let (Some(key), Some(new)) = (&customer_key, &new) {
        let lead_ok = end_date.is_none_or(|end| rules::end_date_lead(end, wall).is_ok());
        if errors.is_empty() && lead_ok {
            let at = created_at(wall);
            let condition = ClockCondition::WithoutTestClock;
            let inserted = memberships::insert(&state.store, new.clone(), key, at, condition);
            if let Some(m) = inserted.await? {
                // A new membership has no invoice yet.
                return Ok((StatusCode::CREATED, Json(MembershipRecord::new(&m, &[]))));
            }
        }
    }
    // Otherwise: the customer and the merchant's time, read, so that every field error is
    // reported together and `endDate` is checked against the merchant's own clock.
    let (customer, now) = match &customer_key {
        Some(key) => {
            let (customer, now) = customer_and_merchant_now(&state, auth.merchant_id, key).await?;
            if customer.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            (customer, now)
        }
        None => (None, merchant_now(&state, auth.merchant_id).await?),
    };
    if let Some(end) = end_date {
        errors.check("endDate", rules::end_date_lead(end, now));
    }
    let (Some(customer), Some(new)) = (customer, new) else {
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let (membership, created) =
        memberships::create_or_get(&state.store, new, &customer.customer_key, created_at(now))
            .await?;
    Ok(match created {
        Created::New => (
            StatusCode::CREATED,
            Json(MembershipRecord::new(&membership, &[])),
        ),
        Created::Existing => (StatusCode::OK, Json(record_of(&state, &membership).await?)),
    })
}

/// A create body checked by every rule that needs no database and no clock.
struct CreateDraft {
    /// `customerKey`, when well-formed; whether it names a customer is still to be read.
    customer_key: Option<String>,
    /// `endDate`, when present and well-formed; its lead over the merchant's time is still to be
    /// checked.
    end_date: Option<DateTime<Utc>>,
    /// The membership, when every required field is valid. It is only to be stored when no
    /// error was recorded: an invalid optional field is left out of it.
    membership: Option<NewMembership>,
}

/// Checks the create body by every rule that needs no database and no clock, adding the
/// failures under their paths. `allow_private`: the operator lets webhooks reach internal
/// addresses.
fn validate_create(
    body: CreateMembershipRequest,
    merchant_id: i64,
    allow_private: bool,
    errors: &mut FieldErrors,
) -> CreateDraft {
    let customer_key = required_text(body.customer_key, "customerKey", errors, |key| {
        prefixed(key, "cstmr_")
    });
    let name = required_text(
        body.subscription_name,
        "subscriptionName",
        errors,
        rules::subscription_name,
    );
    let end_date = body
        .end_date
        .optional("endDate", errors)
        .and_then(|v| errors.check("endDate", rules::parse_end_date(&v)));
    let webhook_url = required_text(body.webhook_url, "webhookUrl", errors, |url| {
        field_rules::webhook_url(url, allow_private)
    });
    let metadata = body.metadata.optional("metadata", errors);
    let queue = body
        .charge_emitter_queue
        .optional("chargeEmitterQueue", errors)
        .and_then(|items| charge_emitter_queue(items, errors));
    let product = body.product_info.required("productInfo", errors).map(|p| {
        let order_id = required_text(p.order_id, "productInfo.orderId", errors, |v| {
            if v.trim().is_empty() {
                Err("must not be empty".to_string())
            } else {
                field_rules::bounded_text(v, MAX_ORDER_ID_CHARS)
            }
        });
        let description = p.description.optional("productInfo.description", errors);
        (order_id, description)
    });
    let pricing = body
        .pricing_info
        .required("pricingInfo", errors)
        .and_then(|p| pricing(p, errors));
    let cycle = body
        .billing_cycle
        .required("billingCycle", errors)
        .and_then(|c| billing_cycle(c, errors));
    let (
        Some(name),
        Some(webhook_url),
        Some((Some(order_id), order_description)),
        Some((currency, total, per_unit, quantity)),
        Some(cycle),
    ) = (name, webhook_url, product, pricing, cycle)
    else {
        return CreateDraft {
            customer_key,
            end_date,
            membership: None,
        };
    };
    let new = NewMembership {
        merchant_id,
        membership_key: ids::membership_key(),
        order_id,
        order_description,
        subscription_name: name,
        metadata,
        webhook_url,
        end_date,
        currency: currency.code().to_string(),
        total_amount: total,
        price_per_unit: per_unit,
        quantity,
        cycle,
        charge_emitter_queue: queue,
    };
    CreateDraft {
        customer_key,
        end_date,
        membership: Some(new),
    }
}

fn charge_emitter_queue(
    items: Vec<Field<ChargeEmitterInput>>,
    errors: &mut FieldErrors,
) -> Option<Vec<ChargeDirective>> {
    if items.is_empty() {
        errors.add("chargeEmitterQueue", "must not be empty when present");
        return None;
    }
    let mut queue = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("chargeEmitterQueue[{i}]");
        let Some(item) = item.required(&path, errors) else {
            continue;
        };
        let description = item
            .description
            .optional(&format!("{path}.description"), errors);
        let status = item
            .transaction_status
            .required(&format!("{path}.transactionStatus"), errors);
        if let Some(status) = status {
            let directive = rules::charge_directive(&status, description.as_deref());
            if let Some(directive) = errors.check(&format!("{path}.transactionStatus"), directive) {
                queue.push(directive);
            }
        }
    }
    Some(queue)
}

/// Currency, total, unit price and quantity of `pricingInfo`, all in minor units.
type Pricing = (Currency, i64, Option<i64>, Option<i64>);

fn pricing(p: PricingInfoInput, errors: &mut FieldErrors) -> Option<Pricing> {
    let currency = required_text(p.currency, "pricingInfo.currency", errors, |code| {
        Currency::parse(code)
            .map(|c| c.code().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|code| Currency::parse(&code).ok());
    let total_text = p.total_amount.required("pricingInfo.totalAmount", errors);
    let per_unit = p
        .price_per_unit
        .optional("pricingInfo.pricePerUnit", errors);
    let quantity = p.quantity.optional("pricingInfo.quantity", errors);
    let quantity = quantity.and_then(|q| {
        errors.check(
            "pricingInfo.quantity",
            if q > 0 {
                Ok(q)
            } else {
                Err("must be greater than 0".to_string())
            },
        )
    });
    let currency = currency?;
    let total = total_text.and_then(|text| {
        errors.check(
            "pricingInfo.totalAmount",
            money::parse_amount(&text, currency).map_err(|e| e.to_string()),
        )
    });
    let per_unit = per_unit.and_then(|value| {
        let minor = decimal_value(&value).and_then(|d| positive_minor(d, currency));
        errors.check("pricingInfo.pricePerUnit", minor)
    });
    let total = total?;
    let price = rules::plan_price(total, per_unit, quantity);
    errors.check("pricingInfo.totalAmount", price)?;
    Some((currency, total, per_unit, quantity))
}

/// A positive decimal with no more decimals than the currency has, in minor units.
fn positive_minor(value: Decimal, currency: Currency) -> Result<i64, String> {
    let minor = money::decimal_to_minor(value, currency).map_err(|e| e.to_string())?;
    if minor > 0 {
        Ok(minor)
    } else {
        Err("must be greater than 0".into())
    }
}

/// An integer ≥ 1 given as a JSON integer or a string of digits (the update table declares
/// `intervalCount` a string).
fn interval_count(value: &serde_json::Value) -> Result<u32, String> {
    let parsed = match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(n) if n >= 1 => u32::try_from(n).map_err(|_| "is too large".to_string()),
        Some(_) => Err("must be at least 1".into()),
        None => Err("must be an integer of at least 1".into()),
    }
}

fn billing_cycle(c: BillingCycleInput, errors: &mut FieldErrors) -> Option<BillingCycle> {
    let interval_type = required_text(c.interval_type, "billingCycle.intervalType", errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let count = match c
        .interval_count
        .optional("billingCycle.intervalCount", errors)
    {
        Some(value) => errors.check("billingCycle.intervalCount", interval_count(&value))?,
        None => 1,
    };
    BillingCycle::new(interval_type?, count).ok()
}

/// Reads a membership of the calling merchant, with its recent invoices.
#[utoipa::path(
    get,
    path = "/api/subscriptions/v1/membership/{membershipKey}",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The membership", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn get_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let (m, invoices) =
        memberships::get_with_invoices(&state.store, auth.merchant_id, &membership_key)
            .await?
            .ok_or(ApiError::NotFound)?;
    Ok(Json(MembershipRecord::new(&m, &invoices)))
}

/// Cancels a membership at once: open invoices Void, no retries, no new cycles. Repeating it
/// returns the canceled membership.
#[utoipa::path(
    post,
    path = "/api/subscriptions/v1/membership/cancel/{membershipKey}",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The canceled membership", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is Completed or Expired", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn cancel_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = lifecycle::cancel(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}

/// Body of `PUT /membership`. Fields left out (or `null`) keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateMembershipRequest {
    /// Key of the membership (`mmbrshp_…`).
    #[serde(default)]
    #[schema(required = true, value_type = String, pattern = "^mmbrshp_")]
    pub membership_key: Field<String>,
    /// New display name, 1–250 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 250)]
    pub name: Field<String>,
    /// New end date: UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour ahead.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub end_date: Field<String>,
    /// New price per unit (a number or a decimal string), > 0.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0)]
    pub price_per_unit: Field<serde_json::Value>,
    /// New quantity (an integer or a string of digits), > 0.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub quantity: Field<serde_json::Value>,
    /// New interval type: Daily, Weekly, Monthly or Annually, any letter case.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    pub interval_type: Field<String>,
    /// New interval count (an integer or a string of digits), ≥ 1.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub interval_count: Field<serde_json::Value>,
    /// Absolute HTTPS URL where the customer is sent after the update.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub return_to_website_link: Field<String>,
    /// New merchant string.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub metadata: Field<String>,
}

/// The proration of an update.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProrationRecord {
    /// Signed decimal string: positive was charged (credit first), negative became credit.
    pub amount: String,
    /// ISO 4217 code.
    pub currency: String,
    /// The charge attempt's id when the payment method was charged.
    pub transaction_id: Option<i64>,
}

/// Response of `PUT /membership`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UpdateMembershipResponse {
    /// The membership after the update.
    pub membership: MembershipRecord,
    /// The proration, when price or cycle changed during a paid period.
    pub proration: Option<ProrationRecord>,
}

/// Updates a membership. A change of price, quantity or cycle during a paid period is
/// prorated: a positive amount is charged first and the update stored only if that succeeds
/// (402 otherwise, nothing changed); a negative amount becomes credit.
#[utoipa::path(
    put,
    path = "/api/subscriptions/v1/membership",
    tag = "memberships",
    request_body = UpdateMembershipRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Updated", body = UpdateMembershipResponse),
        (status = 400, description = "Validation failed", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 402, description = "The proration charge was declined; nothing changed", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The membership is Canceled, Completed or Expired", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn update_membership(
    State(state): State<AppState>,
    auth: AuthMerchant,
    JsonBody(body): JsonBody<UpdateMembershipRequest>,
) -> Result<Json<UpdateMembershipResponse>, ApiError> {
    let now = merchant_now(&state, auth.merchant_id).await?;
    let mut errors = FieldErrors::new();
    let key = required_text(body.membership_key, "membershipKey", &mut errors, |k| {
        prefixed(k, "mmbrshp_")
    });
    let current = match &key {
        Some(key) => memberships::get(state.store.pool(), auth.merchant_id, key).await?,
        None => None,
    };
    let currency = current.as_ref().map(Membership::currency);
    let name = optional_text(body.name, "name", &mut errors, rules::subscription_name);
    let end_date = body
        .end_date
        .optional("endDate", &mut errors)
        .and_then(|v| errors.check("endDate", rules::end_date(&v, now)));
    let price_per_unit = body
        .price_per_unit
        .optional("pricePerUnit", &mut errors)
        .and_then(|v| {
            let parsed = decimal_value(&v).and_then(|d| match currency {
                Some(c) => positive_minor(d, c),
                None => Ok(0),
            });
            errors.check("pricePerUnit", parsed)
        });
    let quantity = body
        .quantity
        .optional("quantity", &mut errors)
        .and_then(|v| errors.check("quantity", positive_integer(&v)));
    let interval_type = optional_text(body.interval_type, "intervalType", &mut errors, |v| {
        IntervalType::parse(v)
            .map(|t| t.as_str().to_string())
            .map_err(|e| e.to_string())
    })
    .and_then(|v| IntervalType::parse(&v).ok());
    let interval_count = body
        .interval_count
        .optional("intervalCount", &mut errors)
        .and_then(|v| errors.check("intervalCount", interval_count(&v)));
    let return_link = optional_text(
        body.return_to_website_link,
        "returnToWebsiteLink",
        &mut errors,
        field_rules::https_url,
    );
    let metadata = body.metadata.optional("metadata", &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let (Some(key), Some(_)) = (key, current) else {
        return Err(ApiError::NotFound);
    };
    let outcome = update::update(
        &state,
        auth.merchant_id,
        &key,
        Changes {
            name,
            end_date,
            price_per_unit,
            quantity,
            interval_type,
            interval_count,
            return_to_website_link: return_link,
            metadata,
        },
    )
    .await?;
    let membership = record_of(&state, &outcome.membership).await?;
    let proration = outcome.proration.map(|p| {
        let currency = outcome.membership.currency();
        ProrationRecord {
            amount: format_amount(p.amount, currency),
            currency: p.currency,
            transaction_id: p.transaction_id,
        }
    });
    Ok(Json(UpdateMembershipResponse {
        membership,
        proration,
    }))
}

/// A decimal given as a JSON number or a decimal string. A JSON number is always a number; when it
/// is refused, it is because no amount has that size or precision (`5e-324`, `3e300`).
fn decimal_value(value: &serde_json::Value) -> Result<Decimal, String> {
    match value {
        serde_json::Value::Number(n) => n
            .to_string()
            .parse::<Decimal>()
            .map_err(|_| "is too large or has too many decimal places".to_string()),
        serde_json::Value::String(s) => s
            .trim()
            .parse::<Decimal>()
            .map_err(|_| "must be a number".to_string()),
        _ => Err("must be a number".into()),
    }
}

/// An integer > 0 given as a JSON integer or a string of digits.
fn positive_integer(value: &serde_json::Value) -> Result<i64, String> {
    let parsed = match value {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    match parsed {
        Some(n) if n > 0 => Ok(n),
        Some(_) => Err("must be greater than 0".into()),
        None => Err("must be an integer".into()),
    }
}
