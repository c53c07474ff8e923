//! Merchant onboarding: fresh credentials, stored hashed or sealed, shown once.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde::Serialize;

use crate::auth::password;
use crate::ids;
use crate::keys::random_bytes;
use crate::platform::Platform;
use crate::store::merchants::{self, Mode, NewMerchant};
use crate::store::processors;
use crate::store::Store;

/// Everything a new merchant needs to integrate, printed once at creation and never again:
/// the password is stored as an argon2id hash and the secrets sealed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MerchantCredentials {
    /// Numeric merchant id.
    pub merchant_id: i64,
    /// Login name for `POST /auth`.
    pub user_name: String,
    /// Password for `POST /auth`.
    pub password: String,
    /// Processor key (UUID) to send when creating customers.
    pub processor_key: String,
    /// Secret for hosted-page requests and the spec's webhook `Signature`.
    pub merchant_secret: String,
    /// Standard Webhooks signing secret (`whsec_…`).
    pub webhook_signing_secret: String,
    /// Whether the merchant is a sandbox merchant.
    pub sandbox: bool,
}

impl MerchantCredentials {
    /// The credentials as a block of text for a terminal.
    pub fn banner(&self) -> String {
        format!(
            "demo merchant created (shown once; keep it):\n  \
             merchantId:           {}\n  \
             userName:             {}\n  \
             password:             {}\n  \
             processorKey:         {}\n  \
             merchantSecret:       {}\n  \
             webhookSigningSecret: {}\n  \
             sandbox:              {}",
            self.merchant_id,
            self.user_name,
            self.password,
            self.processor_key,
            self.merchant_secret,
            self.webhook_signing_secret,
            self.sandbox
        )
    }
}

/// Creates a merchant named `name` with fresh credentials.
pub async fn create(
    state: &Platform,
    name: &str,
    mode: Mode,
) -> anyhow::Result<MerchantCredentials> {
    let name = name.trim();
    anyhow::ensure!(!name.is_empty(), "a merchant needs a name");
    let user_name = format!("{}-{}", slug(name), ids::prefixed("", 6).to_lowercase());
    let password = ids::password();
    let merchant_secret = ids::merchant_secret();
    let webhook_signing_secret = recur_domain::signature::new_whsec(&random_bytes::<32>());
    let processor_key = uuid::Uuid::new_v4().hyphenated().to_string();
    let password_for_hash = password.clone();
    let password_hash =
        tokio::task::spawn_blocking(move || password::hash(&password_for_hash)).await??;
    let new = NewMerchant {
        name: name.to_string(),
        user_name: user_name.clone(),
        password_hash,
        processor_key: processor_key.clone(),
        secret_digest: state.keys.lookup_digest(&merchant_secret),
        secret_sealed: state.keys.seal(&merchant_secret),
        webhook_secret_sealed: state.keys.seal(&webhook_signing_secret),
        mode,
    };
    let mut tx = state.store.begin().await?;
    let merchant_id = merchants::insert(&mut tx, &new, state.clock.now()).await?;
    processors::insert_sandbox_set(&mut tx, merchant_id).await?;
    tx.commit().await?;
    tracing::info!(merchant_id, user_name, "merchant created");
    Ok(MerchantCredentials {
        merchant_id,
        user_name,
        password,
        processor_key,
        merchant_secret,
        webhook_signing_secret,
        sandbox: mode == Mode::Sandbox,
    })
}

/// Creates the demo sandbox merchant when the database has no merchant at all.
pub async fn create_demo_if_none(state: &Platform) -> anyhow::Result<Option<MerchantCredentials>> {
    if merchants::count(&state.store).await? > 0 {
        return Ok(None);
    }
    create(state, "Demo Merchant", Mode::Sandbox)
        .await
        .map(Some)
}

/// Replaces the merchant secret of the merchant with this login name; returns the new secret.
pub async fn rotate_secret(state: &Platform, user_name: &str) -> anyhow::Result<String> {
    let secret = ids::merchant_secret();
    let mut tx = state.store.begin().await?;
    let found = merchants::replace_secret(
        &mut tx,
        user_name,
        &state.keys.lookup_digest(&secret),
        &state.keys.seal(&secret),
    )
    .await?;
    anyhow::ensure!(found, "no merchant with user name {user_name:?}");
    tx.commit().await?;
    tracing::info!(user_name, "merchant secret rotated");
    Ok(secret)
}

/// Lowercase ASCII letters and digits of `name`, words joined by `-`, at most 32 characters.
fn slug(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let mut slug = words.join("-");
    slug.truncate(32);
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "merchant".into()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs() {
        assert_eq!(slug("Acme Corp."), "acme-corp");
        assert_eq!(slug("  Ünïcode  "), "n-code");
        assert_eq!(slug("!!!"), "merchant");
    }
}

/// Each merchant's processor key, read from the database once per process. A key is fixed when
/// its merchant is created (no statement changes it) and merchants are never deleted, so a
/// remembered key is never stale, whichever process created the merchant. For the same reason
/// it is also how the process knows a merchant exists; a merchant not found is not remembered,
/// since it may be created later.
#[derive(Default)]
pub struct ProcessorKeys(RwLock<HashMap<i64, Arc<str>>>);

impl ProcessorKeys {
    /// The processor key of `merchant_id`, or `None` when no such merchant exists.
    pub async fn of(
        &self,
        store: &Store,
        merchant_id: i64,
    ) -> Result<Option<Arc<str>>, sqlx::Error> {
        let known = self
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&merchant_id)
            .cloned();
        if known.is_some() {
            return Ok(known);
        }
        let Some(merchant) = merchants::by_id(store, merchant_id).await? else {
            return Ok(None);
        };
        let key: Arc<str> = merchant.processor_key.into();
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(merchant_id, key.clone());
        Ok(Some(key))
    }

    /// Whether merchant `merchant_id` exists: a database read until it has been found once.
    pub async fn exists(&self, store: &Store, merchant_id: i64) -> Result<bool, sqlx::Error> {
        Ok(self.of(store, merchant_id).await?.is_some())
    }
}
