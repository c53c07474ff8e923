//! `PUT /membership`: changes a membership, with proration.

use axum::extract::{Path, State};
use axum::Json;
use recur_domain::calendar::IntervalType;
use recur_domain::membership as rules;
use recur_domain::money::format_amount;
use recur_domain::validation::{self as field_rules, FieldErrors};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{AuthMerchant, JsonBody};
use super::field_schemas::{CouponCode, HttpsUrl, IntervalCount, Quantity, UnitPrice};
use super::membership_catalog;
use super::membership_fields::{
    check_updated_cycle, check_updated_price, decimal_value, interval_count, positive_minor,
    quantity,
};
use super::membership_records::{record_of, MembershipRecord};
use super::problem::{ApiError, Problem};
use crate::billing::update::{self, Changes, Effective};
use crate::http::input::{optional_text, prefixed, required_text, Field};
use crate::services::tax_rates;
use crate::state::AppState;
use crate::store::memberships::{self, Membership};

/// Body of `PUT /membership`. Fields left out keep their value; so does `null`, except for
/// `endDate`, which `null` removes.
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
    /// New end date: UTC `YYYY-MM-DDTHH:mm:ss`, at least one hour and at most 100 years ahead;
    /// `null` removes it, and the membership then renews until canceled.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$")]
    pub end_date: Field<String>,
    /// New price per unit (a number or a decimal string), > 0.
    #[serde(default)]
    #[schema(value_type = Option<UnitPrice>)]
    pub price_per_unit: Field<serde_json::Value>,
    /// New quantity (an integer or a string of digits), from 1 to 1,000,000,000.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Field<serde_json::Value>,
    /// New interval type: Daily, Weekly, Monthly or Annually, any letter case.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Dd][Aa][Ii][Ll][Yy]|[Ww][Ee][Ee][Kk][Ll][Yy]|[Mm][Oo][Nn][Tt][Hh][Ll][Yy]|[Aa][Nn][Nn][Uu][Aa][Ll][Ll][Yy])$")]
    pub interval_type: Field<String>,
    /// New interval count (an integer or a string of digits), ≥ 1; with the interval type, a
    /// cycle of at most 3 years.
    #[serde(default)]
    #[schema(value_type = Option<IntervalCount>)]
    pub interval_count: Field<serde_json::Value>,
    /// Absolute HTTPS URL where the customer is sent after the update.
    #[serde(default)]
    #[schema(value_type = Option<HttpsUrl>)]
    pub return_to_website_link: Field<String>,
    /// New merchant string.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub metadata: Field<String>,
    /// The tax rates from the next invoice on (no proration); `[]` removes them all.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 5)]
    pub tax_rate_ids: Field<Vec<Field<String>>>,
    /// A catalog price (`price_…`, active, of an active product, in the membership's currency) to
    /// switch to: its unit amount and cycle replace the membership's, with the membership's
    /// quantity unless `quantity` is given. Not with `pricePerUnit`, `intervalType` or
    /// `intervalCount`, which a membership made from a price changes only this way.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^price_")]
    pub price_id: Field<String>,
    /// A coupon code to give the membership (redeemed now; it replaces its coupon and
    /// discounts from the next period invoice on); `null` removes its coupon.
    #[serde(default)]
    #[schema(value_type = Option<CouponCode>)]
    pub coupon_code: Field<String>,
    /// When a change of price, quantity or cycle applies: `now` (default; prorated) or
    /// `nextPeriod` (at the next renewal, without proration; shown as `pendingUpdate` until
    /// then). Other fields always change at once.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^([Nn][Oo][Ww]|[Nn][Ee][Xx][Tt][Pp][Ee][Rr][Ii][Oo][Dd])$", example = "nextPeriod")]
    pub effective: Field<String>,
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
/// (402 otherwise, nothing changed); a negative amount becomes credit (a credit note on the
/// current period's invoice, never a negative invoice).
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
    JsonBody(mut body): JsonBody<UpdateMembershipRequest>,
) -> Result<Json<UpdateMembershipResponse>, ApiError> {
    let now = state.merchant_now(auth.merchant_id).await?;
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
    let end_date = match body.end_date {
        Field::Absent => None,
        Field::Null => Some(None),
        given => given
            .optional("endDate", &mut errors)
            .and_then(|v| errors.check("endDate", rules::end_date(&v, now)))
            .map(Some),
    };
    let catalog_fields = [
        ("pricePerUnit", body.price_per_unit.is_given()),
        ("intervalType", body.interval_type.is_given()),
        ("intervalCount", body.interval_count.is_given()),
    ];
    let price_given = body.price_id.is_given();
    for (field, given) in catalog_fields {
        if given && price_given {
            errors.add(field, "cannot be given with priceId: the price sets it");
        } else if given && current.as_ref().is_some_and(|m| m.price_key.is_some()) {
            errors.add(
                field,
                "is set by the membership's catalog price: change priceId instead",
            );
        }
    }
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
    let quantity_field = std::mem::take(&mut body.quantity);
    let (mut new_quantity, quantity_field) = match price_given {
        true => (None, quantity_field),
        false => (
            quantity_field
                .optional("quantity", &mut errors)
                .and_then(|v| errors.check("quantity", quantity(&v))),
            Field::Absent,
        ),
    };
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
    let catalog = match price_given {
        true => {
            let units = current
                .as_ref()
                .and_then(|m| m.state.price.quantity)
                .unwrap_or(1);
            let quantity_field = match quantity_field {
                Field::Present(v) => match quantity(&v) {
                    Ok(q) => Field::Present(q),
                    Err(e) => Field::Invalid(e),
                },
                Field::Absent => Field::Absent,
                Field::Null => Field::Null,
                Field::Invalid(e) => Field::Invalid(e),
            };
            let price_id = std::mem::take(&mut body.price_id);
            membership_catalog::catalog_terms(
                &state,
                auth.merchant_id,
                price_id,
                quantity_field,
                units,
                &mut errors,
            )
            .await?
        }
        false => None,
    };
    if let (Some(catalog), Some(m)) = (&catalog, &current) {
        if catalog.price.currency != m.currency {
            errors.add(
                "priceId",
                format!(
                    "is in {}; the membership bills in {}",
                    catalog.price.currency, m.currency
                ),
            );
        }
    }
    let (price_per_unit, interval_type, interval_count) = match &catalog {
        Some(c) => {
            new_quantity = Some(c.quantity);
            (
                Some(c.price.unit_amount),
                Some(c.price.cycle.interval_type),
                Some(c.price.cycle.interval_count),
            )
        }
        None => (price_per_unit, interval_type, interval_count),
    };
    let coupon_code =
        membership_catalog::coupon_code(std::mem::take(&mut body.coupon_code), &mut errors);
    let return_link = optional_text(
        body.return_to_website_link,
        "returnToWebsiteLink",
        &mut errors,
        field_rules::https_url,
    );
    let metadata = body.metadata.optional("metadata", &mut errors);
    let effective = optional_text(body.effective, "effective", &mut errors, |v| {
        parse_effective(v).map(|_| v.to_string())
    })
    .and_then(|v| parse_effective(&v).ok())
    .unwrap_or_default();
    let rates =
        tax_rates::resolve(&state, auth.merchant_id, body.tax_rate_ids, &mut errors).await?;
    if let Some(current) = &current {
        check_updated_cycle(
            current.state.cycle,
            interval_type,
            interval_count,
            &mut errors,
        );
        let currency = current.currency();
        check_updated_price(
            current.state.price,
            price_per_unit,
            new_quantity,
            currency,
            &mut errors,
        );
    }
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
            quantity: new_quantity,
            interval_type,
            interval_count,
            return_to_website_link: return_link,
            metadata,
            tax_rates: rates,
            price_key: catalog.map(|c| c.price.price_key),
            effective,
            coupon_code,
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

/// `effective`: `now` or `nextPeriod`, in any letter case.
fn parse_effective(value: &str) -> Result<Effective, String> {
    if value.eq_ignore_ascii_case("now") {
        Ok(Effective::Now)
    } else if value.eq_ignore_ascii_case("nextPeriod") {
        Ok(Effective::NextPeriod)
    } else {
        Err("must be now or nextPeriod".into())
    }
}

/// Drops the change scheduled for the membership's next period (`pendingUpdate`): its current
/// terms stay. Answers the membership, also when nothing was scheduled.
#[utoipa::path(
    delete,
    path = "/api/subscriptions/v1/membership/{membershipKey}/pending-update",
    tag = "memberships",
    params(("membershipKey" = String, Path, description = "Key of the membership (mmbrshp_…)")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The membership, with no pendingUpdate", body = MembershipRecord),
        (status = 401, description = "Missing or invalid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such membership for this merchant", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn cancel_pending_update(
    State(state): State<AppState>,
    auth: AuthMerchant,
    Path(membership_key): Path<String>,
) -> Result<Json<MembershipRecord>, ApiError> {
    let m = update::cancel_scheduled(&state, auth.merchant_id, &membership_key).await?;
    Ok(Json(record_of(&state, &m).await?))
}
