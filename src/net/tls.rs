//! HTTPS on `RECUR_LISTEN` (`RECUR_TLS_CERT`, `RECUR_TLS_KEY`): a listener that runs each TLS
//! handshake in a task of its own (a slow client holds up nobody) and re-reads the certificate
//! files on SIGHUP.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client has to complete its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The PEM files HTTPS is served with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (`RECUR_TLS_CERT`).
    pub cert: PathBuf,
    /// The leaf's private key: PKCS#8, PKCS#1 or SEC1 (`RECUR_TLS_KEY`).
    pub key: PathBuf,
}

impl TlsFiles {
    /// Reads both files into a server configuration (ring, TLS 1.2 and 1.3, HTTP/1.1). Fails when
    /// a file cannot be read, holds no certificate or key, or the key is not the leaf's.
    pub fn load(&self) -> anyhow::Result<Arc<rustls::ServerConfig>> {
        let chain = CertificateDer::pem_slice_iter(&read(&self.cert)?)
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("{} is not a PEM certificate chain", self.cert.display()))?;
        if chain.is_empty() {
            bail!("{} holds no PEM certificate", self.cert.display());
        }
        let key = PrivateKeyDer::from_pem_slice(&read(&self.key)?)
            .with_context(|| format!("{} holds no PEM private key", self.key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("the TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .with_context(|| {
                format!(
                    "{} and {} are not a certificate and its key",
                    self.cert.display(),
                    self.key.display()
                )
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// A TCP listener that hands out connections once their TLS handshake is done.
pub struct TlsListener {
    tcp: TcpListener,
    files: TlsFiles,
    acceptor: TlsAcceptor,
    handshakes: JoinSet<Option<(TlsStream<TcpStream>, SocketAddr)>>,
    hangups: Hangups,
}

impl TlsListener {
    /// Serves `config` (loaded from `files`) on `tcp`; SIGHUP loads `files` again.
    pub fn new(
        tcp: TcpListener,
        files: TlsFiles,
        config: Arc<rustls::ServerConfig>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            tcp,
            files,
            acceptor: TlsAcceptor::from(config),
            handshakes: JoinSet::new(),
            hangups: Hangups::new().context("listening for SIGHUP")?,
        })
    }

    /// Loads the files again; later handshakes use the new certificate. A failure keeps the
    /// current one.
    fn reload(&mut self) {
        match self.files.load() {
            Ok(config) => {
                self.acceptor = TlsAcceptor::from(config);
                tracing::info!("reloaded the TLS certificate");
            }
            Err(error) => tracing::error!(
                error = format!("{error:#}"),
                "reloading the TLS certificate failed; the previous one stays in use"
            ),
        }
    }

    fn start_handshake(&mut self, stream: TcpStream, peer: SocketAddr) {
        let acceptor = self.acceptor.clone();
        self.handshakes.spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => Some((tls, peer)),
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    None
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    None
                }
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            tokio::select! {
                accepted = self.tcp.accept() => match accepted {
                    Ok((stream, peer)) => self.start_handshake(stream, peer),
                    Err(error) => accept_failed(error).await,
                },
                Some(done) = self.handshakes.join_next(), if !self.handshakes.is_empty() => {
                    if let Ok(Some(connection)) = done {
                        return connection;
                    }
                }
                () = self.hangups.next() => self.reload(),
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// What axum's own TCP listener does: a connection that failed before it was accepted is
/// skipped; anything else (out of file descriptors) is logged and waited out for a second.
async fn accept_failed(error: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accepting a connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// SIGHUP, the operator's "reload the certificate".
#[cfg(unix)]
struct Hangups(tokio::signal::unix::Signal);

#[cfg(unix)]
impl Hangups {
    fn new() -> io::Result<Self> {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).map(Self)
    }

    async fn next(&mut self) {
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// No SIGHUP off Unix: the certificate is read at start only.
#[cfg(not(unix))]
struct Hangups;

#[cfg(not(unix))]
impl Hangups {
    fn new() -> io::Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a fresh self-signed certificate and its key to `dir` as `NAME.crt` and `NAME.key`.
    fn certificate(dir: &Path, name: &str) -> TlsFiles {
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, certified.cert.pem()).unwrap();
        std::fs::write(&files.key, certified.key_pair.serialize_pem()).unwrap();
        files
    }

    fn refusal(files: &TlsFiles) -> String {
        format!("{:#}", files.load().unwrap_err())
    }

    #[test]
    fn a_certificate_and_its_key_load() {
        let dir = tempfile::tempdir().unwrap();
        let config = certificate(dir.path(), "a").load().unwrap();
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
    }

    #[test]
    fn a_key_that_is_not_the_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (certificate(dir.path(), "a"), certificate(dir.path(), "b"));
        let mixed = TlsFiles {
            cert: a.cert,
            key: b.key,
        };
        assert!(
            refusal(&mixed).contains("are not a certificate and its key"),
            "{}",
            refusal(&mixed)
        );
    }

    #[test]
    fn missing_and_empty_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let good = certificate(dir.path(), "a");
        let nothing = dir.path().join("nothing.pem");
        std::fs::write(&nothing, "not PEM at all").unwrap();
        let missing = TlsFiles {
            cert: dir.path().join("absent.crt"),
            key: good.key.clone(),
        };
        assert!(refusal(&missing).contains("absent.crt"));
        let no_certificate = TlsFiles {
            cert: nothing.clone(),
            key: good.key.clone(),
        };
        assert!(refusal(&no_certificate).contains("holds no PEM certificate"));
        let no_key = TlsFiles {
            cert: good.cert,
            key: nothing,
        };
        assert!(refusal(&no_key).contains("holds no PEM private key"));
    }
}
