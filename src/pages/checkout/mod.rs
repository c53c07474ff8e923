//! The hosted checkout behind a checkout session's link, `/checkout/{token}`: what is bought and
//! charged today, the card form (and the customer's saved card, paid with one button), the
//! identity-confirmation step some cards ask for, and the confirmation. A membership with a
//! free trial is not charged: the page says so, collects the card for the first charge at the
//! trial's end and starts the trial. A first payment or trial start without a coupon takes a
//! promotion code, a form of its own. Paying twice (double click, reload, two tabs) never charges
//! twice: the payment runs under the membership's lock, and a membership with nothing left to pay
//! shows the confirmation instead of charging. A merchant whose default card processor is a
//! Stripe account gets Stripe's card Element instead of recur's card fields ([`stripe`]); one
//! with a SEPA processor offers euro memberships a SEPA Direct Debit mandate too ([`sepa`]).

mod sepa;
mod stripe;

pub use sepa::pay_by_mandate;
pub use stripe::{authenticated, pay_with_stripe};

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::{context, Value};
use recur_domain::coupon::{self, Refusal};
use recur_domain::membership::{accepts_coupon, PromotionCode};
use recur_domain::money::display_amount;
use recur_domain::status::MembershipStatus;
use serde::Deserialize;

use super::form::{decline_message, CardForm, CardFormState, PageForm, TokenForm};
use super::format::{display_date, interval_phrase};
use super::invoice_view::{discount_label, tax_label};
use super::render::{allow_form_redirect, page, see_other, with_status, Framing};
use super::session::{self, EnteredCard, PageSession};
use super::stripe_element::{allow_stripe, card_element};
use super::{csrf, expired};
use crate::http::client_address::ClientAddress;
use crate::i18n;
use crate::ids;
use crate::pages::failure::PageError;
use crate::services::checkout::{self, DueNow, Purpose};
use crate::services::{stripe_cards, ServiceError};
use crate::state::AppState;
use crate::store::charges::PagePayment;
use crate::store::checkout_sessions::{self, SessionKind};
use crate::store::memberships::{self, Membership};
use crate::store::merchants::Mode;
use crate::store::payment_methods;

/// A checkout session with its membership.
struct Checkout {
    page: PageSession,
    membership: Membership,
    token: String,
}

async fn load(state: &AppState, token: &str) -> Result<Option<Checkout>, PageError> {
    let Some(page) = session::open(state, token, SessionKind::Checkout).await? else {
        return Ok(None);
    };
    let Some(membership_id) = page.session.membership_id else {
        return Ok(None);
    };
    let membership = memberships::by_id(state.store.pool(), page.merchant.id, membership_id)
        .await?
        .ok_or(PageError::NotFound)?;
    Ok(Some(Checkout {
        page,
        membership,
        token: token.to_string(),
    }))
}

/// `GET /checkout/{token}`: the card form, the confirmation step, or the outcome.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(checkout) = load(&state, &token).await? else {
        return expired::page_for(&state, t);
    };
    if checkout.page.session.challenge_pending {
        return challenge_page(&state, t, &checkout).await;
    }
    match checkout::due_now(&state, &checkout.membership, checkout.page.now).await? {
        Some(due) => {
            let card = CardFormState::default();
            form_page(&state, t, &checkout, &due, card, PromoField::default()).await
        }
        None => outcome_page(&state, t, &checkout).await,
    }
}

/// `POST /checkout/{token}`: checks the card, then asks for identity confirmation or pays.
pub async fn pay(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<CardForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, due) = match payable_post(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    let card = match form.check(checkout.page.now, t) {
        Ok(card) => card,
        Err(errors) => {
            return form_page(
                &state,
                t,
                &checkout,
                &due,
                CardFormState::rejected(&form, errors),
                PromoField::default(),
            )
            .await
            .map(|r| with_status(r, StatusCode::BAD_REQUEST));
        }
    };
    match session::enter_card(&state, &checkout.page, card).await? {
        EnteredCard::Ready(method) => charge(&state, t, &checkout, &due, method.id, client).await,
        EnteredCard::NeedsConfirmation => Ok(see_page(&token)),
    }
}

/// `POST /checkout/{token}/saved`: pays with the customer's saved card (one button), after the
/// identity-confirmation step when the card asks for one.
pub async fn pay_saved(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, due) = match payable_post(&state, t, &headers, &token, &form.csrf_token).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    match session::saved_card(&state, &checkout.page).await? {
        Some(EnteredCard::Ready(method)) => {
            charge(&state, t, &checkout, &due, method.id, client).await
        }
        Some(EnteredCard::NeedsConfirmation) | None => Ok(see_page(&token)),
    }
}

/// A card post's checkout, once its form token is accepted, and what it collects now; `Err`
/// holds the page to answer instead (a refused form or a gone link, or nothing left to pay).
async fn payable_post(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    token: &str,
    csrf_token: &str,
) -> Result<Result<(Checkout, DueNow), Response>, PageError> {
    let loaded = load(state, token).await?;
    let checkout = match csrf::accept_post(state, t, headers, token, csrf_token, loaded)? {
        Ok(checkout) => checkout,
        Err(page) => return Ok(Err(page)),
    };
    Ok(
        match checkout::due_now(state, &checkout.membership, checkout.page.now).await? {
            Some(due) => Ok((checkout, due)),
            None => Err(see_page(token)),
        },
    )
}

/// `POST /checkout/{token}/confirm`: the outcome of the identity-confirmation step.
pub async fn confirm(
    State(state): State<AppState>,
    client: ClientAddress,
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
    let Some(method) = session::confirmed_card(&state, &checkout.page).await? else {
        return Ok(see_page(&token));
    };
    let Some(due) = checkout::due_now(&state, &checkout.membership, checkout.page.now).await?
    else {
        return Ok(see_page(&token));
    };
    if form.action != "confirm" {
        let failed = CardFormState::with_message(t.get("challenge_failed").cloned());
        return form_page(&state, t, &checkout, &due, failed, PromoField::default())
            .await
            .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED));
    }
    charge(&state, t, &checkout, &due, method.id, client).await
}

/// The promotion code forms as posted: apply (with the code) and remove (the token alone).
#[derive(Debug, Deserialize)]
pub struct CodeForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    csrf_token: String,
    /// The code as typed.
    #[serde(default)]
    code: String,
}

/// The promotion code field as the page shows it: the code typed and why it was refused.
#[derive(Debug, Default)]
struct PromoField {
    typed: String,
    error: Option<String>,
}

/// `POST /checkout/{token}/coupon`: redeems the promotion code typed for the membership's first
/// payment or trial start ([`coupons::apply_at_checkout`]: an Incomplete membership without a
/// coupon) and shows the page again with its discount (303). A code that is no code
/// ([`coupon::code`]) or that the coupon rules refuse shows the page with the reason under the
/// field (400) and counts nothing. A membership that has a coupon by now (the form posted twice),
/// has been paid, or is paying, shows the page as it is.
pub async fn apply_code(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<CodeForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, due) = match coupon_post(&state, t, &headers, &token, &form).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    let typed = form.code.trim();
    if coupon::code(typed).is_err() {
        return refused_code(&state, t, &checkout, &due, typed, "promo_malformed").await;
    }
    let merchant_id = checkout.page.merchant.id;
    let key = &checkout.membership.membership_key;
    match checkout::apply_promotion_code(&state, merchant_id, key, typed).await {
        Ok(Ok(_)) => Ok(see_page(&token)),
        Ok(Err(refusal)) => {
            let why = refusal_text(refusal);
            refused_code(&state, t, &checkout, &due, typed, why).await
        }
        Err(ServiceError::Conflict(_) | ServiceError::PaymentInProgress) => Ok(see_page(&token)),
        Err(other) => Err(other.into()),
    }
}

/// `POST /checkout/{token}/coupon/remove`: takes back the promotion code the customer applied
/// ([`coupons::remove_at_checkout`]: the coupon gets its redemption back) and shows the page
/// again without it (303). A coupon the merchant gave, a membership paid or paying by now, or a
/// code removed meanwhile (the form posted twice) shows the page as it is.
pub async fn remove_code(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    PageForm(form): PageForm<CodeForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (checkout, _) = match coupon_post(&state, t, &headers, &token, &form).await? {
        Ok(accepted) => accepted,
        Err(page) => return Ok(page),
    };
    let merchant_id = checkout.page.merchant.id;
    let key = &checkout.membership.membership_key;
    match checkout::remove_promotion_code(&state, merchant_id, key).await {
        Ok(_) | Err(ServiceError::Conflict(_) | ServiceError::PaymentInProgress) => {
            Ok(see_page(&token))
        }
        Err(other) => Err(other.into()),
    }
}

/// A promotion code form's checkout and what it collects now, as [`payable_post`] accepts them;
/// while an identity check of a card is pending the code waits, and `Err` holds the page as it
/// is (303), as it does for a refused form, a gone link or nothing left to pay.
async fn coupon_post(
    state: &AppState,
    t: &BTreeMap<String, String>,
    headers: &HeaderMap,
    token: &str,
    form: &CodeForm,
) -> Result<Result<(Checkout, DueNow), Response>, PageError> {
    Ok(
        match payable_post(state, t, headers, token, &form.csrf_token).await? {
            Ok((checkout, _)) if checkout.page.session.challenge_pending => Err(see_page(token)),
            accepted => accepted,
        },
    )
}

/// The page again with the promotion code `typed` and the string `why` under it (400).
async fn refused_code(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    typed: &str,
    why: &str,
) -> Result<Response, PageError> {
    let promo = PromoField {
        typed: typed.to_string(),
        error: t.get(why).cloned(),
    };
    form_page(state, t, checkout, due, CardFormState::default(), promo)
        .await
        .map(|r| with_status(r, StatusCode::BAD_REQUEST))
}

/// The string that tells a customer why their promotion code was refused.
fn refusal_text(refusal: Refusal) -> &'static str {
    match refusal {
        Refusal::Unknown => "promo_unknown",
        Refusal::Archived => "promo_archived",
        Refusal::Expired => "promo_expired",
        Refusal::Exhausted => "promo_exhausted",
        Refusal::WrongCurrency => "promo_wrong_currency",
    }
}

/// The promotion code of a first payment or trial start: the form while the membership has no
/// coupon, the code once it has one, with its remove button when the customer may take it back
/// ([`accepts_coupon`]); nothing on a pay-now page (its invoice is fixed).
fn promotion(checkout: &Checkout, due: &DueNow, promo: PromoField) -> Option<Value> {
    if due.purpose == Purpose::PayNow {
        return None;
    }
    let state = &checkout.membership.state;
    Some(match &state.discount {
        Some(discount) => context! {
            applied => discount.coupon.code,
            remove => accepts_coupon(state.status, Some(discount), PromotionCode::Remove)
                .is_ok()
                .then(|| format!("/checkout/{}/coupon/remove", checkout.token)),
        },
        None => context! {
            action => format!("/checkout/{}/coupon", checkout.token),
            value => promo.typed,
            error => promo.error,
        },
    })
}

/// Pays with the card `method_id` (a trial start saves it and starts the trial), for the
/// customer at `client`, and shows where that leads.
async fn charge(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    method_id: i64,
    client: ClientAddress,
) -> Result<Response, PageError> {
    let merchant_id = checkout.page.merchant.id;
    let key = &checkout.membership.membership_key;
    let page = page_payment(checkout, &client);
    let paid = checkout::pay(state, merchant_id, key, method_id, page).await;
    answer_payment(state, t, checkout, due, paid.map(|_| ())).await
}

/// Where the customer of `checkout` pays in person, from `client`.
fn page_payment(checkout: &Checkout, client: &ClientAddress) -> PagePayment {
    PagePayment {
        session_id: ids::named_uuid(&format!(
            "checkout-session:{}",
            checkout.page.session.session_key
        )),
        client_ip: client.to_string(),
    }
}

/// The page that follows a payment's result: the merchant's return link (or the confirmation)
/// once paid, the form again with the reason after a decline, the step where the customer
/// authenticates when Stripe asks them to.
async fn answer_payment(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    paid: Result<(), ServiceError>,
) -> Result<Response, PageError> {
    match paid {
        Ok(()) => {
            checkout_sessions::complete(
                state.store.pool(),
                &checkout.page.session,
                checkout.page.now,
            )
            .await?;
            Ok(match &checkout.page.session.return_url {
                Some(url) => see_other(url).unwrap_or_else(|| see_page(&checkout.token)),
                None => see_page(&checkout.token),
            })
        }
        Err(ServiceError::PaymentDeclined { code, .. }) => {
            let declined = CardFormState::with_message(Some(decline_message(t, &code)));
            form_page(state, t, checkout, due, declined, PromoField::default())
                .await
                .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED))
        }
        Err(ServiceError::AuthenticationRequired(authentication)) => {
            stripe::authentication_page(state, t, checkout, due, &authentication).await
        }
        // Paid meanwhile (another tab), or a payment in flight: the page tells which.
        Err(ServiceError::Conflict(_) | ServiceError::PaymentInProgress) => {
            Ok(see_page(&checkout.token))
        }
        Err(other) => Err(other.into()),
    }
}

/// The plan, what is due today and when the next charge falls; for a trial start, the trial's
/// days and end and the first charge after it, with its breakdown (nothing is due today).
fn summary(t: &BTreeMap<String, String>, checkout: &Checkout, due: Option<&DueNow>) -> Value {
    let m = &checkout.membership;
    let lang = i18n::lang(t);
    let currency = m.currency();
    let money = |minor: i64| display_amount(minor, currency, lang);
    let price = m.state.price;
    let trial = due.filter(|d| d.purpose == Purpose::TrialStart);
    context! {
        subscription_name => m.subscription_name,
        description => m.order_description,
        price => money(m.state.price.total),
        interval => interval_phrase(t, m.state.cycle.interval_type, m.state.cycle.interval_count),
        unit_line => match (price.units(), price.unit_price()) {
            (Some(units), Some(unit)) if units > 1 => Some(format!("{units} × {}", money(unit))),
            _ => None,
        },
        due_today => due.map(|d| money(d.amount)),
        subtotal => due.map(|d| money(d.subtotal)),
        discount => due.filter(|d| d.discount > 0).map(|d| context! {
            label => discount_label(t, d.coupon.as_ref()),
            amount => money(-d.discount),
        }),
        taxes => due.map(|d| d.taxes.iter().map(|tax| context! {
            label => tax_label(t, tax),
            amount => money(tax.amount),
        }).collect::<Vec<_>>()),
        reverse_charge => due.filter(|d| d.reverse_charge).map(|_| t.get("reverse_charge")),
        credit => due.filter(|d| d.credit_applied > 0).map(|d| money(-d.credit_applied)),
        next_charge => due.and_then(|d| d.next_charge).map(|at| display_date(at, lang)),
        trial => trial.map(|d| context! {
            days => m.state.trial_days,
            until => d.next_charge.map(|at| display_date(at, lang)),
            first_charge => d.first_charge.map(money),
        }),
        pay_now => due.map(|d| d.purpose == Purpose::PayNow),
        canceled => m.state.status == MembershipStatus::Canceled,
        email => checkout.page.customer.fields.email,
        end_date => m.state.end_date.map(|at| display_date(at, lang)),
    }
}

/// The card form, with a one-button payment by the customer's saved card when they have one,
/// and the promotion code field (`promo`) of a first payment or trial start. Its policy lets the
/// form's answer redirect to the merchant's return link (browsers apply `form-action` to
/// redirects too).
async fn form_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
    due: &DueNow,
    form: CardFormState,
    promo: PromoField,
) -> Result<Response, PageError> {
    let merchant_id = checkout.page.merchant.id;
    let saved =
        payment_methods::current(state.store.pool(), merchant_id, checkout.page.customer.id)
            .await?;
    let stripe = stripe_cards::setup(state, merchant_id, &checkout.page.customer)
        .await?
        .map(|setup| {
            card_element(
                state,
                &setup,
                format!("/checkout/{}/stripe", checkout.token),
            )
        });
    let uses_stripe = stripe.is_some();
    let mandate = sepa::offer(state, t, checkout).await?;
    page(
        state,
        StatusCode::OK,
        "checkout.html",
        context! {
            t => t,
            plan => summary(t, checkout, Some(due)),
            promo => promotion(checkout, due, promo),
            action => format!("/checkout/{}", checkout.token),
            saved_card => saved.map(|c| context! { brand => c.brand, last4 => c.last4 }),
            saved_action => format!("/checkout/{}/saved", checkout.token),
            csrf_token => csrf::form_token(&state.keys, &checkout.token),
            errors => form.errors,
            message => form.message,
            holder => form.holder_or(&checkout.page.customer.fields),
            expiry => form.expiry,
            sandbox => checkout.page.merchant.mode == Mode::Sandbox,
            stripe => stripe,
            sepa => mandate,
        },
        Some(&checkout.page.brand),
        Framing::Deny,
    )
    .map(|r| allow_form_redirect(r, checkout.page.session.return_url.as_deref()))
    .map(|r| {
        if uses_stripe {
            allow_stripe(r, state)
        } else {
            r
        }
    })
}

async fn challenge_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
) -> Result<Response, PageError> {
    let due = checkout::due_now(state, &checkout.membership, checkout.page.now).await?;
    let card = session::card_awaiting_confirmation(state, &checkout.page).await?;
    page(
        state,
        StatusCode::OK,
        "challenge.html",
        context! {
            t => t,
            plan => summary(t, checkout, due.as_ref()),
            card => card.map(|c| context! { brand => c.brand, last4 => c.last4 }),
            action => format!("/checkout/{}/confirm", checkout.token),
            csrf_token => csrf::form_token(&state.keys, &checkout.token),
            sandbox => checkout.page.merchant.mode == Mode::Sandbox,
        },
        Some(&checkout.page.brand),
        Framing::Deny,
    )
    .map(|r| allow_form_redirect(r, checkout.page.session.return_url.as_deref()))
}

/// The page of a checkout with nothing (left) to pay: paid (the membership Active, or this
/// checkout paid an invoice of a Canceled one), its trial started (Trialing: when the trial ends
/// and what the first charge will be), in progress, or no longer payable.
async fn outcome_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    checkout: &Checkout,
) -> Result<Response, PageError> {
    let m = &checkout.membership;
    let lang = i18n::lang(t);
    let active = m.state.status == MembershipStatus::Active;
    let paid = active || checkout.page.session.completed_at.is_some();
    let trial = match m.state.status {
        MembershipStatus::Trialing => {
            let taxation = checkout::taxation(state, m).await?;
            let first_charge = m
                .state
                .next_renewal(&m.subscription_name, &taxation)
                .map(|(_, plan)| display_amount(plan.amount_due, m.currency(), lang));
            Some(context! {
                until => m.state.trial_end.map(|at| display_date(at, lang)),
                first_charge => first_charge,
            })
        }
        _ => None,
    };
    page(
        state,
        StatusCode::OK,
        "checkout_done.html",
        context! {
            t => t,
            plan => summary(t, checkout, None),
            trial => trial,
            paid => paid,
            active => active,
            status => m.state.status.as_str(),
            next_billing => m.state.next_billing_date().map(|at| display_date(at, lang)),
            return_url => checkout.page.session.return_url,
        },
        Some(&checkout.page.brand),
        Framing::Deny,
    )
}

/// 303 back to the checkout page (post/redirect/get: a reload never re-posts the card).
fn see_page(token: &str) -> Response {
    Redirect::to(&format!("/checkout/{token}")).into_response()
}
