//! API keys (`Authorization: Bearer rk_…`), checked without a database round trip per request.
//!
//! A key is found by its secret's keyed lookup digest (the secret itself is neither stored nor
//! kept in memory). The first use in a process reads the key once and remembers it by digest;
//! a remembered key older than [`REVALIDATE_AFTER`] is read again before it is accepted, so a
//! key revoked by another process stops working here within that time. A revocation made by
//! this process takes effect at once ([`ApiKeys::forget`]).
//!
//! Uses are recorded (`last_used_at`) at most once per [`USE_RECORDED_EVERY`] per key and
//! process, by a task of their own: a request never waits on that write.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::ids::API_KEY_SECRET_PREFIX;
use crate::keys::ServerKeys;
use crate::store::api_keys::{self, LiveKey};
use crate::store::Store;

/// Age of a remembered key after which it is read again: the longest a key revoked by another
/// process is still accepted here.
pub const REVALIDATE_AFTER: Duration = Duration::from_secs(1);
/// Shortest time between two recorded uses of one key by one process.
pub const USE_RECORDED_EVERY: chrono::Duration = chrono::Duration::minutes(1);
/// How long a key unused by this process stays remembered.
const FORGOTTEN_AFTER: Duration = Duration::from_secs(60);

/// Whether a bearer token is an API key (rather than an access token).
pub fn is_api_key(token: &str) -> bool {
    token.starts_with(API_KEY_SECRET_PREFIX)
}

/// The process's remembered keys and recorded uses.
#[derive(Default)]
pub struct ApiKeys {
    known: RwLock<Known>,
    /// Bumped by every revocation: a lookup that started before one does not remember its
    /// result, which may predate the revocation.
    generation: AtomicU64,
    /// The last recorded use of each key, by key id.
    uses: Mutex<HashMap<String, DateTime<Utc>>>,
}

#[derive(Default)]
struct Known {
    by_digest: HashMap<String, Remembered>,
    swept: Option<Instant>,
}

struct Remembered {
    key: Arc<LiveKey>,
    checked: Instant,
}

impl ApiKeys {
    /// The live key whose secret is `secret`, or `None`. Reads the database only when the key
    /// is not remembered, or was last read [`REVALIDATE_AFTER`] ago or more. Records the use
    /// at `now` (see the module's documentation).
    pub async fn verify(
        &self,
        store: &Store,
        keys: &ServerKeys,
        secret: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Arc<LiveKey>>, sqlx::Error> {
        let digest = keys.lookup_digest(secret);
        let key = match self.remembered(&digest, Instant::now()) {
            Some(key) => key,
            None => {
                let generation = self.generation.load(Ordering::Acquire);
                let Some(key) = api_keys::live_by_digest(store, &digest).await? else {
                    self.write().by_digest.remove(&digest);
                    return Ok(None);
                };
                let key = Arc::new(key);
                self.remember(digest, key.clone(), generation, Instant::now());
                key
            }
        };
        if self.claim_use(&key.key_id, now) {
            let (store, key) = (store.clone(), key.clone());
            tokio::spawn(async move {
                if let Err(error) =
                    api_keys::record_use(&store, key.merchant_id, &key.key_id, now).await
                {
                    tracing::warn!(key_id = key.key_id, %error, "recording an API key's use");
                }
            });
        }
        Ok(Some(key))
    }

    /// Forgets the key with this digest and id, which was just revoked: refused from now on.
    pub fn forget(&self, digest: &str, key_id: &str) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.write().by_digest.remove(digest);
        self.lock_uses().remove(key_id);
    }

    /// The last use of key `key_id` this process recorded (or is recording).
    pub fn last_use(&self, key_id: &str) -> Option<DateTime<Utc>> {
        self.lock_uses().get(key_id).copied()
    }

    /// The remembered key of `digest` when it was read less than [`REVALIDATE_AFTER`] before
    /// `at`.
    fn remembered(&self, digest: &str, at: Instant) -> Option<Arc<LiveKey>> {
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
        let entry = known.by_digest.get(digest)?;
        (at.saturating_duration_since(entry.checked) < REVALIDATE_AFTER).then(|| entry.key.clone())
    }

    /// Remembers `key`, read at `at`, unless a key was revoked since `generation`. Once a
    /// minute, drops the keys not read for [`FORGOTTEN_AFTER`] (keys revoked by other
    /// processes among them).
    fn remember(&self, digest: String, key: Arc<LiveKey>, generation: u64, at: Instant) {
        let mut known = self.write();
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if known
            .swept
            .is_none_or(|swept| at.saturating_duration_since(swept) >= FORGOTTEN_AFTER)
        {
            known
                .by_digest
                .retain(|_, entry| at.saturating_duration_since(entry.checked) < FORGOTTEN_AFTER);
            known.swept = Some(at);
        }
        known
            .by_digest
            .insert(digest, Remembered { key, checked: at });
    }

    /// Whether a use of `key_id` at `now` is to be recorded: the first one of this process,
    /// or [`USE_RECORDED_EVERY`] after the last one recorded. Notes it when so.
    fn claim_use(&self, key_id: &str, now: DateTime<Utc>) -> bool {
        let mut uses = self.lock_uses();
        match uses.get_mut(key_id) {
            Some(last) if now - *last < USE_RECORDED_EVERY => false,
            Some(last) => {
                *last = now;
                true
            }
            None => {
                uses.insert(key_id.to_string(), now);
                true
            }
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Known> {
        self.known.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_uses(&self) -> std::sync::MutexGuard<'_, HashMap<String, DateTime<Utc>>> {
        self.uses.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::api_keys::Scope;

    fn key(id: &str) -> Arc<LiveKey> {
        Arc::new(LiveKey {
            key_id: id.into(),
            merchant_id: 7,
            scope: Scope::Read,
        })
    }

    #[test]
    fn a_remembered_key_is_used_until_it_is_due_for_a_new_read() {
        let keys = ApiKeys::default();
        let start = Instant::now();
        keys.remember("d".into(), key("ak_1"), 0, start);
        assert_eq!(keys.remembered("d", start).unwrap().key_id, "ak_1");
        let almost = start + REVALIDATE_AFTER - Duration::from_millis(1);
        assert!(keys.remembered("d", almost).is_some());
        assert!(keys.remembered("d", start + REVALIDATE_AFTER).is_none());
        assert!(keys.remembered("other", start).is_none());
    }

    #[test]
    fn a_revocation_is_seen_at_once_even_by_a_lookup_in_flight() {
        let keys = ApiKeys::default();
        let start = Instant::now();
        keys.remember("d".into(), key("ak_1"), 0, start);
        // A lookup starts (generation 0), the key is revoked, the lookup ends.
        keys.forget("d", "ak_1");
        assert!(keys.remembered("d", start).is_none());
        keys.remember("d".into(), key("ak_1"), 0, start);
        assert!(keys.remembered("d", start).is_none());
        // A lookup that starts after the revocation is remembered.
        keys.remember("e".into(), key("ak_2"), 1, start);
        assert!(keys.remembered("e", start).is_some());
    }

    #[test]
    fn keys_unread_for_a_minute_are_dropped() {
        let keys = ApiKeys::default();
        let start = Instant::now();
        keys.remember("old".into(), key("ak_1"), 0, start);
        keys.remember("new".into(), key("ak_2"), 0, start + FORGOTTEN_AFTER);
        let known = keys.known.read().unwrap();
        assert!(!known.by_digest.contains_key("old"));
        assert!(known.by_digest.contains_key("new"));
    }

    #[test]
    fn a_use_is_recorded_at_most_once_a_minute() {
        let keys = ApiKeys::default();
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert!(keys.claim_use("ak_1", t));
        assert!(!keys.claim_use("ak_1", t + chrono::Duration::seconds(59)));
        assert!(keys.claim_use("ak_2", t));
        assert_eq!(keys.last_use("ak_1"), Some(t));
        let later = t + USE_RECORDED_EVERY;
        assert!(keys.claim_use("ak_1", later));
        assert_eq!(keys.last_use("ak_1"), Some(later));
        keys.forget("d", "ak_1");
        assert_eq!(keys.last_use("ak_1"), None);
    }
}
