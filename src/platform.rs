//! What the layers below the HTTP surface work with: the database, the processor, the clock,
//! the server keys, the configuration, the templates and the metrics. Billing, the cashier,
//! events, delivery and the workers take a [`Platform`]; the HTTP layer's
//! [`AppState`](crate::state::AppState) holds one beside what only requests need (access tokens,
//! the login limiter, the pages' strings), so no lower layer sees the whole application.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::clock::Clock;
use crate::config::Config;
use crate::keys::ServerKeys;
use crate::metrics::Metrics;
use crate::processor::stripe::StripeApi;
use crate::processor::Processor;
use crate::store::test_clocks;
use crate::store::Store;

/// The shared platform of one process.
pub struct Platform {
    /// The configuration the process started with.
    pub config: Config,
    /// The database.
    pub store: Store,
    /// Keys derived from the server key.
    pub keys: ServerKeys,
    /// The injected clock.
    pub clock: Arc<dyn Clock>,
    /// The payment processor (the built-in sandbox, DESIGN §7).
    pub processor: Arc<dyn Processor>,
    /// Stripe's API, for the merchants' connected Stripe accounts.
    pub stripe: StripeApi,
    /// HTML, text and e-mail templates.
    pub templates: minijinja::Environment<'static>,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// Base URL of links handed to browsers: `RECUR_PUBLIC_URL`, or `http://` (`https://` with
    /// TLS) and the bound address.
    pub public_url: String,
}

impl Platform {
    /// The merchant's current time: its test clock when it has one (sandbox), otherwise the
    /// injected clock.
    pub async fn merchant_now(&self, merchant_id: i64) -> Result<DateTime<Utc>, sqlx::Error> {
        Ok(test_clocks::get(self.store.pool(), merchant_id)
            .await?
            .unwrap_or_else(|| self.clock.now()))
    }
}
