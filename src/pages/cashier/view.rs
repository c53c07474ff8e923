//! The cashier's form and identity-confirmation pages, each allowed to end in a redirect to
//! the session's success or failed URL (the outcome page is [`super::outcome`]).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;
use recur_domain::money::{display_amount, Currency};

use super::Cashier;
use crate::i18n;
use crate::pages::csrf;
use crate::pages::failure::PageError;
use crate::pages::form::FormErrors;
use crate::pages::render::{allow_form_redirect, page, Framing};
use crate::pages::stripe_element::{allow_stripe, authentication, card_element};
use crate::processor::stripe::charges::Authentication;
use crate::services::cashier::stripe;
use crate::services::cashier::Payer;
use crate::state::AppState;
use crate::store::cashier_sessions::PendingPayment;
use crate::store::merchants::Mode;
use crate::store::processors::ProcessorKind;

/// What the form shows besides the session: errors, a message and the values worth keeping.
#[derive(Debug, Default)]
pub(super) struct Entry {
    pub(super) errors: FormErrors,
    pub(super) message: Option<String>,
    pub(super) amount: String,
    pub(super) processor_id: Option<i64>,
    pub(super) holder: String,
    pub(super) expiry: String,
}

/// The order, the amount, the processors and the card form: Stripe's card Element when a
/// connected Stripe account takes the session's cards.
pub(super) async fn form_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
    entry: Entry,
) -> Result<Response, PageError> {
    let fields = &cashier.session.fields;
    let payer = Payer::of(&cashier.session)?;
    let lang = i18n::lang(t);
    let full_name = match &payer.last_name {
        Some(last) => format!("{} {last}", payer.first_name),
        None => payer.first_name.clone(),
    };
    let stripe = match &cashier.stripe {
        Some(account) => {
            let setup = stripe::setup(state, &cashier.session, account).await?;
            Some(card_element(state, &setup, "/cashier/stripe".into()))
        }
        None => None,
    };
    let chosen = entry
        .processor_id
        .filter(|id| cashier.processors.iter().any(|p| p.processor_id == *id))
        .or(cashier.processors.first().map(|p| p.processor_id));
    let context = context! {
        t => t,
        order_id => fields.order_id,
        description => fields.cashier_description,
        currency => cashier.currency.code(),
        currency_symbol => cashier.currency.symbol(),
        minor_unit_step => step(cashier.currency),
        locked_amount => fields.locked_amount.map(|a| display_amount(a, cashier.currency, lang)),
        amount => entry.amount,
        payout => fields.is_payout,
        payer => context! {
            name => full_name,
            email => payer.email,
            street => payer.street,
            zip_code => payer.zip_code,
            city => payer.city,
            region => payer.region,
            country => payer.country,
            phone => payer.phone,
        },
        processors => cashier.processors.iter().map(|p| context! {
            id => p.processor_id,
            name => p.name,
            card => p.kind == ProcessorKind::Card,
            checked => Some(p.processor_id) == chosen,
        }).collect::<Vec<_>>(),
        hidden => cashier.link_fields(),
        csrf_token => csrf::form_token(&state.keys, &cashier.token),
        errors => entry.errors,
        message => entry.message,
        holder => if entry.holder.is_empty() { full_name.clone() } else { entry.holder },
        expiry => entry.expiry,
        sandbox => cashier.merchant.mode == Mode::Sandbox,
        stripe => stripe,
    };
    page(
        state,
        StatusCode::OK,
        "cashier.html",
        context,
        Some(&cashier.brand),
        Framing::Embeddable,
    )
    .map(|r| allow_redirects(r, cashier))
    .map(|r| match cashier.stripe {
        Some(_) => allow_stripe(r, state),
        None => r,
    })
}

/// The step where the customer authenticates the parked Stripe payment of `amount` with
/// Stripe.js, then posts to `/cashier/stripe/authenticated`.
pub(super) fn authentication_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
    amount: i64,
    pending: &Authentication,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    page(
        state,
        StatusCode::OK,
        "stripe_authenticate.html",
        context! {
            t => t,
            plan => context! { due_today => display_amount(amount, cashier.currency, lang) },
            stripe => authentication(state, pending, "/cashier/stripe/authenticated".into()),
            hidden => cashier.link_fields(),
            csrf_token => csrf::form_token(&state.keys, &cashier.token),
            sandbox => cashier.merchant.mode == Mode::Sandbox,
        },
        Some(&cashier.brand),
        Framing::Embeddable,
    )
    .map(|r| allow_redirects(r, cashier))
    .map(|r| allow_stripe(r, state))
}

/// 503: Stripe has not decided the parked payment yet (or did not answer); the page is to be
/// loaded again.
pub(super) fn waiting_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
) -> Result<Response, PageError> {
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    page(
        state,
        StatusCode::SERVICE_UNAVAILABLE,
        "notice.html",
        context! {
            t => t,
            title => text("processor_waiting_title"),
            text => text("processor_waiting_text"),
        },
        Some(&cashier.brand),
        Framing::Embeddable,
    )
}

/// The identity-confirmation step of a parked card.
pub(super) fn challenge_page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
    pending: &PendingPayment,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    page(
        state,
        StatusCode::OK,
        "challenge.html",
        context! {
            t => t,
            plan => context! {
                due_today => display_amount(pending.amount, cashier.currency, lang),
            },
            card => context! { brand => pending.card.brand, last4 => pending.card.last4 },
            action => "/cashier/confirm",
            hidden => cashier.link_fields(),
            csrf_token => csrf::form_token(&state.keys, &cashier.token),
            sandbox => cashier.merchant.mode == Mode::Sandbox,
        },
        Some(&cashier.brand),
        Framing::Embeddable,
    )
    .map(|r| allow_redirects(r, cashier))
}

/// The cashier's forms may end in a redirect to the session's success or failed URL.
fn allow_redirects(response: Response, cashier: &Cashier) -> Response {
    let fields = &cashier.session.fields;
    let response = allow_form_redirect(response, fields.success_redirect_url.as_deref());
    allow_form_redirect(response, fields.failed_redirect_url.as_deref())
}

/// The smallest step of the amount input: `0.01` for EUR, `1` for JPY, `0.001` for BHD.
fn step(currency: Currency) -> String {
    match currency.exponent() {
        0 => "1".into(),
        n => format!("0.{}1", "0".repeat(n as usize - 1)),
    }
}
