//! The portal's price switch (DESIGN §15): a membership made from a catalog price, Active or
//! Trialing, may move to another active price of the same product in its currency, for its
//! quantity. A confirmation page says what happens before anything does: with the merchant's
//! `portalPlanChange` at `now`, the prorated amount charged (or credited) now, computed by the
//! domain's proration exactly as the update will; with `nextPeriod`, the renewal from which the
//! new price applies, nothing charged now. Its form pins that figure: a confirmation whose
//! figure no longer holds (time went by, the credit changed) shows the page again instead of
//! charging something else. A change scheduled for the next period is shown on the portal and
//! can be dropped.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::{context, Value};
use recur_domain::money::display_amount;
use serde::Deserialize;

use super::portal_membership;
use crate::i18n;
use crate::pages::csrf;
use crate::pages::failure::PageError;
use crate::pages::form::{decline_message, PageForm, TokenForm};
use crate::pages::format::{display_date, interval_phrase};
use crate::pages::notice;
use crate::pages::render::{page as render, with_status, Framing};
use crate::pages::session::{self, PageSession};
use crate::services::memberships;
use crate::services::memberships::switch::{effect, offers, switchable, Effect, Offer};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::memberships::Membership;
use crate::store::payment_methods::{self, PaymentMethod};

/// An offer as the portal lists it under its membership.
pub(super) fn offer_view(
    t: &BTreeMap<String, String>,
    lang: &str,
    token: &str,
    m: &Membership,
    offer: &Offer,
) -> Value {
    let money = |minor: i64| display_amount(minor, m.currency(), lang);
    let cycle = offer.price.cycle;
    context! {
        price_id => offer.price.price_key,
        unit => money(offer.price.unit_amount),
        interval => interval_phrase(t, cycle.interval_type, cycle.interval_count),
        quantity => offer.quantity(),
        total => money(offer.new.per_period()),
        url => format!("/portal/{token}/memberships/{}/switch/{}", m.membership_key, offer.price.price_key),
    }
}

/// The change scheduled for `m`'s next period, as the portal shows it ("Changes to … on …")
/// with the form that drops it; `None` when nothing is scheduled.
pub(super) fn pending_view(
    t: &BTreeMap<String, String>,
    lang: &str,
    token: &str,
    m: &Membership,
) -> Option<Value> {
    let change = m.state.scheduled.as_ref()?;
    if m.state.status.is_terminal() {
        return None;
    }
    let interval = interval_phrase(t, change.cycle.interval_type, change.cycle.interval_count);
    let text = match m.state.scheduled_change_at() {
        Some(at) => t
            .get("switch_pending")?
            .replace("{date}", &display_date(at, lang)),
        None => t.get("switch_pending_undated")?.clone(),
    };
    let text = text
        .replace(
            "{price}",
            &display_amount(change.price.per_period(), m.currency(), lang),
        )
        .replace("{interval}", &interval);
    Some(context! {
        text => text,
        drop_url => format!("/portal/{token}/memberships/{}/pending-change/drop", m.membership_key),
    })
}

/// What the customer chose, once checked against the membership.
enum Choice {
    /// One of the membership's offers.
    Offer(Box<Offer>),
    /// Nothing to switch to (any more): back to the portal, whose banner (`?done=`) says why.
    Portal(&'static str),
    /// Not a price this membership may switch to: a 404 page.
    Refused,
}

async fn choose(
    state: &AppState,
    portal: &PageSession,
    m: &Membership,
    price_id: &str,
) -> Result<Choice, PageError> {
    if m.price_key.as_deref() == Some(price_id) {
        return Ok(Choice::Portal("switched"));
    }
    if m.state.scheduled_switch(portal.plan_change) == Some(price_id) {
        return Ok(Choice::Portal("scheduled"));
    }
    if m.price_key.is_none() {
        return Ok(Choice::Refused);
    }
    if !switchable(portal.plan_change, m) {
        return Ok(Choice::Portal("changed"));
    }
    let offers = offers(state, portal.plan_change, m).await?;
    Ok(offers
        .into_iter()
        .find(|o| o.price.price_key == price_id)
        .map_or(Choice::Refused, |offer| Choice::Offer(Box::new(offer))))
}

/// Back to the portal, with the banner of `done`.
fn back(token: &str, done: &str) -> Response {
    Redirect::to(&format!("/portal/{token}?done={done}")).into_response()
}

/// A switch being confirmed: the membership, the offer and what switching does.
struct Switch<'a> {
    token: &'a str,
    portal: &'a PageSession,
    m: &'a Membership,
    offer: Offer,
    effect: Effect,
    /// The card a charge goes to.
    card: Option<PaymentMethod>,
}

impl<'a> Switch<'a> {
    async fn new(
        state: &AppState,
        token: &'a str,
        portal: &'a PageSession,
        m: &'a Membership,
        offer: Offer,
    ) -> Result<Self, PageError> {
        let effect = effect(state, portal.plan_change, portal.now, m, &offer).await?;
        let card =
            payment_methods::current(state.store.pool(), portal.merchant.id, portal.customer.id)
                .await?;
        Ok(Self {
            token,
            portal,
            m,
            offer,
            effect,
            card,
        })
    }

    /// The confirmation page, with `message` (a decline, a figure that moved) above the form.
    fn page(
        &self,
        state: &AppState,
        t: &BTreeMap<String, String>,
        message: Option<String>,
    ) -> Result<Response, PageError> {
        let lang = i18n::lang(t);
        let (m, offer, token) = (self.m, &self.offer, self.token);
        let money = |minor: i64| display_amount(minor, m.currency(), lang);
        let phrase = |c: recur_domain::calendar::BillingCycle| {
            interval_phrase(t, c.interval_type, c.interval_count)
        };
        let text = |key: &str| t.get(key).cloned().unwrap_or_default();
        let new_price = format!(
            "{} {}",
            money(offer.new.per_period()),
            phrase(offer.price.cycle)
        );
        let mut facts = vec![
            fact(
                t,
                "switch_current",
                "current-price",
                format!(
                    "{} {}",
                    money(m.state.price.per_period()),
                    phrase(m.state.cycle)
                ),
            ),
            fact(t, "switch_new", "new-price", new_price.clone()),
        ];
        let starts = match &self.effect {
            Effect::Scheduled(at) => display_date(*at, lang),
            Effect::Prorated(_) | Effect::Unprorated => text("switch_starts_now"),
        };
        facts.push(fact(t, "switch_starts", "switch-starts", starts));
        let (explanation, next_billing) = match &self.effect {
            Effect::Prorated(p) => {
                if p.plan.net < 0 {
                    facts.push(fact(
                        t,
                        "switch_credited_now",
                        "due-now",
                        money(-p.plan.net),
                    ));
                } else {
                    facts.push(fact(t, "switch_charged_now", "due-now", money(p.plan.net)));
                }
                if p.plan.credit_used > 0 {
                    facts.push(fact(
                        t,
                        "switch_from_credit",
                        "from-credit",
                        money(p.plan.credit_used),
                    ));
                    facts.push(fact(
                        t,
                        "switch_to_card",
                        "to-card",
                        money(p.plan.amount_due()),
                    ));
                }
                let key = match p.new_period {
                    Some(_) => "switch_text_new_period",
                    None if p.plan.net < 0 => "switch_text_credit",
                    None => "switch_text_prorated",
                };
                (key, p.new_period.map(|p| p.end))
            }
            Effect::Unprorated => {
                facts.push(fact(
                    t,
                    "switch_charged_now",
                    "due-now",
                    text("switch_nothing"),
                ));
                ("switch_text_now", None)
            }
            Effect::Scheduled(_) => {
                facts.push(fact(
                    t,
                    "switch_charged_now",
                    "due-now",
                    text("switch_nothing"),
                ));
                ("switch_text_scheduled", None)
            }
        };
        let next_billing = match self.effect {
            Effect::Scheduled(_) => None,
            _ => next_billing.or_else(|| m.state.next_billing_date()),
        };
        if let Some(at) = next_billing {
            facts.push(fact(
                t,
                "next_billing",
                "next-billing",
                display_date(at, lang),
            ));
        }
        let charges = self.effect.charged() > 0;
        render(
            state,
            StatusCode::OK,
            "portal_switch.html",
            context! {
                t => t,
                name => m.subscription_name,
                new_price => new_price,
                facts => facts,
                explanation => text(explanation),
                message => message,
                card => self.card.as_ref().filter(|_| charges).map(|c| context! { brand => c.brand, last4 => c.last4 }),
                no_card => charges && self.card.is_none(),
                card_url => format!("/portal/{token}/payment-method"),
                action => format!("/portal/{token}/memberships/{}/switch/{}", m.membership_key, offer.price.price_key),
                quote => self.effect.pin(),
                back_url => format!("/portal/{token}"),
                csrf_token => csrf::form_token(&state.keys, token),
            },
            Some(&self.portal.brand),
            Framing::Deny,
        )
    }
}

/// One line of the confirmation's facts: the label's string, a test id, the value.
fn fact(t: &BTreeMap<String, String>, label: &str, id: &str, value: String) -> Value {
    context! { label => t.get(label), id => id, value => value }
}

/// `GET /portal/{token}/memberships/{key}/switch/{priceId}`: what switching to the price does,
/// to confirm.
pub async fn page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key, price_id)): Path<(String, String, String)>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (portal, m) = match portal_membership(&state, &headers, &token, &key, None).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    match choose(&state, &portal, &m, &price_id).await? {
        Choice::Offer(offer) => {
            let switch = Switch::new(&state, &token, &portal, &m, *offer).await?;
            switch.page(&state, t, None)
        }
        Choice::Portal(_) => Ok(Redirect::to(&format!("/portal/{token}")).into_response()),
        Choice::Refused => notice::not_found(&state, t),
    }
}

/// The confirmation as posted.
#[derive(Debug, Deserialize)]
pub struct SwitchForm {
    /// The page's form token.
    #[serde(rename = "csrfToken", default)]
    csrf_token: String,
    /// The figures the page showed ([`Effect::pin`]).
    #[serde(default)]
    quote: String,
}

/// `POST /portal/{token}/memberships/{key}/switch/{priceId}`: makes the switch the page showed,
/// then back to the portal. A declined proration charge shows the page again (402, nothing
/// changed); so do figures that moved since (409) and a payment in flight (409).
pub async fn confirm(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key, price_id)): Path<(String, String, String)>,
    PageForm(form): PageForm<SwitchForm>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let (portal, m) =
        match portal_membership(&state, &headers, &token, &key, Some(&form.csrf_token)).await? {
            Ok(found) => found,
            Err(page) => return Ok(page),
        };
    let offer = match choose(&state, &portal, &m, &price_id).await? {
        Choice::Offer(offer) => offer,
        Choice::Portal(done) => return Ok(back(&token, done)),
        Choice::Refused => return notice::not_found(&state, t),
    };
    let switch = Switch::new(&state, &token, &portal, &m, *offer).await?;
    let again = |key: &str, status: StatusCode| {
        switch
            .page(&state, t, t.get(key).cloned())
            .map(|r| with_status(r, status))
    };
    if switch.effect.pin() != form.quote {
        return again("switch_quote_changed", StatusCode::CONFLICT);
    }
    if switch.effect.charged() > 0 && switch.card.is_none() {
        return again("switch_no_card", StatusCode::PAYMENT_REQUIRED);
    }
    match memberships::switch::switch_price(
        &state,
        portal.merchant.id,
        &m.membership_key,
        &switch.offer,
        &switch.effect,
    )
    .await
    {
        Ok(_) => Ok(back(
            &token,
            match switch.effect {
                Effect::Scheduled(_) => "scheduled",
                Effect::Prorated(_) | Effect::Unprorated => "switched",
            },
        )),
        Err(ServiceError::PaymentDeclined { code, .. }) => switch
            .page(&state, t, Some(decline_message(t, &code)))
            .map(|r| with_status(r, StatusCode::PAYMENT_REQUIRED)),
        Err(ServiceError::PaymentInProgress) => again("switch_in_progress", StatusCode::CONFLICT),
        // Canceled, paused or changed by the merchant since the page was read.
        Err(ServiceError::Conflict(_)) => Ok(back(&token, "changed")),
        Err(other) => Err(other.into()),
    }
}

/// `POST /portal/{token}/memberships/{key}/pending-change/drop`: drops the change scheduled for
/// the next period (the current terms stay), then back to the portal.
pub async fn drop_pending(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((token, key)): Path<(String, String)>,
    PageForm(form): PageForm<TokenForm>,
) -> Result<Response, PageError> {
    let (portal, m) =
        match portal_membership(&state, &headers, &token, &key, Some(&form.csrf_token)).await? {
            Ok(found) => found,
            Err(page) => return Ok(page),
        };
    if m.state.scheduled.is_none() || m.state.status.is_terminal() {
        return Ok(Redirect::to(&format!("/portal/{token}")).into_response());
    }
    memberships::drop_scheduled_change(&state, portal.merchant.id, &m.membership_key).await?;
    Ok(back(&token, "dropped"))
}
