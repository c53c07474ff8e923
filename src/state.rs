//! The state of the HTTP layer: the process's [`Platform`] and what only requests need (access
//! tokens, remembered API keys, the login limiter, the merchants' processor keys, the hosted
//! pages' strings) and the two delivery workers' handles. Built once at start-up
//! ([`AppState::build`]).

use std::net::SocketAddr;
use std::ops::Deref;
use std::sync::Arc;

use anyhow::Context;

use crate::auth::api_keys::ApiKeys;
use crate::auth::jwt::TokenService;
use crate::auth::login_limiter::LoginLimiter;
use crate::clock::Clock;
use crate::config::Config;
use crate::delivery::mail::Mailer;
use crate::delivery::webhooks::Dispatcher;
use crate::i18n::Strings;
use crate::keys::ServerKeys;
use crate::merchants::ProcessorKeys;
use crate::metrics::Metrics;
use crate::platform::Platform;
use crate::processor::sandbox::SandboxProcessor;
use crate::processor::stripe::StripeApi;
use crate::store::Store;

/// State shared by every request handler and worker.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What [`AppState`] holds.
pub struct Shared {
    /// What every layer works with.
    pub platform: Arc<Platform>,
    /// Access-token signer and verifier.
    pub tokens: TokenService,
    /// API keys remembered by this process, and their recorded uses.
    pub api_keys: ApiKeys,
    /// Failed-login limiter.
    pub login_limiter: LoginLimiter,
    /// Merchants' processor keys, remembered (they never change).
    pub processor_keys: ProcessorKeys,
    /// The hosted pages' strings by language.
    pub strings: Strings,
    /// The webhook dispatcher.
    pub webhooks: Arc<Dispatcher>,
    /// The e-mail sender.
    pub mailer: Arc<Mailer>,
}

impl Deref for Shared {
    type Target = Platform;
    fn deref(&self) -> &Platform {
        &self.platform
    }
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// Where merchant pages load `cashier.js` from: `RECUR_CDN_URL`, else recur's own `/cdn`.
    pub fn cdn_url(&self) -> String {
        self.config
            .cdn_url
            .clone()
            .unwrap_or_else(|| format!("{}/cdn", self.public_url))
    }

    /// Opens the store (running migrations) and builds everything the handlers need. `bound` is
    /// the address the server listens on, when it does.
    pub async fn build(
        config: Config,
        clock: Arc<dyn Clock>,
        bound: Option<SocketAddr>,
    ) -> anyhow::Result<Self> {
        if config.is_sqlite() {
            std::fs::create_dir_all(&config.data_dir)
                .with_context(|| format!("creating {}", config.data_dir.display()))?;
        }
        let keys = ServerKeys::load_or_create(config.secret_key.as_deref(), &config.data_dir)?;
        let store = Store::connect(&config.database_url).await?;
        store.migrate().await?;
        let tokens = TokenService::new(&config.jwt, &keys)?;
        let public_url = config.public_url.clone().unwrap_or_else(|| {
            let scheme = scheme(&config);
            format!("{scheme}://{}", bound.unwrap_or(config.listen))
        });
        let processor = Arc::new(SandboxProcessor::new(store.clone(), clock.clone()));
        let stripe = StripeApi::new(&config.stripe)?;
        let webhooks = Dispatcher::new(&config.webhooks)?;
        let mailer = Mailer::new(&config)?;
        Ok(Self(Arc::new(Shared {
            platform: Arc::new(Platform {
                config,
                store,
                keys,
                clock,
                processor,
                stripe,
                templates: templates(),
                metrics: Metrics::default(),
                public_url,
            }),
            tokens,
            api_keys: ApiKeys::default(),
            login_limiter: LoginLimiter::new(),
            processor_keys: ProcessorKeys::default(),
            strings: Strings::load()?,
            webhooks: Arc::new(webhooks),
            mailer: Arc::new(mailer),
        })))
    }
}

/// `https` when the server speaks TLS itself, else `http`.
pub fn scheme(config: &Config) -> &'static str {
    if config.tls.is_some() {
        "https"
    } else {
        "http"
    }
}

fn templates() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    for (name, source) in [
        (
            "reference.html",
            include_str!("../templates/reference.html"),
        ),
        ("base.html", include_str!("../templates/base.html")),
        ("cashier.html", include_str!("../templates/cashier.html")),
        (
            "cashier_done.html",
            include_str!("../templates/cashier_done.html"),
        ),
        ("expired.html", include_str!("../templates/expired.html")),
        (
            "cashier_order.html",
            include_str!("../templates/cashier_order.html"),
        ),
        (
            "card_fields.html",
            include_str!("../templates/card_fields.html"),
        ),
        ("checkout.html", include_str!("../templates/checkout.html")),
        (
            "checkout_done.html",
            include_str!("../templates/checkout_done.html"),
        ),
        (
            "challenge.html",
            include_str!("../templates/challenge.html"),
        ),
        (
            "stripe_card_element.html",
            include_str!("../templates/stripe_card_element.html"),
        ),
        (
            "stripe_authenticate.html",
            include_str!("../templates/stripe_authenticate.html"),
        ),
        ("notice.html", include_str!("../templates/notice.html")),
        ("portal.html", include_str!("../templates/portal.html")),
        (
            "portal_card.html",
            include_str!("../templates/portal_card.html"),
        ),
        (
            "portal_cancel.html",
            include_str!("../templates/portal_cancel.html"),
        ),
        (
            "portal_switch.html",
            include_str!("../templates/portal_switch.html"),
        ),
        ("invoice.html", include_str!("../templates/invoice.html")),
        ("usage.html", include_str!("../templates/usage.html")),
        (
            "dashboard/frame.html",
            include_str!("../templates/dashboard/frame.html"),
        ),
        (
            "dashboard/login.html",
            include_str!("../templates/dashboard/login.html"),
        ),
        (
            "dashboard/customers.html",
            include_str!("../templates/dashboard/customers.html"),
        ),
        (
            "dashboard/customer.html",
            include_str!("../templates/dashboard/customer.html"),
        ),
        (
            "dashboard/membership.html",
            include_str!("../templates/dashboard/membership.html"),
        ),
        (
            "dashboard/invoice_list.html",
            include_str!("../templates/dashboard/invoice_list.html"),
        ),
        (
            "dashboard/attempts.html",
            include_str!("../templates/dashboard/attempts.html"),
        ),
        (
            "dashboard/invoices.html",
            include_str!("../templates/dashboard/invoices.html"),
        ),
        (
            "dashboard/confirm.html",
            include_str!("../templates/dashboard/confirm.html"),
        ),
        (
            "dashboard/outcome.html",
            include_str!("../templates/dashboard/outcome.html"),
        ),
        (
            "dashboard/catalog.html",
            include_str!("../templates/dashboard/catalog.html"),
        ),
        (
            "dashboard/catalog_product.html",
            include_str!("../templates/dashboard/catalog_product.html"),
        ),
        (
            "dashboard/prices_table.html",
            include_str!("../templates/dashboard/prices_table.html"),
        ),
        (
            "dashboard/coupons.html",
            include_str!("../templates/dashboard/coupons.html"),
        ),
        (
            "dashboard/api_keys.html",
            include_str!("../templates/dashboard/api_keys.html"),
        ),
        (
            "dashboard/settings.html",
            include_str!("../templates/dashboard/settings.html"),
        ),
        (
            "dashboard/webhooks.html",
            include_str!("../templates/dashboard/webhooks.html"),
        ),
        (
            "dashboard/webhook_endpoint.html",
            include_str!("../templates/dashboard/webhook_endpoint.html"),
        ),
        (
            "dashboard/overview.html",
            include_str!("../templates/dashboard/overview.html"),
        ),
        (
            "dashboard/memberships.html",
            include_str!("../templates/dashboard/memberships.html"),
        ),
        (
            "dashboard/events.html",
            include_str!("../templates/dashboard/events.html"),
        ),
        (
            "dashboard/processors.html",
            include_str!("../templates/dashboard/processors.html"),
        ),
        (
            "dashboard/sandbox.html",
            include_str!("../templates/dashboard/sandbox.html"),
        ),
        (
            "dashboard/sepa.html",
            include_str!("../templates/dashboard/sepa.html"),
        ),
        (
            "email/message.txt",
            include_str!("../templates/email/message.txt"),
        ),
        (
            "email/message.html",
            include_str!("../templates/email/message.html"),
        ),
        (
            "email/endpoint_disabled.txt",
            include_str!("../templates/email/endpoint_disabled.txt"),
        ),
        (
            "email/endpoint_disabled.html",
            include_str!("../templates/email/endpoint_disabled.html"),
        ),
    ] {
        env.add_template(name, source)
            .expect("the bundled templates parse");
    }
    env
}
