//! A merchant's API keys (DESIGN §11), for the API (`/api-keys`) and the dashboard's keys page
//! alike: create one (its secret answered once, stored only as its keyed lookup digest), list the
//! live ones, revoke one. Checking keys on requests is [`crate::auth::api_keys`]'s job.

use recur_domain::validation::{self as rules, FieldErrors};

use super::ServiceError;
use crate::http::input::{required_text, Field};
use crate::ids;
use crate::state::AppState;
use crate::store::api_keys::{self, ApiKey, NewApiKey, Scope, MAX_LIVE_PER_MERCHANT};

/// Longest key `name`.
const MAX_NAME_CHARS: usize = 100;

/// A new key as given.
#[derive(Debug, Default)]
pub struct NewKey {
    /// The merchant's name for the key: required, at most 100 characters.
    pub name: Field<String>,
    /// What it may do: `read` or `write`.
    pub scope: Field<String>,
}

/// A key creation's name and scope, checked: every failing field is listed.
fn read(new: NewKey) -> Result<(String, Scope), ServiceError> {
    let mut errors = FieldErrors::new();
    let name = required_text(new.name, "name", &mut errors, |v| {
        rules::bounded_text(v, MAX_NAME_CHARS)
    });
    let scope = new.scope.required("scope", &mut errors).and_then(|v| {
        let scope = Scope::parse(&v).ok_or_else(|| "must be read or write".to_string());
        errors.check("scope", scope)
    });
    match (name, scope) {
        (Some(name), Some(scope)) if errors.is_empty() => Ok((name, scope)),
        _ => Err(ServiceError::Validation(errors)),
    }
}

/// Creates the merchant's key `new` describes: the key as stored and its secret, which only this
/// answer holds. Every failing field is listed; a conflict when the merchant holds 100 live keys
/// already.
pub async fn create(
    state: &AppState,
    merchant_id: i64,
    new: NewKey,
) -> Result<(ApiKey, String), ServiceError> {
    let (name, scope) = read(new)?;
    let secret = ids::api_key_secret();
    let new = NewApiKey {
        key_id: ids::api_key_id(),
        name,
        scope,
        secret_digest: state.keys.lookup_digest(&secret),
    };
    let key = api_keys::insert(&state.store, merchant_id, &new, state.clock.now())
        .await?
        .ok_or_else(|| {
            ServiceError::Conflict(format!(
                "A merchant holds at most {MAX_LIVE_PER_MERCHANT} live API keys; revoke one \
                 first."
            ))
        })?;
    Ok((key, secret))
}

/// The merchant's live keys, newest first, without their secrets (revoked keys are not listed).
/// Each one's last use is the later of the stored one and the one this process is still
/// writing, so a use shows at once in the process that served it.
pub async fn list(state: &AppState, merchant_id: i64) -> Result<Vec<ApiKey>, ServiceError> {
    let keys = api_keys::live_for_merchant(&state.store, merchant_id).await?;
    Ok(keys
        .into_iter()
        .map(|key| ApiKey {
            last_used_at: key.last_used_at.max(state.api_keys.last_use(&key.key_id)),
            ..key
        })
        .collect())
}

/// Revokes the merchant's live key `key_id`: refused from now on, in this process at once (it
/// forgets the key) and in every other process sharing the database within a second. Not found
/// when the merchant has no such live key.
pub async fn revoke(state: &AppState, merchant_id: i64, key_id: &str) -> Result<(), ServiceError> {
    let digest = api_keys::revoke(&state.store, merchant_id, key_id, state.clock.now())
        .await?
        .ok_or(ServiceError::NotFound)?;
    state.api_keys.forget(&digest, key_id);
    tracing::info!(merchant_id, key_id, "API key revoked");
    Ok(())
}
