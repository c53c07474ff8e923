//! Failed-login limiter: at most [`MAX_FAILURES_PER_USER`] failures per user name and
//! [`MAX_FAILURES_PER_ADDRESS`] per source address within [`WINDOW`]. Past either limit, logins are
//! refused with a retry-after until the oldest failure leaves the window. Time comes from the
//! caller (the injected clock).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// Failures allowed per user name within the window.
pub const MAX_FAILURES_PER_USER: usize = 5;
/// Failures allowed per source address within the window.
pub const MAX_FAILURES_PER_ADDRESS: usize = 20;
/// How long a failure counts.
pub const WINDOW: Duration = Duration::minutes(15);
/// Keys tracked before the oldest idle ones are dropped (bounds memory under a spray attack).
const MAX_TRACKED_KEYS: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    User(String),
    Address(IpAddr),
}

/// Counts failed logins in memory. One per process.
#[derive(Debug, Default)]
pub struct LoginLimiter {
    failures: Mutex<HashMap<Key, VecDeque<DateTime<Utc>>>>,
}

impl LoginLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// `None` when a login attempt may proceed; otherwise how many seconds to wait.
    pub fn check(&self, user_name: &str, address: IpAddr, now: DateTime<Utc>) -> Option<u64> {
        let mut failures = self.lock();
        let user = wait(
            failures.get_mut(&Key::User(user_name.to_lowercase())),
            MAX_FAILURES_PER_USER,
            now,
        );
        let addr = wait(
            failures.get_mut(&Key::Address(address)),
            MAX_FAILURES_PER_ADDRESS,
            now,
        );
        user.max(addr)
    }

    /// Records a failed attempt.
    pub fn record_failure(&self, user_name: &str, address: IpAddr, now: DateTime<Utc>) {
        let mut failures = self.lock();
        if failures.len() >= MAX_TRACKED_KEYS {
            failures.retain(|_, times| times.back().is_some_and(|t| *t + WINDOW > now));
        }
        for key in [Key::User(user_name.to_lowercase()), Key::Address(address)] {
            failures.entry(key).or_default().push_back(now);
        }
    }

    /// Forgets the user name's failures after a successful login.
    pub fn record_success(&self, user_name: &str) {
        self.lock().remove(&Key::User(user_name.to_lowercase()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, VecDeque<DateTime<Utc>>>> {
        self.failures
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Drops failures older than the window; when `limit` remain, the seconds until the oldest leaves.
fn wait(
    times: Option<&mut VecDeque<DateTime<Utc>>>,
    limit: usize,
    now: DateTime<Utc>,
) -> Option<u64> {
    let times = times?;
    while times.front().is_some_and(|t| *t + WINDOW <= now) {
        times.pop_front();
    }
    if times.len() < limit {
        return None;
    }
    let oldest = *times.front()?;
    let seconds = (oldest + WINDOW - now).num_seconds().max(1);
    u64::try_from(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, ManualClock};

    #[test]
    fn user_is_limited_after_five_failures_until_the_window_passes() {
        let clock = ManualClock::new(Utc::now());
        let limiter = LoginLimiter::new();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..MAX_FAILURES_PER_USER {
            assert_eq!(limiter.check("Acme", ip, clock.now()), None);
            limiter.record_failure("Acme", ip, clock.now());
            clock.advance(Duration::seconds(10));
        }
        let retry = limiter.check("acme", ip, clock.now()).unwrap();
        assert_eq!(retry, (WINDOW - Duration::seconds(50)).num_seconds() as u64);
        let other_ip: IpAddr = "192.0.2.2".parse().unwrap();
        assert!(limiter.check("acme", other_ip, clock.now()).is_some());
        assert_eq!(limiter.check("other", ip, clock.now()), None);
        clock.advance(Duration::seconds(retry as i64));
        assert_eq!(limiter.check("acme", ip, clock.now()), None);
    }

    #[test]
    fn address_is_limited_across_user_names() {
        let now = Utc::now();
        let limiter = LoginLimiter::new();
        let ip: IpAddr = "198.51.100.7".parse().unwrap();
        for i in 0..MAX_FAILURES_PER_ADDRESS {
            limiter.record_failure(&format!("user{i}"), ip, now);
        }
        assert!(limiter.check("fresh-user", ip, now).is_some());
    }

    #[test]
    fn success_clears_the_user_count() {
        let now = Utc::now();
        let limiter = LoginLimiter::new();
        let ip: IpAddr = "203.0.113.9".parse().unwrap();
        for _ in 0..MAX_FAILURES_PER_USER {
            limiter.record_failure("acme", ip, now);
        }
        limiter.record_success("acme");
        assert_eq!(limiter.check("acme", ip, now), None);
    }
}
