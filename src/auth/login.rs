//! A login by user name and password, as `POST /auth` and the dashboard's login form both check
//! it: the failed-login limiter first ([`super::login_limiter`]), then the merchant's argon2id
//! hash, verified off the async runtime (an unknown user name costs a verification too).

use std::net::IpAddr;

use chrono::{DateTime, Utc};

use super::login_limiter::LoginLimiter;
use super::password;
use crate::store::merchants::{self, Merchant};
use crate::store::Store;

/// How a login went.
#[derive(Debug)]
pub enum Outcome {
    /// The password is the merchant's.
    Verified(Box<Merchant>),
    /// Unknown user name or wrong password (the failure is counted).
    Refused,
    /// Too many failures: nothing was checked; try again after this many seconds.
    Limited {
        /// Seconds until an attempt may be admitted.
        retry_after: u64,
    },
}

/// Checks `password` for `user_name` from `client` at `now`, counted by `limiter`.
pub async fn check(
    limiter: &LoginLimiter,
    store: &Store,
    user_name: &str,
    password: String,
    client: IpAddr,
    now: DateTime<Utc>,
) -> anyhow::Result<Outcome> {
    // Reserved before the password is read, so concurrent attempts never exceed the limits.
    let attempt = match limiter.begin(user_name, client, now) {
        Ok(attempt) => attempt,
        Err(retry_after) => return Ok(Outcome::Limited { retry_after }),
    };
    let merchant = merchants::by_user_name(store, user_name).await?;
    // The attempt is settled where the password is verified, so a client hanging up cannot
    // have a verification run uncounted.
    let verified = tokio::task::spawn_blocking(move || {
        let verified = match merchant {
            Some(m) if password::verify(&password, &m.password_hash) => Some(m),
            Some(_) => None,
            None => {
                password::verify_against_nothing(&password);
                None
            }
        };
        match verified {
            Some(_) => attempt.succeeded(now),
            None => attempt.failed(now),
        }
        verified
    })
    .await?;
    Ok(match verified {
        Some(merchant) => Outcome::Verified(Box::new(merchant)),
        None => {
            tracing::warn!(user_name, "failed login");
            Outcome::Refused
        }
    })
}
