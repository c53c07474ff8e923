//! The running service: start-up, the HTTP server and its workers.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::api;
use crate::clock::SystemClock;
use crate::config::Config;
use crate::http::client_address::PeerAddress;
use crate::merchants;
use crate::net::tls::TlsListener;
use crate::pages;
use crate::state::{scheme, AppState};
use crate::workers::Workers;

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
    let app = api::router(state.clone(), pages::router(&state))
        .into_make_service_with_connect_info::<PeerAddress>();
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
    let workers = Workers::start(&state.platform, &state.webhooks, &state.mailer);
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
