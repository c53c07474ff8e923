//! The running service: shared state, start-up and the HTTP server.

use std::net::SocketAddr;
use std::ops::Deref;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::api;
use crate::api::client_address::PeerAddress;
use crate::api::metrics::Metrics;
use crate::auth::jwt::TokenService;
use crate::auth::login_limiter::LoginLimiter;
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::delivery::mail::Mailer;
use crate::delivery::webhooks::Dispatcher;
use crate::keys::ServerKeys;
use crate::merchants::{self, ProcessorKeys};
use crate::net::tls::TlsListener;
use crate::pages::i18n::Strings;
use crate::processor::sandbox::SandboxProcessor;
use crate::processor::Processor;
use crate::store::Store;
use crate::workers::Workers;

/// State shared by every request handler and worker.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What [`AppState`] holds.
pub struct Shared {
    /// The configuration the process started with.
    pub config: Config,
    /// The database.
    pub store: Store,
    /// Keys derived from the server key.
    pub keys: ServerKeys,
    /// Access-token signer and verifier.
    pub tokens: TokenService,
    /// Failed-login limiter.
    pub login_limiter: LoginLimiter,
    /// Merchants' processor keys, remembered (they never change).
    pub processor_keys: ProcessorKeys,
    /// The injected clock.
    pub clock: Arc<dyn Clock>,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// HTML templates.
    pub templates: minijinja::Environment<'static>,
    /// The hosted pages' strings by language.
    pub strings: Strings,
    /// The webhook dispatcher.
    pub webhooks: Dispatcher,
    /// The e-mail sender.
    pub mailer: Mailer,
    /// The payment processor (the built-in sandbox, DESIGN §7).
    pub processor: Arc<dyn Processor>,
    /// Base URL of links handed to browsers: `RECUR_PUBLIC_URL`, or `http://` (`https://` with
    /// TLS) and the bound address.
    pub public_url: String,
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
        let webhooks = Dispatcher::new(&config.webhooks)?;
        let mailer = Mailer::new(&config)?;
        Ok(Self(Arc::new(Shared {
            public_url,
            processor,
            webhooks,
            mailer,
            config,
            store,
            keys,
            tokens,
            login_limiter: LoginLimiter::new(),
            processor_keys: ProcessorKeys::default(),
            clock,
            metrics: Metrics::default(),
            templates: templates(),
            strings: Strings::load()?,
        })))
    }
}

/// `https` when the server speaks TLS itself, else `http`.
fn scheme(config: &Config) -> &'static str {
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
        ("invoice.html", include_str!("../templates/invoice.html")),
        (
            "email/message.txt",
            include_str!("../templates/email/message.txt"),
        ),
        (
            "email/message.html",
            include_str!("../templates/email/message.html"),
        ),
    ] {
        env.add_template(name, source)
            .expect("the bundled templates parse");
    }
    env
}

/// A server that is accepting connections.
pub struct RunningServer {
    /// The bound address (useful when the configuration asked for port 0).
    pub addr: SocketAddr,
    /// The bound address of the separate metrics listener, when `RECUR_METRICS_LISTEN` is set.
    pub metrics_addr: Option<SocketAddr>,
    /// The shared state, for callers that want to reach the store.
    pub state: AppState,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    metrics_task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    workers: Workers,
}

impl RunningServer {
    /// The server's own base URL: `http://ADDR`, or `https://ADDR` with TLS.
    pub fn url(&self) -> String {
        format!("{}://{}", scheme(&self.state.config), self.addr)
    }

    /// Waits for the server to stop (on Ctrl-C or SIGTERM).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.task.await?.context("serving HTTP")
    }

    /// Stops the server and its workers at once.
    pub fn abort(&self) {
        self.task.abort();
        if let Some(task) = &self.metrics_task {
            task.abort();
        }
        self.workers.abort();
    }
}

/// Binds the listener (loading the TLS certificate when configured), builds the state, creates
/// the demo merchant when configured and the database has none, and starts serving in the
/// background.
pub async fn start(config: Config) -> anyhow::Result<RunningServer> {
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    let tls = match &config.tls {
        Some(files) => Some((
            files.clone(),
            files.load().context("loading the TLS certificate")?,
        )),
        None => None,
    };
    let state = AppState::build(config, Arc::new(SystemClock), Some(addr)).await?;
    if state.config.demo_merchant {
        if let Some(demo) = merchants::create_demo_if_none(&state).await? {
            println!("{}", demo.banner());
        }
    }
    let (metrics_addr, metrics_task) = match state.config.metrics.listen {
        Some(metrics_listen) => {
            let listener = TcpListener::bind(metrics_listen)
                .await
                .with_context(|| format!("binding RECUR_METRICS_LISTEN {metrics_listen}"))?;
            let metrics_addr = listener.local_addr()?;
            let app = api::metrics_router(state.clone())
                .into_make_service_with_connect_info::<PeerAddress>();
            let task = tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(shutdown_signal())
                    .await
            });
            (Some(metrics_addr), Some(task))
        }
        None => (None, None),
    };
    let app = api::router(state.clone()).into_make_service_with_connect_info::<PeerAddress>();
    let task = match tls {
        Some((files, tls_config)) => {
            let listener = TlsListener::new(listener, files, tls_config)?;
            tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(shutdown_signal())
                    .await
            })
        }
        None => tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown_signal())
                .await
        }),
    };
    let workers = Workers::start(&state);
    Ok(RunningServer {
        addr,
        metrics_addr,
        state,
        task,
        metrics_task,
        workers,
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
