//! The portal's new card for a merchant whose default card processor is a Stripe account
//! (DESIGN §17): Stripe.js saves the card with a SetupIntent (the customer's bank may ask them to
//! authenticate), the page posts its id, and recur reads it from Stripe and makes its card the
//! customer's payment method. Nothing is charged.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::{card_form, posted};
use crate::pages::failure::PageError;
use crate::pages::form::{decline_message, CardFormState, PageForm};
use crate::pages::render::with_status;
use crate::pages::session;
use crate::pages::stripe_element::SetupForm;
use crate::services::{stripe_cards, ServiceError};
use crate::state::AppState;

/// `POST /portal/{token}/payment-method/stripe`: the SetupIntent Stripe.js confirmed. Its card
/// becomes the customer's payment method; one Stripe does not show as saved for this customer
/// shows the form again with the reason (402), nothing changed.
pub async fn replace_with_stripe(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<SetupForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let portal = match posted(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(portal) => portal,
        Err(page) => return Ok(page),
    };
    let merchant_id = portal.merchant.id;
    let saved = stripe_cards::collected(
        &state,
        merchant_id,
        &portal.customer,
        &form.setup_intent,
        true,
    )
    .await;
    let refused = match saved {
        Ok(_) => return Ok(Redirect::to(&format!("/portal/{token}?done=card")).into_response()),
        Err(ServiceError::Validation(_)) => t.get("card_not_saved").cloned(),
        Err(ServiceError::PaymentDeclined { code, .. }) => Some(decline_message(t, &code)),
        Err(other) => return Err(other.into()),
    };
    card_form(
        &state,
        t,
        &portal,
        &token,
        CardFormState::with_message(refused),
    )
    .await
    .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED))
}
