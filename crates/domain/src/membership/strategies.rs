//! Generators of membership states for the property tests of the membership rules.

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use super::{ChargeDirective, MembershipState};
use crate::calendar::{period_starting, BillingCycle, IntervalType};
use crate::price::Price;
use crate::status::MembershipStatus;

/// An instant between 2000 and 2100, to the second.
pub(crate) fn any_instant() -> impl Strategy<Value = DateTime<Utc>> {
    (946_684_800i64..4_102_444_800)
        .prop_map(|secs| DateTime::from_timestamp(secs, 0).expect("the range is representable"))
}

/// Any billing cycle [`BillingCycle::new`] accepts.
pub(crate) fn any_cycle() -> impl Strategy<Value = BillingCycle> {
    prop::sample::select(IntervalType::ALL.to_vec())
        .prop_flat_map(|t| (Just(t), 1..=t.max_count()))
        .prop_map(|(t, n)| BillingCycle::new(t, n).expect("the count is within bounds"))
}

/// A price of up to ten million minor units, given as a total or as unit price × quantity.
pub(crate) fn any_price() -> impl Strategy<Value = Price> {
    (1i64..10_000_000, 1i64..=5, any::<bool>()).prop_map(|(per_unit, quantity, parts)| Price {
        total: per_unit * quantity,
        per_unit: parts.then_some(per_unit),
        quantity: parts.then_some(quantity),
    })
}

/// A `chargeEmitterQueue`, or none.
fn any_queue() -> impl Strategy<Value = Option<Vec<ChargeDirective>>> {
    proptest::option::of(proptest::collection::vec(
        any::<bool>().prop_map(|succeed| ChargeDirective {
            succeed,
            description: String::new(),
        }),
        0..4,
    ))
}

/// A membership state of any status, whose fields are each plausible on their own: a period
/// one cycle long (or none), an `endDate` (if any) after the period started, any credit,
/// dunning fields and next action.
pub(crate) fn any_state() -> impl Strategy<Value = MembershipState> {
    states(any::<bool>())
}

/// An Active membership in a period, its next action as scheduled and no dunning.
pub(crate) fn active_state() -> impl Strategy<Value = MembershipState> {
    states(Just(true)).prop_map(|mut m| {
        m.status = MembershipStatus::Active;
        m.dunning_failed_at = None;
        m.dunning_retries = 0;
        m.next_action_at = m.next_scheduled_action();
        m
    })
}

/// [`any_state`], with a period where `with_period` says so.
fn states(with_period: impl Strategy<Value = bool>) -> impl Strategy<Value = MembershipState> {
    let status = prop::sample::select(MembershipStatus::ALL.to_vec());
    let calendar = (
        any_cycle(),
        any_instant(),
        with_period,
        any::<Option<u32>>(),
    );
    let money = (any_price(), 0i64..20_000_000);
    let dunning = (proptest::option::of(any_instant()), 0i64..=4);
    let counters = (proptest::option::of(any_instant()), 0i64..8, any_queue());
    (status, calendar, money, dunning, counters).prop_map(
        |(status, calendar, money, dunning, counters)| {
            let (cycle, start, with_period, end_seconds) = calendar;
            let current_period = with_period
                .then(|| period_starting(start, &cycle))
                .flatten();
            let end_date = end_seconds.map(|s| start + TimeDelta::seconds(i64::from(s) + 1));
            MembershipState {
                status,
                price: money.0,
                cycle,
                end_date,
                current_period,
                credit_balance: money.1,
                dunning_failed_at: dunning.0,
                dunning_retries: dunning.1,
                next_action_at: counters.0,
                charge_emitter_queue: counters.2,
                recurring_attempts: counters.1,
                canceled_at: None,
                trial_days: None,
                trial_end: None,
                trial_notice_at: None,
                discount: None,
                period_discount: 0,
                resume_at: None,
                scheduled: None,
            }
        },
    )
}
