//! A merchant's payment processors (DESIGN §17, §18), for the API (`/processors`) and the
//! dashboard's Processors page alike: the sandbox set every merchant has, the Stripe
//! accounts it connects, and its SEPA processors ([`super::sepa::creditors`]). Connecting checks the secret key with Stripe (one `GET /v1/balance`);
//! a sandbox merchant takes test keys only, a live one live keys only. The secret key and the
//! webhook signing secret are sealed at rest and never answered: a key shows its last four.

use chrono::{DateTime, Utc};
use recur_domain::stripe_keys::{self, KeyMode};
use recur_domain::validation::{self as rules, FieldErrors};

use super::sepa::creditors::{self, NewSepa, SepaChange};
use super::ServiceError;
use crate::http::input::{optional_text, refuse_given, required_text, Field};
use crate::platform::Platform;
use crate::processor::stripe::{Form, StripeError};
use crate::store::merchants::{self, Mode};
use crate::store::processors::{self, ProcessorKind, Removal};
use crate::store::sepa_accounts::{self, Creditor};
use crate::store::stripe_accounts::{self, Account, Changes, NewAccount};

/// Longest processor `name`.
const MAX_NAME_CHARS: usize = 100;

/// What kind of processor a listed one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A sandbox card gateway (DESIGN §7).
    SandboxCard,
    /// A sandbox alternative method (e-wallet, bank transfer).
    SandboxAlternative,
    /// A connected Stripe account.
    Stripe,
    /// A SEPA processor: direct debits from customers' bank accounts under mandates.
    SepaDebit,
}

impl Kind {
    /// The name answered in `kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SandboxCard => "sandbox-card",
            Kind::SandboxAlternative => "sandbox-alternative",
            Kind::Stripe => "stripe",
            Kind::SepaDebit => "sepa_debit",
        }
    }
}

/// A processor as the merchant sees it.
#[derive(Debug, Clone)]
pub struct Processor {
    /// `PaymentProcessorId`.
    pub processor_id: i64,
    /// Its name.
    pub name: String,
    /// Sandbox card, sandbox alternative, Stripe or SEPA.
    pub kind: Kind,
    /// Whether it takes new cards on the hosted pages (the first sandbox card gateway stands
    /// for the sandbox set).
    pub default: bool,
    /// When it was connected; `None` for the sandbox set, which the merchant was created with.
    pub created_at: Option<DateTime<Utc>>,
    /// A Stripe account's public details.
    pub stripe: Option<StripeDetails>,
    /// A SEPA processor's creditor.
    pub sepa: Option<Creditor>,
}

/// What is shown of a connected Stripe account: never a secret.
#[derive(Debug, Clone)]
pub struct StripeDetails {
    /// Whether its keys are live ones.
    pub live: bool,
    /// The secret key's last four characters.
    pub secret_key_last4: String,
    /// `pk_…`, which Stripe.js is given on the hosted pages.
    pub publishable_key: String,
    /// Where to point the account's webhook endpoint in Stripe's dashboard.
    pub webhook_url: String,
}

/// A processor to connect, as given: a Stripe account or a SEPA processor.
#[derive(Debug, Default)]
pub struct NewProcessor {
    /// `"stripe"` or `"sepa_debit"`.
    pub kind: Field<String>,
    /// The name shown in the cashier, events and the dashboard, at most 100 characters.
    pub name: Field<String>,
    /// `sk_test_…` (sandbox merchants) or `sk_live_…` (live ones).
    pub secret_key: Field<String>,
    /// `pk_test_…` or `pk_live_…`, of the secret key's mode.
    pub publishable_key: Field<String>,
    /// `whsec_…`, from the webhook endpoint the merchant adds in Stripe's dashboard.
    pub webhook_secret: Field<String>,
    /// `true` makes it the default card processor at once.
    pub default: Field<bool>,
    /// A SEPA processor's creditor.
    pub sepa: NewSepa,
}

/// A change of a processor: each field given replaces the stored one.
#[derive(Debug, Default)]
pub struct ProcessorChange {
    /// A new name (connected processors only).
    pub name: Field<String>,
    /// A new secret key, checked with Stripe as on connect.
    pub secret_key: Field<String>,
    /// A new publishable key.
    pub publishable_key: Field<String>,
    /// A new webhook signing secret.
    pub webhook_secret: Field<String>,
    /// `true` makes it the default card processor (any card processor of the merchant).
    pub default: Field<bool>,
    /// A SEPA processor's creditor changes.
    pub sepa: SepaChange,
}

/// The merchant's processors: the sandbox set in cascade order, then its Stripe accounts.
pub async fn list(state: &Platform, merchant_id: i64) -> Result<Vec<Processor>, ServiceError> {
    let default = stripe_accounts::default_card(state.store.pool(), merchant_id).await?;
    let accounts = stripe_accounts::list(state.store.pool(), merchant_id).await?;
    let mut listed = Vec::new();
    let mut first_card = true;
    for processor in processors::list(state.store.pool(), merchant_id).await? {
        let kind = match processor.kind {
            ProcessorKind::Card => Kind::SandboxCard,
            ProcessorKind::Alternative => Kind::SandboxAlternative,
        };
        listed.push(Processor {
            processor_id: processor.processor_id,
            name: processor.name,
            kind,
            default: default.is_none() && kind == Kind::SandboxCard && first_card,
            created_at: None,
            stripe: None,
            sepa: None,
        });
        first_card &= kind != Kind::SandboxCard;
    }
    listed.extend(
        accounts
            .into_iter()
            .map(|account| connected(state, account, default)),
    );
    let sepa = sepa_accounts::list(state.store.pool(), merchant_id).await?;
    listed.extend(sepa.into_iter().map(sepa_processor));
    Ok(listed)
}

/// The merchant's processor `processor_id`.
pub async fn get(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
) -> Result<Processor, ServiceError> {
    list(state, merchant_id)
        .await?
        .into_iter()
        .find(|p| p.processor_id == processor_id)
        .ok_or(ServiceError::NotFound)
}

/// Checks `new` and connects it: a SEPA processor ([`creditors::connect`]), or a Stripe
/// account once Stripe said its secret key is good. Every failing field is listed; a key
/// Stripe refuses is a 400 on `secretKey`; Stripe out of reach is a 503 with nothing stored.
pub async fn connect(
    state: &Platform,
    merchant_id: i64,
    new: NewProcessor,
) -> Result<Processor, ServiceError> {
    let mut errors = FieldErrors::new();
    let kind = required_text(new.kind, "kind", &mut errors, |v| match v {
        "stripe" | "sepa_debit" => Ok(v.to_owned()),
        _ => Err("must be stripe or sepa_debit".into()),
    });
    let name = required_text(new.name, "name", &mut errors, |v| {
        rules::bounded_text(v, MAX_NAME_CHARS)
    });
    if kind.as_deref() == Some("sepa_debit") {
        refuse_given(
            &[
                ("secretKey", new.secret_key.is_given()),
                ("publishableKey", new.publishable_key.is_given()),
                ("webhookSecret", new.webhook_secret.is_given()),
            ],
            "a sepa_debit processor has no such setting",
            &mut errors,
        );
        if new.default.is_given() {
            errors.add("default", "only a card processor can be the default");
        }
        let account = creditors::connect(state, merchant_id, name, new.sepa, errors).await?;
        return Ok(sepa_processor(account));
    }
    refuse_given(
        &[
            ("creditorId", new.sepa.creditor_id.is_given()),
            ("creditorName", new.sepa.creditor_name.is_given()),
            ("iban", new.sepa.iban.is_given()),
            ("bic", new.sepa.bic.is_given()),
            ("leadDays", new.sepa.lead_days.is_given()),
        ],
        "a stripe processor has no such setting",
        &mut errors,
    );
    let mode = key_mode(state, merchant_id).await?;
    let secret_key = required_text(new.secret_key, "secretKey", &mut errors, |v| {
        stripe_keys::secret_key(v, mode)
    });
    let publishable_key = required_text(new.publishable_key, "publishableKey", &mut errors, |v| {
        stripe_keys::publishable_key(v, mode)
    });
    let webhook_secret = required_text(
        new.webhook_secret,
        "webhookSecret",
        &mut errors,
        stripe_keys::webhook_secret,
    );
    let make_default = new.default.optional("default", &mut errors);
    let (Some(_), Some(name), Some(secret_key), Some(publishable_key), Some(webhook_secret)) =
        (kind, name, secret_key, publishable_key, webhook_secret)
    else {
        return Err(ServiceError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    check_key(state, &secret_key).await?;
    let new = NewAccount {
        name,
        secret_key_sealed: state.keys.seal(&secret_key),
        secret_key_last4: stripe_keys::last4(&secret_key),
        live: mode == KeyMode::Live,
        publishable_key,
        webhook_secret_sealed: state.keys.seal(&webhook_secret),
    };
    let now = state.merchant_now(merchant_id).await?;
    let account = stripe_accounts::insert(&state.store, merchant_id, &new, now)
        .await?
        .ok_or_else(|| {
            ServiceError::Conflict(format!(
                "A merchant connects at most {} Stripe accounts; remove one first.",
                stripe_accounts::MAX_PER_MERCHANT
            ))
        })?;
    if make_default == Some(true) {
        let mut tx = state.store.begin().await?;
        stripe_accounts::set_default_card(&mut tx, merchant_id, Some(account.processor_id)).await?;
        tx.commit().await?;
    }
    tracing::info!(
        merchant_id,
        processor_id = account.processor_id,
        "Stripe account connected"
    );
    get(state, merchant_id, account.processor_id).await
}

/// Applies `change` to the merchant's processor `processor_id`. A sandbox card gateway takes
/// `default` only; a Stripe account its name, keys and `default`, a new secret key checked
/// with Stripe first; a SEPA processor its name and creditor details.
pub async fn change(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
    change: ProcessorChange,
) -> Result<Processor, ServiceError> {
    let listed = list(state, merchant_id).await?;
    let first_sandbox_card = listed
        .iter()
        .find(|p| p.kind == Kind::SandboxCard)
        .map(|p| p.processor_id);
    let current = listed
        .into_iter()
        .find(|p| p.processor_id == processor_id)
        .ok_or(ServiceError::NotFound)?;
    let mode = key_mode(state, merchant_id).await?;
    let mut errors = FieldErrors::new();
    let stripe = current.kind == Kind::Stripe;
    let sepa = current.kind == Kind::SepaDebit;
    let no_such_setting = format!("a {} processor has no such setting", current.kind.as_str());
    if !stripe && !sepa {
        refuse_given(
            &[("name", change.name.is_given())],
            &no_such_setting,
            &mut errors,
        );
    }
    if !stripe {
        refuse_given(
            &[
                ("secretKey", change.secret_key.is_given()),
                ("publishableKey", change.publishable_key.is_given()),
                ("webhookSecret", change.webhook_secret.is_given()),
            ],
            &no_such_setting,
            &mut errors,
        );
    }
    if !sepa {
        refuse_given(
            &[
                ("creditorId", change.sepa.creditor_id.is_given()),
                ("creditorName", change.sepa.creditor_name.is_given()),
                ("iban", change.sepa.iban.is_given()),
                ("bic", change.sepa.bic.is_given()),
                ("leadDays", change.sepa.lead_days.is_given()),
            ],
            &no_such_setting,
            &mut errors,
        );
    }
    let name = optional_text(change.name, "name", &mut errors, |v| {
        rules::bounded_text(v, MAX_NAME_CHARS)
    });
    if sepa {
        let changes = creditors::changes(change.sepa, name, &mut errors);
        if change.default.is_given() {
            errors.add("default", "only a card processor can be the default");
        }
        if !errors.is_empty() {
            return Err(ServiceError::Validation(errors));
        }
        let account = creditors::change(state, merchant_id, processor_id, &changes).await?;
        return Ok(sepa_processor(account));
    }
    let secret_key = optional_text(change.secret_key, "secretKey", &mut errors, |v| {
        stripe_keys::secret_key(v, mode)
    });
    let publishable_key =
        optional_text(change.publishable_key, "publishableKey", &mut errors, |v| {
            stripe_keys::publishable_key(v, mode)
        });
    let webhook_secret = optional_text(
        change.webhook_secret,
        "webhookSecret",
        &mut errors,
        stripe_keys::webhook_secret,
    );
    let make_default = change.default.optional("default", &mut errors);
    match make_default {
        Some(false) if current.default => {
            errors.add("default", "make another card processor the default instead")
        }
        Some(_) if !matches!(current.kind, Kind::SandboxCard | Kind::Stripe) => {
            errors.add("default", "only a card processor can be the default")
        }
        Some(true)
            if current.kind == Kind::SandboxCard && first_sandbox_card != Some(processor_id) =>
        {
            errors.add(
                "default",
                "the sandbox card gateways cascade from the first one; make that one the default",
            )
        }
        _ => {}
    }
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    if let Some(key) = &secret_key {
        check_key(state, key).await?;
    }
    let mut tx = state.store.begin().await?;
    if stripe {
        let changes = Changes {
            name,
            secret_key: secret_key.map(|key| {
                (
                    state.keys.seal(&key),
                    stripe_keys::last4(&key),
                    mode == KeyMode::Live,
                )
            }),
            publishable_key,
            webhook_secret_sealed: webhook_secret.map(|secret| state.keys.seal(&secret)),
        };
        stripe_accounts::update(&mut tx, merchant_id, processor_id, &changes)
            .await?
            .ok_or(ServiceError::NotFound)?;
    }
    if make_default == Some(true) {
        let default = stripe.then_some(processor_id);
        stripe_accounts::set_default_card(&mut tx, merchant_id, default).await?;
    }
    tx.commit().await?;
    get(state, merchant_id, processor_id).await
}

/// Disconnects the merchant's connected processor `processor_id`: 404 for the sandbox set
/// (which stays) and unknown ids; 409 while a payment method it holds is some customer's, or
/// (Stripe) a cashier payment waits for its answer.
pub async fn disconnect(
    state: &Platform,
    merchant_id: i64,
    processor_id: i64,
) -> Result<(), ServiceError> {
    if sepa_accounts::get(state.store.pool(), merchant_id, processor_id)
        .await?
        .is_some()
    {
        return creditors::remove(state, merchant_id, processor_id).await;
    }
    let mut tx = state.store.begin().await?;
    match stripe_accounts::delete(&mut tx, merchant_id, processor_id).await? {
        Removal::Removed => {
            tx.commit().await?;
            tracing::info!(merchant_id, processor_id, "Stripe account disconnected");
            Ok(())
        }
        Removal::NotFound => Err(ServiceError::NotFound),
        Removal::InUse => Err(ServiceError::Conflict(
            "A customer's payment method, or a cashier payment waiting for Stripe, is held by \
             this Stripe account; it cannot be removed while it is in use."
                .into(),
        )),
    }
}

/// The account as listed.
fn connected(state: &Platform, account: Account, default: Option<i64>) -> Processor {
    Processor {
        processor_id: account.processor_id,
        default: default == Some(account.processor_id),
        kind: Kind::Stripe,
        created_at: Some(account.created_at),
        stripe: Some(StripeDetails {
            live: account.live,
            webhook_url: webhook_url(state, account.processor_id),
            secret_key_last4: account.secret_key_last4,
            publishable_key: account.publishable_key,
        }),
        sepa: None,
        name: account.name,
    }
}

/// A SEPA processor as listed.
fn sepa_processor(account: sepa_accounts::Account) -> Processor {
    Processor {
        processor_id: account.processor_id,
        name: account.name,
        kind: Kind::SepaDebit,
        default: false,
        created_at: Some(account.created_at),
        stripe: None,
        sepa: Some(account.creditor),
    }
}

/// Where Stripe is to send the account's events.
pub fn webhook_url(state: &Platform, processor_id: i64) -> String {
    format!("{}/webhooks/stripe/{processor_id}", state.public_url)
}

/// The key mode the merchant's mode allows.
async fn key_mode(state: &Platform, merchant_id: i64) -> Result<KeyMode, ServiceError> {
    let merchant = merchants::by_id(&state.store, merchant_id)
        .await?
        .ok_or(ServiceError::NotFound)?;
    Ok(match merchant.mode {
        Mode::Sandbox => KeyMode::Test,
        Mode::Live => KeyMode::Live,
    })
}

/// Asks Stripe whether `secret_key` is good: its balance answers for a good key.
async fn check_key(state: &Platform, secret_key: &str) -> Result<(), ServiceError> {
    let answer: Result<serde_json::Value, StripeError> = state
        .stripe
        .get(secret_key, "/v1/balance", &Form::new())
        .await;
    match answer {
        Ok(_) => Ok(()),
        Err(StripeError::Refused(refusal)) => Err(ServiceError::invalid(
            "secretKey",
            format!("Stripe refused this key: {}", refusal.message),
        )),
        Err(StripeError::Unanswered(why)) => Err(ServiceError::Unavailable(format!(
            "Stripe could not check the key ({why}); nothing was stored, try again."
        ))),
    }
}
