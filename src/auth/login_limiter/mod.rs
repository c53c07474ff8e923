//! Failed-login limiter, for any login by user name and password from a client address.
//!
//! Within a sliding [`WINDOW`], an attempt is refused once it would exceed any of:
//! - [`MAX_FAILURES_PER_PAIR`] for the user name from this source (guessing from one place);
//! - [`MAX_FAILURES_PER_SOURCE`] from this source across user names (spraying user names);
//! - [`MAX_FAILURES_PER_USER`] for the user name from every source together (guessing spread
//!   over many places), except from a source the user name logged in from within [`KNOWN_FOR`]:
//!   failures elsewhere never lock a user out of the places it logs in from.
//!
//! A source is an IPv4 address or an IPv6 /64 network (one host's usual allocation). User names
//! are compared without case. An attempt is reserved ([`LoginLimiter::begin`]) before the
//! password is verified and counts against the limits while in flight, so concurrent attempts
//! are never evaluated beyond a limit; it then becomes a failure, or a success that clears the
//! pair's failures and makes the source known, or, abandoned, counts nothing. Time comes from
//! the caller (the injected clock). State is in memory, per process.

mod counter;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Duration, Utc};

use counter::Counter;

/// Failures allowed per user name and source within the window.
pub const MAX_FAILURES_PER_PAIR: usize = 5;
/// Failures allowed per source across user names within the window.
pub const MAX_FAILURES_PER_SOURCE: usize = 20;
/// Failures allowed per user name across sources within the window; known sources are exempt.
pub const MAX_FAILURES_PER_USER: usize = 100;
/// How long a failure counts.
pub const WINDOW: Duration = Duration::minutes(15);
/// How long after its last successful login a source stays known for a user name.
pub const KNOWN_FOR: Duration = Duration::days(30);
/// Known sources remembered per user name; the least recently used is forgotten first.
const MAX_KNOWN_PER_USER: usize = 8;
/// Counters tracked before the idle ones are dropped (bounds memory under a spray attack).
const MAX_TRACKED_KEYS: usize = 100_000;

/// What a counter limits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Pair(String, IpAddr),
    Source(IpAddr),
    User(String),
}

#[derive(Debug, Default)]
struct Tables {
    counters: HashMap<Key, Counter>,
    /// Per user name: the sources it logged in from, with the time of the last success.
    known: HashMap<String, Vec<(IpAddr, DateTime<Utc>)>>,
}

/// Limits failed logins. One per process; cheap to share by reference.
#[derive(Debug, Default)]
pub struct LoginLimiter(Arc<Mutex<Tables>>);

impl LoginLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reserves a login attempt by `user_name` from `address`, or refuses it with the seconds
    /// to wait. The attempt must be settled with [`Attempt::failed`] or [`Attempt::succeeded`].
    pub fn begin(
        &self,
        user_name: &str,
        address: IpAddr,
        now: DateTime<Utc>,
    ) -> Result<Attempt, u64> {
        let user = user_name.to_lowercase();
        let source = source_of(address);
        let mut tables = lock(&self.0);
        if tables.counters.len() >= MAX_TRACKED_KEYS {
            tables.prune(now);
        }
        let user_limit = (!tables.is_known(&user, source, now)).then_some(MAX_FAILURES_PER_USER);
        let keys = keys(&user, source);
        let limits = [
            Some(MAX_FAILURES_PER_PAIR),
            Some(MAX_FAILURES_PER_SOURCE),
            user_limit,
        ];
        let wait = keys
            .iter()
            .zip(limits)
            .filter_map(|(key, limit)| {
                let counter = tables.counters.get_mut(key)?;
                counter.wait(limit?, WINDOW, now)
            })
            .max();
        if let Some(seconds) = wait {
            return Err(seconds);
        }
        for key in &keys {
            tables.counters.entry(key.clone()).or_default().reserve();
        }
        Ok(Attempt {
            tables: Some(self.0.clone()),
            user,
            source,
        })
    }
}

/// A login attempt admitted by [`LoginLimiter::begin`], counted while in flight. Dropped
/// unsettled, it counts nothing.
#[derive(Debug)]
#[must_use = "an attempt is settled as failed or succeeded"]
pub struct Attempt {
    tables: Option<Arc<Mutex<Tables>>>,
    user: String,
    source: IpAddr,
}

impl Attempt {
    /// The password was wrong (or the user name unknown): counts a failure at `now`.
    pub fn failed(mut self, now: DateTime<Utc>) {
        self.settle(|tables, keys| {
            for key in keys {
                tables.counters.entry(key.clone()).or_default().fail(now);
            }
        });
    }

    /// The login succeeded at `now`: clears the failures from this source for the user name
    /// and makes the source known for it.
    pub fn succeeded(mut self, now: DateTime<Utc>) {
        let (user, source) = (self.user.clone(), self.source);
        self.settle(|tables, keys| {
            if let Some(pair) = tables.counters.get_mut(&keys[0]) {
                pair.clear();
            }
            tables.remember(user, source, now);
        });
    }

    /// Ends the reservation once, then applies `outcome`.
    fn settle(&mut self, outcome: impl FnOnce(&mut Tables, &[Key; 3])) {
        let Some(shared) = self.tables.take() else {
            return;
        };
        let keys = keys(&self.user, self.source);
        let mut tables = lock(&shared);
        for key in &keys {
            if let Some(counter) = tables.counters.get_mut(key) {
                counter.release();
            }
        }
        outcome(&mut tables, &keys);
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        self.settle(|_, _| {});
    }
}

impl Tables {
    fn is_known(&self, user: &str, source: IpAddr, now: DateTime<Utc>) -> bool {
        self.known.get(user).is_some_and(|sources| {
            sources
                .iter()
                .any(|(known, at)| *known == source && *at + KNOWN_FOR > now)
        })
    }

    fn remember(&mut self, user: String, source: IpAddr, now: DateTime<Utc>) {
        let sources = self.known.entry(user).or_default();
        sources.retain(|(known, at)| *known != source && *at + KNOWN_FOR > now);
        if sources.len() >= MAX_KNOWN_PER_USER {
            if let Some(oldest) = (0..sources.len()).min_by_key(|i| sources[*i].1) {
                sources.swap_remove(oldest);
            }
        }
        sources.push((source, now));
    }

    /// Drops what no longer changes an answer: idle counters and expired known sources.
    fn prune(&mut self, now: DateTime<Utc>) {
        self.counters
            .retain(|_, counter| !counter.is_idle(WINDOW, now));
        self.known.retain(|_, sources| {
            sources.retain(|(_, at)| *at + KNOWN_FOR > now);
            !sources.is_empty()
        });
    }
}

/// The counters an attempt by `user` from `source` touches: pair, source, user name.
fn keys(user: &str, source: IpAddr) -> [Key; 3] {
    [
        Key::Pair(user.to_string(), source),
        Key::Source(source),
        Key::User(user.to_string()),
    ]
}

/// The source `address` is limited as: an IPv4 address (also when written IPv4-mapped), or the
/// /64 network of an IPv6 address.
fn source_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> 64))),
        },
    }
}

fn lock(tables: &Mutex<Tables>) -> MutexGuard<'_, Tables> {
    tables.lock().unwrap_or_else(PoisonError::into_inner)
}
