//! The client address of a request, resolved once by [`resolve`]: the connection's peer, or,
//! when the peer is a trusted proxy (`RECUR_TRUSTED_PROXIES`), the address its forwarding
//! header names ([`crate::net::proxies::TrustedProxies::client_address`]). The login limiter,
//! the `ClientIP` of cashier and checkout-page payments and the request log all use this one
//! address.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::IncomingStream;
use tokio::net::TcpListener;

use super::problem;
use crate::net::forwarded;
use crate::net::tls::TlsListener;
use crate::state::AppState;

/// The address a connection comes from, as the server records it for every connection
/// (plain TCP or TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddress(pub SocketAddr);

impl Connected<IncomingStream<'_, TcpListener>> for PeerAddress {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for PeerAddress {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

/// The request's client address. Handlers take it as an extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

impl fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Middleware: puts the request's [`ClientAddress`] into its extensions.
pub async fn resolve(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<PeerAddress>>()
        .map(|ConnectInfo(PeerAddress(peer))| peer.ip());
    if let Some(peer) = peer {
        let proxies = &state.config.trusted_proxies;
        let hops = if proxies.trusts(peer) {
            forwarded::hops(request.headers())
        } else {
            Vec::new()
        };
        let client = proxies.client_address(peer, &hops);
        request.extensions_mut().insert(ClientAddress(client));
    }
    next.run(request).await
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<ClientAddress>()
            .copied()
            .ok_or_else(|| {
                problem::internal(&anyhow::anyhow!(
                    "the request has no client address (not served through app::start)"
                ))
            })
    }
}
