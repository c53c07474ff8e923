//! One limited key's recent failures and the attempts on it still in flight.

use std::collections::VecDeque;

use chrono::{DateTime, Duration, Utc};

/// Failures within the window (oldest first) and attempts reserved but not yet settled.
#[derive(Debug, Default)]
pub(super) struct Counter {
    failures: VecDeque<DateTime<Utc>>,
    in_flight: usize,
}

impl Counter {
    /// `None` when one more attempt fits under `limit` within `window`; otherwise the seconds
    /// until one would, assuming every attempt in flight fails now.
    pub(super) fn wait(
        &mut self,
        limit: usize,
        window: Duration,
        now: DateTime<Utc>,
    ) -> Option<u64> {
        while self.failures.front().is_some_and(|t| *t + window <= now) {
            self.failures.pop_front();
        }
        let count = self.failures.len() + self.in_flight;
        if count < limit {
            return None;
        }
        // Room appears when the entry at this index (failures, then the attempts in flight
        // counted as failures at `now`) leaves the window.
        let leaving = self.failures.get(count - limit).copied().unwrap_or(now);
        Some(ceil_seconds(leaving + window - now))
    }

    /// Counts one more attempt in flight.
    pub(super) fn reserve(&mut self) {
        self.in_flight += 1;
    }

    /// Ends one attempt in flight (it is then counted as a failure, or not at all).
    pub(super) fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Counts a failure at `now`.
    pub(super) fn fail(&mut self, now: DateTime<Utc>) {
        self.failures.push_back(now);
    }

    /// Forgets every failure.
    pub(super) fn clear(&mut self) {
        self.failures.clear();
    }

    /// Whether nothing is in flight and no failure is younger than `window`: forgetting the
    /// counter changes no answer.
    pub(super) fn is_idle(&self, window: Duration, now: DateTime<Utc>) -> bool {
        self.in_flight == 0 && self.failures.back().is_none_or(|t| *t + window <= now)
    }
}

/// Whole seconds covering `span`, at least one.
fn ceil_seconds(span: Duration) -> u64 {
    let millis = span.num_milliseconds().max(1);
    u64::try_from((millis + 999) / 1000).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_in_flight_count_as_failures_at_now() {
        let now = Utc::now();
        let window = Duration::minutes(15);
        let mut counter = Counter::default();
        counter.fail(now - Duration::minutes(10));
        counter.reserve();
        assert_eq!(counter.wait(3, window, now), None);
        counter.reserve();
        // Full: the oldest failure leaves in five minutes.
        assert_eq!(counter.wait(3, window, now), Some(300));
        counter.reserve();
        // Over by one more: the attempt in flight, counted at `now`, leaves after the window.
        assert_eq!(counter.wait(3, window, now), Some(900));
        counter.release();
        counter.release();
        assert_eq!(counter.wait(3, window, now), None);
        assert!(!counter.is_idle(window, now));
        counter.release();
        assert!(!counter.is_idle(window, now));
        assert!(counter.is_idle(window, now + Duration::minutes(5)));
    }

    #[test]
    fn retry_after_rounds_up() {
        let now = Utc::now();
        let window = Duration::seconds(10);
        let mut counter = Counter::default();
        counter.fail(now - Duration::milliseconds(8_500));
        assert_eq!(counter.wait(1, window, now), Some(2));
        assert_eq!(
            counter.wait(1, window, now + Duration::milliseconds(1_499)),
            Some(1)
        );
        assert_eq!(
            counter.wait(1, window, now + Duration::milliseconds(1_500)),
            None
        );
    }
}
