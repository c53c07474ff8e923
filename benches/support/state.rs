//! recur's application state for the worker benchmarks (renewals, webhooks, e-mail): built from
//! configuration as `recur serve` builds it, on the system clock, with one sandbox merchant.
//! Shared by the benchmark binaries through `#[path]`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use recur::clock::SystemClock;
use recur::config::Config;
use recur::merchants::{self, MerchantCredentials};
use recur::state::AppState;
use recur::store::merchants::Mode;

/// recur on `database_url`, its files in `data_dir`, with `settings` (`RECUR_*` variables) on top
/// of the defaults, no demo merchant, and one sandbox merchant of its own.
pub async fn with_merchant(
    database_url: &str,
    data_dir: &Path,
    settings: &[(&str, String)],
) -> (AppState, MerchantCredentials) {
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("RECUR_DATA_DIR", data_dir.display().to_string());
    env.insert("RECUR_DATABASE_URL", database_url.to_string());
    env.insert("RECUR_DEMO_MERCHANT", "false".into());
    for (name, value) in settings {
        env.insert(name, value.clone());
    }
    let config = Config::from_sources(None, |k| env.get(k).cloned()).expect("config");
    let state = AppState::build(config, Arc::new(SystemClock), None)
        .await
        .expect("state");
    let merchant = merchants::create(&state, "Bench", Mode::Sandbox)
        .await
        .expect("merchant");
    (state, merchant)
}
