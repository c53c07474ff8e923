//! The totals of a meter's events in one period, kept as the events arrive.
//!
//! An event is added to its period's totals when it is recorded, and the invoice of the period
//! reads the quantity from the totals ([`Totals::quantity`]): no rule ever needs the events
//! again. Totals of consecutive runs of events merge ([`Totals::merge`]) into what adding every
//! event one by one gives.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::meter::Aggregation;

/// The value of the latest event that had one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latest {
    /// The event's time, in Unix seconds (UTC).
    pub at: i64,
    /// The event's value.
    pub value: Decimal,
}

/// What a period's events come to, for every aggregation at once. Empty totals are the
/// [`Default`].
///
/// Sums are exact while they fit a [`Decimal`]'s 28 significant digits (for values of 12 decimal
/// places, sums below 10^16); beyond that a sum keeps its 28 leading digits, far past any real
/// meter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// The number of events.
    pub count: i64,
    /// The sum of the events' values.
    pub sum: Decimal,
    /// The largest value, if an event had one.
    pub max: Option<Decimal>,
    /// The value of the event with the latest time; of those at the same time, the one added
    /// last.
    pub latest: Option<Latest>,
    /// The number of distinct values (`unique_count`). The store knows which values a period
    /// has seen, so it is counted by [`Totals::add_unique`], not by [`Totals::add`].
    pub unique: i64,
}

impl Totals {
    /// Adds one event, at `at` (Unix seconds, UTC), with the meter's property `value` if it
    /// reads one (`None` for `count` and `unique_count` meters). The count grows by one; the
    /// value adds to the sum, may raise the maximum, and becomes the latest unless the latest
    /// value so far is of a later time: at the same time, the event added later wins.
    pub fn add(&mut self, value: Option<Decimal>, at: i64) {
        self.count = self.count.saturating_add(1);
        if let Some(value) = value {
            self.sum = self.sum.saturating_add(value);
            self.raise_max(value);
            self.take_latest(Latest { at, value });
        }
    }

    /// Counts `new_distinct` values that the period had not seen before (a negative number
    /// counts as none).
    pub fn add_unique(&mut self, new_distinct: i64) {
        self.unique = self.unique.saturating_add(new_distinct.max(0));
    }

    /// Adds the totals of events that were added after every event of `self` (the same tie
    /// rule as [`Totals::add`]: at equal times, `later`'s latest value wins). Adding a run of
    /// events one by one, or totalling its parts and merging them in order, gives the same
    /// totals.
    pub fn merge(&mut self, later: &Totals) {
        self.count = self.count.saturating_add(later.count);
        self.unique = self.unique.saturating_add(later.unique);
        self.sum = self.sum.saturating_add(later.sum);
        if let Some(max) = later.max {
            self.raise_max(max);
        }
        if let Some(latest) = later.latest {
            self.take_latest(latest);
        }
    }

    /// The quantity of the period under `aggregation`: the count, the sum, the maximum or the
    /// latest value (0 when no event had a value), or the number of distinct values.
    pub fn quantity(&self, aggregation: Aggregation) -> Decimal {
        match aggregation {
            Aggregation::Count => Decimal::from(self.count),
            Aggregation::Sum => self.sum,
            Aggregation::Max => self.max.unwrap_or(Decimal::ZERO),
            Aggregation::Latest => self.latest.map_or(Decimal::ZERO, |latest| latest.value),
            Aggregation::UniqueCount => Decimal::from(self.unique),
        }
    }

    fn raise_max(&mut self, value: Decimal) {
        self.max = Some(self.max.map_or(value, |max| max.max(value)));
    }

    /// Takes `candidate`, which comes from an event added after every one so far, as the latest
    /// value unless the latest so far is of a later time.
    fn take_latest(&mut self, candidate: Latest) {
        if self.latest.is_none_or(|latest| candidate.at >= latest.at) {
            self.latest = Some(candidate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn events_add_to_every_aggregation() {
        let mut totals = Totals::default();
        assert_eq!(totals.quantity(Aggregation::Max), Decimal::ZERO);
        assert_eq!(totals.quantity(Aggregation::Latest), Decimal::ZERO);
        totals.add(Some(dec("2.5")), 100);
        totals.add(Some(dec("7")), 50);
        totals.add(Some(dec("1.25")), 100);
        totals.add(None, 200);
        totals.add_unique(2);
        totals.add_unique(0);
        assert_eq!(totals.quantity(Aggregation::Count), dec("4"));
        assert_eq!(totals.quantity(Aggregation::Sum), dec("10.75"));
        assert_eq!(totals.quantity(Aggregation::Max), dec("7"));
        // 1.25 was added after 2.5 at the same time; the event at 50 came in late.
        assert_eq!(totals.quantity(Aggregation::Latest), dec("1.25"));
        assert_eq!(
            totals.latest,
            Some(Latest {
                at: 100,
                value: dec("1.25")
            })
        );
        assert_eq!(totals.quantity(Aggregation::UniqueCount), dec("2"));
    }

    #[test]
    fn merging_keeps_the_later_latest_at_equal_times() {
        let mut first = Totals::default();
        first.add(Some(dec("1")), 10);
        let mut second = Totals::default();
        second.add(Some(dec("2")), 10);
        first.merge(&second);
        assert_eq!(
            first.latest,
            Some(Latest {
                at: 10,
                value: dec("2")
            })
        );
        let mut earlier = Totals::default();
        earlier.add(Some(dec("3")), 9);
        first.merge(&earlier);
        assert_eq!(
            first.latest,
            Some(Latest {
                at: 10,
                value: dec("2")
            })
        );
        assert_eq!(first.max, Some(dec("3")));
        assert_eq!(first.count, 3);
        first.merge(&Totals::default());
        assert_eq!(first.count, 3);
    }

    #[test]
    fn totals_are_stored_as_json_and_read_back() {
        let mut totals = Totals::default();
        totals.add(Some(dec("0.000000000001")), 1_767_225_600);
        totals.add_unique(1);
        let json = serde_json::to_value(&totals).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "count": 1,
                "sum": "0.000000000001",
                "max": "0.000000000001",
                "latest": {"at": 1_767_225_600, "value": "0.000000000001"},
                "unique": 1
            })
        );
        assert_eq!(serde_json::from_value::<Totals>(json).unwrap(), totals);
    }

    /// One event: a value (or none) at a time, and how many distinct values it brought.
    fn event() -> impl Strategy<Value = (Option<Decimal>, i64, i64)> {
        let value = proptest::option::of(
            (0i64..1_000_000, 0u32..=12).prop_map(|(m, s)| Decimal::new(m, s)),
        );
        (value, 0i64..20, 0i64..3)
    }

    fn total(events: &[(Option<Decimal>, i64, i64)]) -> Totals {
        let mut totals = Totals::default();
        for (value, at, distinct) in events {
            totals.add(*value, *at);
            totals.add_unique(*distinct);
        }
        totals
    }

    proptest! {
        /// Adding events one by one equals splitting them anywhere, totalling both halves and
        /// merging the later half into the earlier.
        #[test]
        fn merging_halves_equals_adding_one_by_one(
            events in proptest::collection::vec(event(), 0..40),
            cut in any::<prop::sample::Index>(),
        ) {
            let cut = cut.index(events.len() + 1);
            let mut merged = total(&events[..cut]);
            merged.merge(&total(&events[cut..]));
            let whole = total(&events);
            prop_assert_eq!(&merged, &whole);
            // Equal, not merely numerically: the latest event is the same one.
            prop_assert_eq!(
                merged.latest.map(|l| (l.at, l.value.to_string())),
                whole.latest.map(|l| (l.at, l.value.to_string()))
            );
        }
    }
}
