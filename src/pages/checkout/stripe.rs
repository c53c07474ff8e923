//! The checkout of a merchant whose default card processor is a Stripe account (DESIGN §17):
//! Stripe.js saves the card with a SetupIntent in the browser and the page posts its id
//! ([`pay_with_stripe`]); recur reads it from Stripe, saves the card and pays (a trial start
//! only saves it). When Stripe asks the customer to authenticate the payment (3-D Secure),
//! the page lets them with Stripe.js ([`authentication_page`]) and posts back
//! ([`authenticated`]), and recur reads the outcome from Stripe.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::context;

use super::{answer_payment, charge, form_page, load, payable_post, see_page, summary};
use super::{Checkout, PromoField};
use crate::http::client_address::ClientAddress;
use crate::pages::csrf;
use crate::pages::failure::PageError;
use crate::pages::form::{decline_message, CardFormState, PageForm, TokenForm};
use crate::pages::render::{allow_form_redirect, page, with_status, Framing};
use crate::pages::session;
use crate::pages::stripe_element::{allow_stripe, authentication, SetupForm};
use crate::processor::stripe::charges::Authentication;
use crate::services::checkout::{self, DueNow};
use crate::services::{stripe_cards, ServiceError};
use crate::state::AppState;
use crate::store::merchants::Mode;

/// `POST /checkout/{token}/stripe`: the SetupIntent Stripe.js confirmed with the card the
/// customer typed. Its card is saved (the customer's payment method once it has paid) and
/// paid with; a SetupIntent Stripe does not show as succeeded for this customer shows the form
/// again with the reason (402), nothing saved.
pub async fn pay_with_stripe(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<SetupForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, due) = match payable_post(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    let merchant_id = checkout.page.merchant.id;
    let customer = &checkout.page.customer;
    match stripe_cards::collected(&state, merchant_id, customer, &form.setup_intent, false).await {
        Ok(method) => charge(&state, t, &checkout, &due, method.id, client).await,
        Err(ServiceError::Validation(_)) => {
            let failed = CardFormState::with_message(t.get("card_not_saved").cloned());
            refused(&state, t, &checkout, &due, failed).await
        }
        Err(ServiceError::PaymentDeclined { code, .. }) => {
            let declined = CardFormState::with_message(Some(decline_message(t, &code)));
            refused(&state, t, &checkout, &due, declined).await
        }
        Err(other) => Err(other.into()),
    }
}

/// `POST /checkout/{token}/authenticated`: the customer is back from authenticating the
/// payment with Stripe.js (whatever the browser says of it): the payment is read from Stripe.
pub async fn authenticated(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let loaded = load(&state, &token).await?;
    let checkout = match csrf::accept_post(&state, t, &headers, &token, &form.csrf_token, loaded)? {
        Ok(checkout) => checkout,
        Err(page) => return Ok(page),
    };
    let merchant_id = checkout.page.merchant.id;
    let key = &checkout.membership.membership_key;
    // What was due before the payment settles: the form shown again after a decline.
    let due = checkout::due_now(&state, &checkout.membership, checkout.page.now).await?;
    let settled = checkout::authenticated(&state, merchant_id, key).await;
    match due {
        Some(due) => answer_payment(&state, t, &checkout, &due, settled).await,
        None => Ok(see_page(&token)),
    }
}

/// The form again with `form`'s message, 402.
async fn refused(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    form: CardFormState,
) -> Result<Response, PageError> {
    form_page(state, t, checkout, due, form, PromoField::default())
        .await
        .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED))
}

/// The step where the customer authenticates the `pending` payment with their bank, through Stripe.js, then posts to
/// `/checkout/{token}/authenticated`.
pub(super) async fn authentication_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    pending: &Authentication,
) -> Result<Response, PageError> {
    let action = format!("/checkout/{}/authenticated", checkout.token);
    page(
        state,
        StatusCode::OK,
        "stripe_authenticate.html",
        context! {
            t => t,
            plan => summary(t, checkout, Some(due)),
            stripe => authentication(state, pending, action),
            csrf_token => csrf::form_token(&state.keys, &checkout.token),
            sandbox => checkout.page.merchant.mode == Mode::Sandbox,
        },
        Some(&checkout.page.brand),
        Framing::Deny,
    )
    .map(|r| allow_form_redirect(r, checkout.page.session.return_url.as_deref()))
    .map(|r| allow_stripe(r, state))
}
