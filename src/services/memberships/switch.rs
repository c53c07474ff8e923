//! The portal's price switch (DESIGN §15) as an operation: which catalog prices a membership
//! may move to ([`offers`]), what moving does now ([`effect`]: the domain's proration, or the
//! renewal it waits for under the merchant's `portalPlanChange`), and the switch itself
//! ([`switch_price`]), which prorates exactly as the quote did.

use chrono::{DateTime, Utc};
use recur_domain::membership::{can_switch_price, CatalogOffer, Proration, ScheduledChange};
use recur_domain::price::Price;
use recur_domain::settings::PortalPlanChange;

use crate::billing::taxation;
use crate::billing::update::{self as billing, Changes, Effective, UpdateOutcome};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::memberships::Membership;
use crate::store::prices::{self, CatalogPrice};

/// A catalog price a membership may switch to.
pub struct Offer {
    /// The price: active, of the membership's product (active too), in its currency.
    pub price: CatalogPrice,
    /// The membership's price once switched: the offer's unit amount × the membership's
    /// quantity.
    pub new: Price,
}

impl Offer {
    /// The membership's quantity, which the switch keeps.
    pub fn quantity(&self) -> i64 {
        self.new.quantity.unwrap_or(1)
    }
}

/// Whether a membership may switch price in the portal: the domain's [`can_switch_price`] (made
/// from a catalog price, Active or Trialing, and renewing when switches wait for the renewal).
pub fn switchable(plan_change: PortalPlanChange, m: &Membership) -> bool {
    can_switch_price(
        m.state.status,
        m.price_key.is_some(),
        plan_change,
        m.state.next_billing_date().is_some(),
    )
}

/// The prices `m` may switch to, oldest first: the other active prices of its price's product
/// (when the product is active) that the domain offers it
/// ([`switch_offer`](recur_domain::membership::MembershipState::switch_offer):
/// in its currency, for its quantity, a total that fits, terms that differ from its own and,
/// when switches wait for the renewal, not the price already scheduled for it).
pub async fn offers(
    state: &AppState,
    plan_change: PortalPlanChange,
    m: &Membership,
) -> Result<Vec<Offer>, ServiceError> {
    let Some(current_key) = m
        .price_key
        .as_deref()
        .filter(|_| switchable(plan_change, m))
    else {
        return Ok(Vec::new());
    };
    let pool = state.store.pool();
    let current = prices::by_key(pool, m.merchant_id, current_key).await?;
    let Some(current) = current.filter(|p| p.product_active) else {
        return Ok(Vec::new());
    };
    let siblings = prices::active_of_product(pool, m.merchant_id, current.product_id).await?;
    Ok(siblings
        .into_iter()
        .filter_map(|price| {
            let offer = CatalogOffer {
                price_key: &price.price_key,
                currency: &price.currency,
                unit_amount: price.unit_amount,
                cycle: price.cycle,
            };
            let new = m
                .state
                .switch_offer(m.currency(), current_key, plan_change, &offer)?;
            Some(Offer { price, new })
        })
        .collect())
}

/// What a switch does.
pub enum Effect {
    /// At once, prorated: the domain's proration of the change.
    Prorated(Box<Proration>),
    /// At once, with nothing of the current period paid at the old terms (a trial): nothing
    /// charged now.
    Unprorated,
    /// At the next renewal, on this date; nothing charged now.
    Scheduled(DateTime<Utc>),
}

impl Effect {
    /// When the update applies it.
    pub fn effective(&self) -> Effective {
        match self {
            Effect::Scheduled(_) => Effective::NextPeriod,
            Effect::Prorated(_) | Effect::Unprorated => Effective::Now,
        }
    }

    /// What the confirmation's form carries, and what the post must still find: the figures
    /// the customer saw.
    pub fn pin(&self) -> String {
        match self {
            Effect::Prorated(p) => format!("now:{}:{}", p.plan.net, p.plan.amount_due()),
            Effect::Unprorated => "now:0:0".into(),
            Effect::Scheduled(at) => format!("nextPeriod:{}", at.timestamp()),
        }
    }

    /// What the card is charged now.
    pub fn charged(&self) -> i64 {
        match self {
            Effect::Prorated(p) => p.plan.amount_due(),
            Effect::Unprorated | Effect::Scheduled(_) => 0,
        }
    }
}

/// What switching `m` to `offer` does at `now` (the merchant's time), under the merchant's
/// setting `plan_change`.
pub async fn effect(
    state: &AppState,
    plan_change: PortalPlanChange,
    now: DateTime<Utc>,
    m: &Membership,
    offer: &Offer,
) -> Result<Effect, ServiceError> {
    if plan_change == PortalPlanChange::NextPeriod {
        let mut after = m.state.clone();
        after.schedule_change(ScheduledChange {
            price: offer.new,
            cycle: offer.price.cycle,
            price_key: Some(offer.price.price_key.clone()),
        });
        // An Active or Trialing membership is in a period, whose end the change waits for.
        let at = after
            .scheduled_change_at()
            .ok_or_else(|| ServiceError::Conflict("the membership is in no period".into()))?;
        return Ok(Effect::Scheduled(at));
    }
    // The rates billed until now, as the update prorates with them.
    let taxation = taxation::of(state.store.pool(), m).await?;
    let proration = m
        .state
        .proration(
            &m.subscription_name,
            offer.new,
            offer.price.cycle,
            now,
            &taxation,
        )
        .map_err(|_| ServiceError::Conflict("the new billing cycle is out of range".into()))?;
    Ok(proration.map_or(Effect::Unprorated, |p| Effect::Prorated(Box::new(p))))
}

/// Switches the merchant's membership `key` to `offer` as `effect` said: prorated now, or
/// scheduled for the renewal. A declined proration charge changes nothing (402).
pub async fn switch_price(
    state: &AppState,
    merchant_id: i64,
    key: &str,
    offer: &Offer,
    effect: &Effect,
) -> Result<UpdateOutcome, ServiceError> {
    let cycle = offer.price.cycle;
    let changes = Changes {
        price_per_unit: Some(offer.price.unit_amount),
        quantity: Some(offer.quantity()),
        interval_type: Some(cycle.interval_type),
        interval_count: Some(cycle.interval_count),
        price_key: Some(offer.price.price_key.clone()),
        effective: effect.effective(),
        ..Changes::default()
    };
    Ok(billing::update(state, merchant_id, key, changes).await?)
}
