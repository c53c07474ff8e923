//! Checkout and portal sessions (DESIGN §2): links to the hosted pages where a customer pays a
//! membership or manages their memberships, invoices and card, for the API
//! (`POST /checkout/session`, `POST /portal/session`) and the portal's "pay now" alike. A link
//! carries an unguessable token of which only a keyed digest is stored
//! ([`checkout::open_session`]); checkout links work for 24 hours, portal links for one hour.

use chrono::{DateTime, Utc};
use recur_domain::status::MembershipStatus;
use recur_domain::validation::{self as field_rules, FieldErrors};

use super::ServiceError;
use crate::billing::checkout::{self, SessionSpec};
use crate::http::input::{optional_text, prefixed, required_text, Field};
use crate::state::AppState;
use crate::store::checkout_sessions::{CheckoutSession, SessionKind};
use crate::store::customers::{self, Customer};
use crate::store::memberships::{self, Membership};

/// A session as asked for.
#[derive(Debug, Default)]
pub struct NewSession {
    /// The customer (`cstmr_…`).
    pub customer_key: Field<String>,
    /// The membership to pay (`mmbrshp_…`): required for a checkout, refused for a portal.
    pub membership_key: Field<String>,
    /// Absolute HTTPS URL where the customer is sent afterwards; a checkout defaults to the
    /// membership's `returnToWebsiteLink`.
    pub return_to_website_link: Field<String>,
}

/// Opens a session of `kind` for the merchant's customer: a checkout of the customer's
/// membership (its first invoice of an Incomplete one, or the open invoice of a PastDue, Unpaid
/// or Canceled one: pay-now, a Canceled membership stays Canceled), or a portal. Returns the
/// link's token (kept nowhere) and the session; every failing field is listed, and a membership
/// with nothing to pay is a conflict.
pub async fn open(
    state: &AppState,
    merchant_id: i64,
    kind: SessionKind,
    new: NewSession,
) -> Result<(String, CheckoutSession), ServiceError> {
    let mut errors = FieldErrors::new();
    let customer = match required_text(new.customer_key, "customerKey", &mut errors, |k| {
        prefixed(k, "cstmr_")
    }) {
        Some(key) => {
            let found = customers::get(&state.store, merchant_id, &key).await?;
            if found.is_none() {
                errors.add("customerKey", "does not match a customer of this merchant");
            }
            found
        }
        None => None,
    };
    let membership = match kind {
        SessionKind::Checkout => {
            membership_of(
                state,
                merchant_id,
                new.membership_key,
                customer.as_ref(),
                &mut errors,
            )
            .await?
        }
        SessionKind::Portal => {
            if !matches!(new.membership_key, Field::Absent | Field::Null) {
                errors.add(
                    "membershipKey",
                    "is not used by a portal session; open a checkout session to pay a membership",
                );
            }
            None
        }
    };
    let return_url = optional_text(
        new.return_to_website_link,
        "returnToWebsiteLink",
        &mut errors,
        field_rules::https_url,
    );
    let Some(customer) = customer.filter(|_| errors.is_empty()) else {
        return Err(ServiceError::Validation(errors));
    };
    let now = state.merchant_now(merchant_id).await?;
    if let Some(m) = &membership {
        return open_checkout(state, merchant_id, customer.id, m, return_url, now).await;
    }
    let spec = SessionSpec {
        merchant_id,
        customer_id: customer.id,
        membership: None,
        return_url,
    };
    Ok(checkout::open_session(state, spec, now).await?)
}

/// Opens at `now` (the merchant's time) a checkout of the merchant's customer `customer_id`'s
/// membership `m`, which must have something due; the customer goes to `return_url` afterwards
/// (`None`: the membership's `returnToWebsiteLink`). The link's token and the session; a
/// membership with nothing to pay is a conflict.
pub async fn open_checkout(
    state: &AppState,
    merchant_id: i64,
    customer_id: i64,
    m: &Membership,
    return_url: Option<String>,
    now: DateTime<Utc>,
) -> Result<(String, CheckoutSession), ServiceError> {
    if checkout::due_now(state, m, now).await?.is_none() {
        return Err(ServiceError::Conflict(nothing_due(m.state.status)));
    }
    let spec = SessionSpec {
        merchant_id,
        customer_id,
        membership: Some(m),
        return_url,
    };
    Ok(checkout::open_session(state, spec, now).await?)
}

/// The membership a checkout pays: it must be the customer's.
async fn membership_of(
    state: &AppState,
    merchant_id: i64,
    key: Field<String>,
    customer: Option<&Customer>,
    errors: &mut FieldErrors,
) -> Result<Option<Membership>, ServiceError> {
    let Some(key) = required_text(key, "membershipKey", errors, |k| prefixed(k, "mmbrshp_")) else {
        return Ok(None);
    };
    let found = memberships::get(state.store.pool(), merchant_id, &key).await?;
    match (found, customer) {
        (None, _) => {
            errors.add(
                "membershipKey",
                "does not match a membership of this merchant",
            );
            Ok(None)
        }
        (Some(m), Some(c)) if m.customer_id != c.id => {
            errors.add("membershipKey", "belongs to another customer");
            Ok(None)
        }
        (found, _) => Ok(found),
    }
}

/// Why a checkout of a membership in `status` with nothing due is refused.
fn nothing_due(status: MembershipStatus) -> String {
    match status {
        MembershipStatus::Active => {
            "the membership is Active and has nothing due; open a portal session instead".into()
        }
        status => format!("the membership is {status} and cannot be paid"),
    }
}
