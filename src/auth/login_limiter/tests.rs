//! The limiter's policy, on the injected clock.

use super::*;
use crate::clock::{Clock, ManualClock};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// `count` failed attempts by `user` from `address` at the clock's time.
fn fail(limiter: &LoginLimiter, user: &str, address: IpAddr, count: usize, clock: &ManualClock) {
    for _ in 0..count {
        limiter
            .begin(user, address, clock.now())
            .expect("admitted")
            .failed(clock.now());
    }
}

fn succeed(limiter: &LoginLimiter, user: &str, address: IpAddr, clock: &ManualClock) {
    limiter
        .begin(user, address, clock.now())
        .expect("admitted")
        .succeeded(clock.now());
}

#[test]
fn a_pair_is_limited_after_five_failures_until_the_window_passes() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let a = ip("192.0.2.1");
    for _ in 0..MAX_FAILURES_PER_PAIR {
        fail(&limiter, "Acme", a, 1, &clock);
        clock.advance(Duration::seconds(10));
    }
    let retry = limiter.begin("acme", a, clock.now()).unwrap_err();
    assert_eq!(retry, (WINDOW - Duration::seconds(50)).num_seconds() as u64);
    // The same user name from elsewhere, and another user name from here, are not locked.
    assert!(limiter.begin("acme", ip("192.0.2.2"), clock.now()).is_ok());
    assert!(limiter.begin("other", a, clock.now()).is_ok());
    clock.advance(Duration::seconds(retry as i64));
    assert!(limiter.begin("acme", a, clock.now()).is_ok());
}

#[test]
fn attempts_in_flight_count_against_the_limit() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let a = ip("192.0.2.1");
    let in_flight: Vec<Attempt> = (0..MAX_FAILURES_PER_PAIR)
        .map(|_| limiter.begin("acme", a, clock.now()).unwrap())
        .collect();
    // Nothing has failed yet, and still no further attempt is evaluated.
    let retry = limiter.begin("acme", a, clock.now()).unwrap_err();
    assert_eq!(retry, WINDOW.num_seconds() as u64);
    for attempt in in_flight {
        attempt.failed(clock.now());
    }
    assert!(limiter.begin("acme", a, clock.now()).is_err());
    clock.advance(WINDOW);
    limiter
        .begin("acme", a, clock.now())
        .unwrap()
        .failed(clock.now());
}

#[test]
fn an_abandoned_attempt_counts_nothing() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let a = ip("192.0.2.1");
    for _ in 0..3 * MAX_FAILURES_PER_PAIR {
        drop(limiter.begin("acme", a, clock.now()).unwrap());
    }
    fail(&limiter, "acme", a, MAX_FAILURES_PER_PAIR, &clock);
    assert!(limiter.begin("acme", a, clock.now()).is_err());
}

#[test]
fn a_source_is_limited_across_user_names() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let a = ip("198.51.100.7");
    for i in 0..MAX_FAILURES_PER_SOURCE {
        fail(&limiter, &format!("user{i}"), a, 1, &clock);
    }
    assert!(limiter.begin("fresh-user", a, clock.now()).is_err());
    assert!(limiter
        .begin("fresh-user", ip("198.51.100.8"), clock.now())
        .is_ok());
}

#[test]
fn ipv6_hosts_are_limited_by_their_64_network_and_mapped_ipv4_as_ipv4() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    for host in 1..=MAX_FAILURES_PER_PAIR {
        fail(
            &limiter,
            "acme",
            ip(&format!("2001:db8::{host:x}")),
            1,
            &clock,
        );
    }
    assert!(limiter
        .begin("acme", ip("2001:db8::ffff:1234"), clock.now())
        .is_err());
    assert!(limiter
        .begin("acme", ip("2001:db8:0:1::1"), clock.now())
        .is_ok());

    fail(
        &limiter,
        "acme",
        ip("::ffff:192.0.2.1"),
        MAX_FAILURES_PER_PAIR,
        &clock,
    );
    assert!(limiter.begin("acme", ip("192.0.2.1"), clock.now()).is_err());
}

#[test]
fn success_clears_the_pair_and_not_the_source_or_user_counts() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let a = ip("203.0.113.9");
    fail(&limiter, "acme", a, MAX_FAILURES_PER_PAIR - 1, &clock);
    succeed(&limiter, "acme", a, &clock);
    fail(&limiter, "acme", a, MAX_FAILURES_PER_PAIR, &clock);
    assert!(limiter.begin("acme", a, clock.now()).is_err());
    // The source kept counting: 9 failures so far, so 11 more for other user names fill it.
    fail(&limiter, "someone", a, 5, &clock);
    fail(&limiter, "someone-else", a, 5, &clock);
    fail(&limiter, "a-third", a, 1, &clock);
    assert!(limiter.begin("a-fourth", a, clock.now()).is_err());
}

/// Guessing spread over many sources is bounded per user name, yet the user name still logs in
/// from the sources it used before, however many failures come from elsewhere.
#[test]
fn distributed_guessing_is_bounded_without_locking_out_known_sources() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let home = ip("192.0.2.10");
    succeed(&limiter, "acme", home, &clock);
    clock.advance(Duration::minutes(1));

    let attackers = MAX_FAILURES_PER_USER / MAX_FAILURES_PER_PAIR;
    for i in 0..attackers {
        fail(
            &limiter,
            "acme",
            ip(&format!("198.51.100.{i}")),
            MAX_FAILURES_PER_PAIR,
            &clock,
        );
    }
    // A fresh source, whoever it is, now waits for the window.
    let retry = limiter
        .begin("acme", ip("203.0.113.200"), clock.now())
        .unwrap_err();
    assert_eq!(retry, WINDOW.num_seconds() as u64);
    // Other user names are not affected.
    assert!(limiter
        .begin("other", ip("203.0.113.200"), clock.now())
        .is_ok());
    // The known source is not locked by the others' failures.
    succeed(&limiter, "ACME", home, &clock);
    // Its own failures still count, as its pair.
    fail(&limiter, "acme", home, MAX_FAILURES_PER_PAIR, &clock);
    assert!(limiter.begin("acme", home, clock.now()).is_err());
}

#[test]
fn a_known_source_is_forgotten_after_a_month_without_success() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    let home = ip("192.0.2.10");
    succeed(&limiter, "acme", home, &clock);
    clock.advance(KNOWN_FOR);
    for i in 0..MAX_FAILURES_PER_USER / MAX_FAILURES_PER_PAIR {
        fail(
            &limiter,
            "acme",
            ip(&format!("198.51.100.{i}")),
            MAX_FAILURES_PER_PAIR,
            &clock,
        );
    }
    assert!(limiter.begin("acme", home, clock.now()).is_err());
}

#[test]
fn known_sources_are_bounded_per_user_name() {
    let clock = ManualClock::new(Utc::now());
    let limiter = LoginLimiter::new();
    for i in 0..=MAX_KNOWN_PER_USER {
        succeed(&limiter, "acme", ip(&format!("192.0.2.{i}")), &clock);
        clock.advance(Duration::seconds(1));
    }
    let tables = lock(&limiter.0);
    let known = &tables.known["acme"];
    assert_eq!(known.len(), MAX_KNOWN_PER_USER);
    // The least recently used one made room.
    assert!(!known.iter().any(|(source, _)| *source == ip("192.0.2.0")));
}
