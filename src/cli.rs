//! The `recur` command line.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use recur_domain::time::format_utc;

use crate::app;
use crate::clock::SystemClock;
use crate::config::Config;
use crate::merchants;
use crate::services::cashier::orders;
use crate::services::sandbox::{self, parse_instant};
use crate::state::AppState;
use crate::store::merchants::Mode;
use crate::store::{self, Store};

/// Self-hostable subscription billing and hosted payments.
#[derive(Debug, Parser)]
#[command(name = "recur", version, about)]
pub struct Cli {
    /// TOML configuration file (`RECUR_*` environment variables override it).
    #[arg(long, global = true, env = "RECUR_CONFIG")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the API, hosted pages and workers in one process.
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage merchants.
    #[command(subcommand)]
    Merchant(MerchantCommand),
    /// Sandbox test clocks.
    #[command(subcommand)]
    TestClock(TestClockCommand),
    /// Hosted-payment-page orders.
    #[command(subcommand)]
    Order(OrderCommand),
}

/// `recur order …`.
#[derive(Debug, Subcommand)]
pub enum OrderCommand {
    /// Retry a rejected cashier order as the provider: the same card (or alternative method)
    /// through every card gateway of the merchant. The merchant is notified with
    /// `Retried: true`; prints the new transaction as JSON.
    Retry {
        /// The merchant's user name.
        #[arg(long)]
        user_name: String,
        /// The merchant's order id.
        #[arg(long = "order-id")]
        order_id: String,
    },
}

/// `recur test-clock …`.
#[derive(Debug, Subcommand)]
pub enum TestClockCommand {
    /// Move a sandbox merchant's clock forward and run every renewal, retry and expiry that
    /// falls due on the way.
    Advance {
        /// The merchant's user name.
        #[arg(long)]
        user_name: String,
        /// The new time, UTC (`2027-01-31T10:00:00Z`).
        #[arg(long)]
        to: String,
    },
}

/// `recur merchant …`.
#[derive(Debug, Subcommand)]
pub enum MerchantCommand {
    /// Create a merchant and print its credentials (shown once).
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
        /// A live merchant instead of a sandbox one.
        #[arg(long)]
        live: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replace a merchant's secret and print the new one.
    RotateSecret {
        /// The merchant's user name.
        #[arg(long)]
        user_name: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the parsed command.
pub async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve => {
            let server = app::start(config).await?;
            println!("listening on {}", server.url());
            if let Some(metrics) = server.metrics_addr {
                println!("metrics on http://{metrics}/metrics");
            }
            server.wait().await
        }
        Command::Migrate => {
            if config.is_sqlite() {
                std::fs::create_dir_all(&config.data_dir)?;
            }
            let store = Store::connect(&config.database_url).await?;
            store.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Merchant(MerchantCommand::Create { name, live, json }) => {
            let state = AppState::build(config, Arc::new(SystemClock), None).await?;
            let mode = if live { Mode::Live } else { Mode::Sandbox };
            let credentials = merchants::create(&state, &name, mode).await?;
            if json {
                println!("{}", serde_json::to_string(&credentials)?);
            } else {
                println!(
                    "{}",
                    credentials
                        .banner()
                        .replacen("demo merchant", "merchant", 1)
                );
            }
            Ok(())
        }
        Command::TestClock(TestClockCommand::Advance { user_name, to }) => {
            let to = parse_instant(&to).map_err(|why| anyhow::anyhow!("--to {why}"))?;
            let state = AppState::build(config, Arc::new(SystemClock), None).await?;
            let merchant = store::merchants::by_user_name(&state.store, &user_name)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no merchant with user name {user_name}"))?;
            let actions = sandbox::advance_clock_to(&state, merchant.id, to).await?;
            println!(
                "test clock of {user_name} at {}; {actions} billing actions ran",
                format_utc(to)
            );
            Ok(())
        }
        Command::Order(OrderCommand::Retry {
            user_name,
            order_id,
        }) => {
            let state = AppState::build(config, Arc::new(SystemClock), None).await?;
            let merchant = store::merchants::by_user_name(&state.store, &user_name)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no merchant with user name {user_name}"))?;
            let t = orders::retry(&state, merchant.id, &order_id)
                .await
                .map_err(|e| anyhow::anyhow!("retrying order {order_id}: {e}"))?;
            println!(
                "{}",
                serde_json::json!({
                    "transactionId": t.id,
                    "orderId": t.order_id,
                    "transactionType": t.kind.as_str(),
                    "transactionStatus": t.status.as_str(),
                    "retried": t.retried,
                })
            );
            Ok(())
        }
        Command::Merchant(MerchantCommand::RotateSecret { user_name, json }) => {
            let state = AppState::build(config, Arc::new(SystemClock), None).await?;
            let secret = merchants::rotate_secret(&state, &user_name).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "userName": user_name, "merchantSecret": secret })
                );
            } else {
                println!("new merchant secret for {user_name} (shown once): {secret}");
            }
            Ok(())
        }
    }
}
