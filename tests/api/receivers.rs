//! Endpoints the tests stand up for recur to talk to: an HTTPS webhook receiver with a test CA,
//! and an SMTP server (the `mailin` protocol engine over a local socket).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::rustls;

/// A request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
    /// The request's path.
    pub path: String,
    /// The address the connection came from.
    pub peer: SocketAddr,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// An HTTPS server on 127.0.0.1 with a certificate for `localhost` from a CA made for the test.
pub struct WebhookReceiver {
    /// `https://localhost:<port>/hooks`.
    pub url: String,
    pub addr: SocketAddr,
    /// PEM of the test CA, for `RECUR_WEBHOOK_EXTRA_ROOTS`.
    pub ca_path: PathBuf,
    received: Arc<Mutex<Vec<Received>>>,
    status: Arc<AtomicU16>,
    delay_ms: Arc<AtomicU64>,
    /// Requests being answered now, and the most there ever were at once.
    in_flight: Arc<(AtomicUsize, AtomicUsize)>,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl WebhookReceiver {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "recur test CA");
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let mut leaf_params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .unwrap();
        leaf_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
        let ca_path = dir.path().join("ca.pem");
        std::fs::write(&ca_path, ca.pem()).unwrap();

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let status = Arc::new(AtomicU16::new(200));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let in_flight: Arc<(AtomicUsize, AtomicUsize)> = Arc::default();
        let (r, s, d, g) = (
            received.clone(),
            status.clone(),
            delay_ms.clone(),
            in_flight.clone(),
        );
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let (r, s, d, g) = (r.clone(), s.clone(), d.clone(), g.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let service =
                        service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let (r, s, d, g) = (r.clone(), s.clone(), d.clone(), g.clone());
                            async move {
                                let headers = request.headers().clone();
                                let path = request.uri().path().to_string();
                                let body = request.into_body().collect().await?.to_bytes().to_vec();
                                let now = g.0.fetch_add(1, Ordering::SeqCst) + 1;
                                g.1.fetch_max(now, Ordering::SeqCst);
                                let delay = d.load(Ordering::SeqCst);
                                if delay > 0 {
                                    tokio::time::sleep(Duration::from_millis(delay)).await;
                                }
                                r.lock().unwrap().push(Received {
                                    headers,
                                    body,
                                    path,
                                    peer,
                                });
                                g.0.fetch_sub(1, Ordering::SeqCst);
                                let code = s.load(Ordering::SeqCst);
                                let mut response =
                                    hyper::Response::new(Full::new(Bytes::from_static(b"ok")));
                                *response.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
                                if (300..400).contains(&code) {
                                    response.headers_mut().insert(
                                        "location",
                                        "https://localhost/elsewhere".parse().unwrap(),
                                    );
                                }
                                Ok::<_, hyper::Error>(response)
                            }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Self {
            url: format!("https://localhost:{}/hooks", addr.port()),
            addr,
            ca_path,
            received,
            status,
            delay_ms,
            in_flight,
            task,
            _dir: dir,
        }
    }

    /// Settings that let a recur server trust and reach this receiver.
    pub fn settings(&self) -> [(&'static str, String); 2] {
        [
            ("RECUR_WEBHOOK_ALLOW_PRIVATE", "true".to_string()),
            (
                "RECUR_WEBHOOK_EXTRA_ROOTS",
                self.ca_path.display().to_string(),
            ),
        ]
    }

    /// The status code later requests are answered with.
    pub fn answer_with(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    /// Delays every answer.
    pub fn delay(&self, delay: Duration) {
        self.delay_ms
            .store(u64::try_from(delay.as_millis()).unwrap(), Ordering::SeqCst);
    }

    /// The most requests this receiver was answering at once.
    pub fn peak_in_flight(&self) -> usize {
        self.in_flight.1.load(Ordering::SeqCst)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The distinct `webhook-id`s (ActionIds) received so far.
    pub fn action_ids(&self) -> std::collections::HashSet<String> {
        self.received()
            .iter()
            .map(|r| r.header("webhook-id").to_string())
            .collect()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A message the SMTP server accepted.
#[derive(Debug, Clone, Default)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

#[derive(Clone)]
struct SinkHandler {
    current: Arc<Mutex<Mail>>,
    delivered: Arc<Mutex<Vec<Mail>>>,
}

impl mailin::Handler for SinkHandler {
    fn mail(&mut self, _ip: std::net::IpAddr, _domain: &str, from: &str) -> mailin::Response {
        *self.current.lock().unwrap() = Mail {
            from: from.to_string(),
            ..Mail::default()
        };
        mailin::response::OK
    }

    fn rcpt(&mut self, to: &str) -> mailin::Response {
        self.current.lock().unwrap().to.push(to.to_string());
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current
            .lock()
            .unwrap()
            .data
            .push_str(&String::from_utf8_lossy(buf));
        Ok(())
    }

    fn data_end(&mut self) -> mailin::Response {
        let mail = std::mem::take(&mut *self.current.lock().unwrap());
        self.delivered.lock().unwrap().push(mail);
        mailin::response::OK
    }
}

/// A plain SMTP server on 127.0.0.1 that keeps every message.
pub struct SmtpSink {
    pub port: u16,
    delivered: Arc<Mutex<Vec<Mail>>>,
    task: tokio::task::JoinHandle<()>,
}

impl SmtpSink {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let delivered: Arc<Mutex<Vec<Mail>>> = Arc::default();
        let sink = delivered.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    return;
                };
                let handler = SinkHandler {
                    current: Arc::default(),
                    delivered: sink.clone(),
                };
                tokio::spawn(async move {
                    let mut session =
                        mailin::SessionBuilder::new("sink.test").build(peer.ip(), handler);
                    let (read, mut write) = stream.into_split();
                    let mut reader = BufReader::new(read);
                    let greeting = session.greeting().buffer().unwrap();
                    if write.write_all(&greeting).await.is_err() {
                        return;
                    }
                    let mut line = Vec::new();
                    loop {
                        line.clear();
                        match reader.read_until(b'\n', &mut line).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        let response = session.process(&line);
                        let reply = response.buffer().unwrap();
                        let close = matches!(response.action, mailin::Action::Close);
                        let replies = !matches!(response.action, mailin::Action::NoReply);
                        if replies && write.write_all(&reply).await.is_err() {
                            return;
                        }
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        Self {
            port,
            delivered,
            task,
        }
    }

    pub fn delivered(&self) -> Vec<Mail> {
        self.delivered.lock().unwrap().clone()
    }

    /// How many times each `Message-ID` arrived.
    pub fn message_ids(&self) -> std::collections::HashMap<String, usize> {
        let mut counts = std::collections::HashMap::new();
        for mail in self.delivered() {
            let id = mail
                .data
                .lines()
                .find_map(|l| l.strip_prefix("Message-ID: "))
                .unwrap_or_default()
                .to_string();
            *counts.entry(id).or_default() += 1;
        }
        counts
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Waits (up to 20 s) until `done` holds, checking every 20 ms: for work that background tasks
/// finish, where the test cannot drive the clock.
pub async fn eventually(mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "condition not met within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
