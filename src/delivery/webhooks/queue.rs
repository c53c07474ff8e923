//! The background dispatcher's slots: deliveries in flight per endpoint, bounded by
//! [`PER_ENDPOINT`], and the leased ones waiting for a slot until the time they must start by.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Utc};

use super::PER_ENDPOINT;

/// The background dispatcher's deliveries (`T`): how many are in flight per endpoint, and the
/// leased ones waiting for a slot, in the order they were leased, each with the time it must
/// start by.
pub(super) struct Queue<T> {
    in_flight: HashMap<String, usize>,
    waiting: VecDeque<(String, DateTime<Utc>, T)>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self {
            in_flight: HashMap::new(),
            waiting: VecDeque::new(),
        }
    }
}

impl<T> Queue<T> {
    /// Adds a leased delivery to `endpoint`, to start by `start_by`, behind those already
    /// waiting.
    pub(super) fn lease(&mut self, endpoint: String, start_by: DateTime<Utc>, delivery: T) {
        self.waiting.push_back((endpoint, start_by, delivery));
    }

    /// Lets go of the waiting deliveries that were not started by their time, and says how
    /// many. Their events stay leased until the lease expires, then any dispatcher claims them
    /// again: never two attempts at once, none lost.
    pub(super) fn expire(&mut self, now: DateTime<Utc>) -> usize {
        let before = self.waiting.len();
        self.waiting.retain(|(_, start_by, _)| *start_by >= now);
        before - self.waiting.len()
    }

    /// Lets go of the waiting deliveries to `endpoint`, and says how many. As with
    /// [`Queue::expire`], their events stay leased until the lease expires.
    pub(super) fn forget(&mut self, endpoint: &str) -> usize {
        let before = self.waiting.len();
        self.waiting
            .retain(|(waiting_for, _, _)| waiting_for != endpoint);
        before - self.waiting.len()
    }

    /// Takes up to `slots` waiting deliveries, oldest first, skipping those whose endpoint has
    /// [`PER_ENDPOINT`] in flight, and counts them in flight.
    pub(super) fn start(&mut self, slots: usize) -> Vec<T> {
        let mut started = Vec::new();
        let mut kept = VecDeque::with_capacity(self.waiting.len());
        for (endpoint, start_by, delivery) in self.waiting.drain(..) {
            let in_flight = self.in_flight.get(&endpoint).copied().unwrap_or(0);
            if started.len() < slots && in_flight < PER_ENDPOINT {
                self.in_flight.insert(endpoint, in_flight + 1);
                started.push(delivery);
            } else {
                kept.push_back((endpoint, start_by, delivery));
            }
        }
        self.waiting = kept;
        started
    }

    /// A delivery to `endpoint` has finished.
    pub(super) fn finished(&mut self, endpoint: &str) {
        if let Some(count) = self.in_flight.get_mut(endpoint) {
            *count -= 1;
            if *count == 0 {
                self.in_flight.remove(endpoint);
            }
        }
    }

    /// Deliveries held: in flight or waiting.
    pub(super) fn held(&self) -> usize {
        self.in_flight.values().sum::<usize>() + self.waiting.len()
    }

    /// [`Queue::held`] per endpoint.
    pub(super) fn held_by_endpoint(&self) -> HashMap<String, usize> {
        let mut held = self.in_flight.clone();
        for (endpoint, _, _) in &self.waiting {
            *held.entry(endpoint.clone()).or_default() += 1;
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn queue(leased: &[(&str, u32)]) -> Queue<u32> {
        let mut queue = Queue::default();
        for (endpoint, id) in leased {
            queue.lease((*endpoint).to_string(), at(15), *id);
        }
        queue
    }

    #[test]
    fn deliveries_start_oldest_first_within_the_free_slots() {
        let mut queue = queue(&[("a", 1), ("b", 2), ("a", 3)]);
        assert_eq!(queue.start(2), vec![1, 2]);
        assert_eq!(queue.held(), 3);
        assert_eq!(queue.start(5), vec![3]);
        assert_eq!(queue.start(5), Vec::<u32>::new());
    }

    #[test]
    fn an_endpoint_never_has_more_than_its_bound_in_flight() {
        let leased: Vec<(&str, u32)> = (0..10).map(|i| ("a", i)).chain([("b", 99)]).collect();
        let mut queue = queue(&leased);
        // Endpoint a's fifth and later wait; b's delivery passes them.
        assert_eq!(queue.start(16), vec![0, 1, 2, 3, 99]);
        assert_eq!(queue.held_by_endpoint().get("a"), Some(&10));
        queue.finished("a");
        queue.finished("b");
        assert_eq!(queue.start(16), vec![4]);
        assert_eq!(queue.held(), 9);
        assert_eq!(queue.held_by_endpoint().get("b"), None);
    }

    #[test]
    fn a_delivery_not_started_by_its_time_is_let_go() {
        let mut queue = Queue::default();
        for id in 0..6 {
            queue.lease("a".to_string(), at(15), id);
        }
        queue.lease("b".to_string(), at(30), 99);
        assert_eq!(queue.start(16), vec![0, 1, 2, 3, 99]);
        // Endpoint a's slots stay taken: its waiting deliveries keep until their time...
        assert_eq!(queue.expire(at(15)), 0);
        assert_eq!(queue.held_by_endpoint().get("a"), Some(&6));
        // ...and are let go after it, without freeing the slots still in flight.
        assert_eq!(queue.expire(at(16)), 2);
        assert_eq!(queue.held(), 5);
        queue.finished("a");
        assert_eq!(queue.start(16), Vec::<u32>::new());
    }
}
