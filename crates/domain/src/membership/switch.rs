//! The customer portal's price switch (DESIGN §15): which memberships may move to another
//! catalog price ([`can_switch_price`]) and which prices they are offered
//! ([`MembershipState::switch_offer`]). The portal reads the catalog and shows the offers; these
//! rules decide.

use super::MembershipState;
use crate::calendar::BillingCycle;
use crate::money::Currency;
use crate::price::Price;
use crate::settings::PortalPlanChange;
use crate::status::MembershipStatus;

/// Whether a membership may switch price in the portal: made from a catalog price
/// (`from_catalog`), Active or Trialing (PastDue and Unpaid pay what is overdue first; a Paused
/// one has no running period), and, when the merchant's `plan_change` makes switches wait for the
/// next renewal, renewing at all (`renews`: it has a next billing date; an `endDate` may stop
/// it).
pub fn can_switch_price(
    status: MembershipStatus,
    from_catalog: bool,
    plan_change: PortalPlanChange,
    renews: bool,
) -> bool {
    let running = matches!(
        status,
        MembershipStatus::Active | MembershipStatus::Trialing
    );
    from_catalog && running && (plan_change == PortalPlanChange::Now || renews)
}

/// A catalog price the portal may offer a membership, as the catalog holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogOffer<'a> {
    /// Its key, `price_…`.
    pub price_key: &'a str,
    /// Its currency (ISO 4217, uppercase).
    pub currency: &'a str,
    /// The price of one unit per cycle, in minor units.
    pub unit_amount: i64,
    /// How often it is charged.
    pub cycle: BillingCycle,
}

impl MembershipState {
    /// The catalog price (`price_…`) scheduled for the renewal, when the merchant's
    /// `plan_change` makes the portal's switches wait for it too: that one is not offered again.
    pub fn scheduled_switch(&self, plan_change: PortalPlanChange) -> Option<&str> {
        let change = self.scheduled.as_ref()?;
        (plan_change == PortalPlanChange::NextPeriod)
            .then_some(change.price_key.as_deref())
            .flatten()
    }

    /// The price the membership would have once switched to the catalog price `offer`, when the
    /// portal offers it: another price than `current` (the one it is made from) and than the one
    /// scheduled for its renewal ([`Self::scheduled_switch`]), in its `currency`, whose unit
    /// amount for its quantity gives a price per period that fits ([`Price::updated`]), and
    /// whose terms differ from its own (a price billing the same on the same cycle changes
    /// nothing the customer pays). `None` when it is not offered.
    pub fn switch_offer(
        &self,
        currency: Currency,
        current: &str,
        plan_change: PortalPlanChange,
        offer: &CatalogOffer<'_>,
    ) -> Option<Price> {
        if offer.price_key == current
            || offer.currency != currency.code()
            || self.scheduled_switch(plan_change) == Some(offer.price_key)
        {
            return None;
        }
        let quantity = self.price.quantity.unwrap_or(1);
        let new = self
            .price
            .updated(Some(offer.unit_amount), Some(quantity), currency)
            .ok()?;
        let differs = new.per_period() != self.price.per_period() || offer.cycle != self.cycle;
        differs.then_some(new)
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{any_cycle, any_state};
    use super::super::ScheduledChange;
    use super::*;
    use crate::money::MAX_AMOUNT_MINOR;
    use proptest::prelude::*;

    fn euro() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    #[test]
    fn only_a_running_catalog_membership_switches() {
        use MembershipStatus::{Active, PastDue, Paused, Trialing};
        use PortalPlanChange::{NextPeriod, Now};
        assert!(can_switch_price(Active, true, Now, false));
        assert!(can_switch_price(Trialing, true, NextPeriod, true));
        assert!(
            !can_switch_price(Active, false, Now, true),
            "inline pricing"
        );
        assert!(!can_switch_price(PastDue, true, Now, true));
        assert!(!can_switch_price(Paused, true, Now, true));
        assert!(
            !can_switch_price(Active, true, NextPeriod, false),
            "no renewal to wait for"
        );
    }

    proptest! {
        /// A switch is offered only to an Active or Trialing membership made from a catalog
        /// price, and to every such one that renews or switches at once.
        #[test]
        fn can_switch_price_only_active_or_trialing_with_a_price(
            status in prop::sample::select(MembershipStatus::ALL.to_vec()),
            from_catalog in any::<bool>(),
            next_period in any::<bool>(),
            renews in any::<bool>(),
        ) {
            let plan_change = if next_period { PortalPlanChange::NextPeriod } else { PortalPlanChange::Now };
            let running = matches!(status, MembershipStatus::Active | MembershipStatus::Trialing);
            prop_assert_eq!(
                can_switch_price(status, from_catalog, plan_change, renews),
                running && from_catalog && (renews || !next_period)
            );
        }

        /// An offer is another price, in the membership's currency, not the one scheduled, for
        /// its quantity, with a total that fits, on other terms than its own.
        #[test]
        fn an_offer_changes_what_the_customer_pays(
            mut m in any_state(),
            (amount, unit) in (0u8..3, 1i64..20_000_000),
            (same_cycle, cycle) in (any::<bool>(), any_cycle()),
            key in prop::sample::select(vec!["price_a", "price_b", "price_c"]),
            currency in prop::sample::select(vec!["EUR", "USD"]),
            scheduled in any::<bool>(),
            next_period in any::<bool>(),
        ) {
            let plan_change = if next_period { PortalPlanChange::NextPeriod } else { PortalPlanChange::Now };
            if scheduled {
                m.scheduled = Some(ScheduledChange {
                    price: m.price,
                    cycle: m.cycle,
                    price_key: Some("price_b".into()),
                });
            }
            let quantity = m.price.quantity.unwrap_or(1);
            // The membership's own unit amount, any other, or one too large for its quantity.
            let unit_amount = match amount {
                0 => m.price.total / quantity,
                1 => unit,
                _ => MAX_AMOUNT_MINOR / quantity + unit,
            };
            let cycle = if same_cycle { m.cycle } else { cycle };
            let offer = CatalogOffer { price_key: key, currency, unit_amount, cycle };
            let answer = m.switch_offer(euro(), "price_a", plan_change, &offer);
            let total = i128::from(unit_amount) * i128::from(quantity);
            let offered = key != "price_a"
                && currency == "EUR"
                && !(scheduled && next_period && key == "price_b")
                && total <= i128::from(MAX_AMOUNT_MINOR)
                && (total != i128::from(m.price.total) || cycle != m.cycle);
            prop_assert_eq!(answer.is_some(), offered);
            if let Some(new) = answer {
                prop_assert_eq!(i128::from(new.total), total);
                prop_assert_eq!(new.quantity, Some(quantity));
                prop_assert_eq!(new.per_unit, Some(unit_amount));
            }
        }
    }
}
