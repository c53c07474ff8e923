//! The hosted checkout's operations (DESIGN §6, §15): what a checkout collects now, the
//! promotion code a customer applies or takes back before paying, saving the card they enter,
//! and paying (by card, or by a SEPA mandate signed on the page). The pages render; every rule and write is the billing engine's, reached here.

use chrono::{DateTime, Utc};
use recur_domain::card::CardNumber;
use recur_domain::coupon::Refusal;
use recur_domain::tax::Taxation;
use recur_domain::validation::FieldErrors;

use super::sepa::mandates::{self, Consent, MandateInput};
use super::ServiceError;
use crate::billing::charging::{self, Settled};
use crate::billing::{checkout, coupons, lifecycle, taxation};
use crate::http::input::Field;
use crate::state::AppState;
use crate::store::charges::{self, PagePayment};
use crate::store::customers::Customer;
use crate::store::memberships::{self, Membership};
use crate::store::payment_methods::PaymentMethod;

pub use crate::billing::checkout::{DueNow, Purpose};

/// What a checkout of `m` would collect at `at` (the merchant's time): its first period, a
/// trial start, or the oldest open invoice pay-now collects; `None` when nothing is due.
pub async fn due_now(
    state: &AppState,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<Option<DueNow>, ServiceError> {
    Ok(checkout::due_now(state, m, at).await?)
}

/// The taxes `m` bills with now (its rates, the parties' reverse charge).
pub async fn taxation(state: &AppState, m: &Membership) -> Result<Taxation, ServiceError> {
    Ok(taxation::of(state.store.pool(), m).await?)
}

/// The promotion code `code` the customer typed on the checkout of the membership `key`:
/// redeemed and given to it when it owes its first payment (or starts its trial) and has no
/// coupon yet (`Err(Refusal)`: the code is not redeemable, nothing counted); another state is a
/// conflict.
pub async fn apply_promotion_code(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    code: &str,
) -> Result<Result<Membership, Refusal>, ServiceError> {
    Ok(coupons::apply_at_checkout(state, merchant_id, key, code).await?)
}

/// Takes back the promotion code the customer applied on the checkout of the membership `key`
/// before paying: the coupon gets its redemption back.
pub async fn remove_promotion_code(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, ServiceError> {
    Ok(coupons::remove_at_checkout(state, merchant_id, key).await?)
}

/// Hands the card the customer entered to the processor and saves it for them (`attached`:
/// renewals use it at once; otherwise once it has paid).
pub async fn save_card(
    state: &AppState,
    merchant_id: i64,
    customer_id: i64,
    card: &CardNumber,
    attached: bool,
    at: DateTime<Utc>,
) -> Result<PaymentMethod, ServiceError> {
    Ok(checkout::save_card(state, merchant_id, customer_id, card, attached, at).await?)
}

/// Settles the payment of the membership `key` that waited for its customer to authenticate it
/// (DESIGN §17): the attempt is read again from Stripe, which decided by now or still waits
/// ([`ServiceError::AuthenticationRequired`] again). A decline is `PaymentDeclined`; a
/// membership with no payment waiting (settled meanwhile, or cancelled once the customer took
/// longer than the authentication window) is a `Conflict`, and nothing changes.
pub async fn authenticated(
    state: &AppState,
    merchant_id: i64,
    key: &str,
) -> Result<(), ServiceError> {
    let pool = state.store.pool();
    let m = memberships::get(pool, merchant_id, key)
        .await?
        .ok_or(ServiceError::NotFound)?;
    let Some(charge) = charges::pending_for_membership(pool, merchant_id, m.id).await? else {
        return Err(ServiceError::Conflict(
            "no payment of this membership awaits authentication".into(),
        ));
    };
    let at = state.merchant_now(merchant_id).await?;
    match charging::execute(state, &charge, at).await? {
        Settled::Declined(done) => Err(ServiceError::PaymentDeclined {
            code: done.decline_code.unwrap_or_default(),
            reason: done.decline_reason.unwrap_or_default(),
        }),
        Settled::Approved(_) | Settled::Scheduled(_) | Settled::AlreadyRecorded => Ok(()),
    }
}

/// Pays what the checkout of the membership `key` collects with the saved card `card` (its
/// first period, a trial start or an open invoice); a decline is `PaymentDeclined`.
pub async fn pay(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    card: i64,
    page: PagePayment,
) -> Result<Membership, ServiceError> {
    Ok(lifecycle::pay_checkout(state, merchant_id, key, card, page).await?)
}

/// A mandate signed on the hosted checkout, as typed.
#[derive(Debug, Default)]
pub struct SignedMandate {
    /// The account holder.
    pub account_holder: Field<String>,
    /// The IBAN.
    pub iban: Field<String>,
    /// Whether the customer ticked the mandate's consent.
    pub consent: bool,
}

/// Pays what the checkout of the membership `key` collects by SEPA Direct Debit (DESIGN §18):
/// the mandate `signed` (with the consent's client address and user agent) is recorded for
/// the merchant's SEPA processor as the customer's payment method, and the first payment or
/// pay-now is debited with it: the membership stands as paid and the customer is
/// pre-notified. Refused fields (`accountHolder`, `iban`, `consent`) are listed together,
/// nothing stored.
pub async fn pay_by_mandate(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    customer: &Customer,
    signed: SignedMandate,
    consent: Consent,
    page: PagePayment,
) -> Result<Membership, ServiceError> {
    let creditor = mandates::checkout_creditor(state, merchant_id)
        .await?
        .ok_or_else(|| {
            ServiceError::Conflict("the merchant collects no SEPA Direct Debit".into())
        })?;
    let mut errors = FieldErrors::new();
    if !signed.consent {
        errors.add("consent", "the mandate must be accepted");
    }
    let input = MandateInput {
        payment_processor_id: Field::Present(creditor.processor_id),
        iban: signed.iban,
        account_holder: signed.account_holder,
        ..MandateInput::default()
    };
    let (method, _) =
        mandates::record(state, merchant_id, customer, input, Some(consent), errors).await?;
    pay(state, merchant_id, key, method.id, page).await
}
