//! HTTPS served by recur itself (`RECUR_TLS_CERT`, `RECUR_TLS_KEY`): the API over TLS, plain
//! HTTP refused on the TLS port, and the certificate re-read on SIGHUP by the real binary (a
//! failed reload keeps the old certificate).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

use crate::backend_matrix;
use crate::harness::{fresh_postgres_database, Backend, TestServer};
use crate::process::{until, Recur, Serving};

/// A self-signed certificate for `localhost` and 127.0.0.1, with its key.
struct TestCert {
    pem: String,
    key_pem: String,
    der: CertificateDer<'static>,
}

impl TestCert {
    fn new() -> Self {
        let certified = rcgen::generate_simple_self_signed(vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
        ])
        .unwrap();
        Self {
            pem: certified.cert.pem(),
            key_pem: certified.key_pair.serialize_pem(),
            der: certified.cert.der().clone(),
        }
    }

    /// Writes the certificate and key to `dir/cert.pem` and `dir/key.pem`.
    fn install(&self, dir: &Path) {
        std::fs::write(dir.join("cert.pem"), &self.pem).unwrap();
        std::fs::write(dir.join("key.pem"), &self.key_pem).unwrap();
    }

    /// A client that trusts this certificate.
    fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(self.pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    }
}

/// The settings that make recur serve `dir/cert.pem` and `dir/key.pem`.
fn tls_settings(dir: &Path) -> [(&'static str, String); 2] {
    [
        ("RECUR_TLS_CERT", dir.join("cert.pem").display().to_string()),
        ("RECUR_TLS_KEY", dir.join("key.pem").display().to_string()),
    ]
}

backend_matrix!(the_api_is_served_over_https, |backend| async move {
    let dir = tempfile::tempdir().unwrap();
    let cert = TestCert::new();
    cert.install(dir.path());
    let server = TestServer::start_with_owned(backend, &tls_settings(dir.path())).await;
    assert!(server.base_url.starts_with("https://127.0.0.1:"));
    assert!(server.server.state.public_url.starts_with("https://"));

    let client = cert.client();
    let health = client
        .get(format!("{}/healthz", server.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let login = client
        .post(format!("{}/api/subscriptions/v1/auth", server.base_url))
        .json(&serde_json::json!({
            "userName": server.merchant.user_name,
            "password": server.merchant.password,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::OK);
    let body: serde_json::Value = login.json().await.unwrap();
    assert!(body["accessToken"].is_string(), "{body}");

    // Plain HTTP to the TLS port gets no HTTP answer.
    let plain = reqwest::Client::new()
        .get(format!("http://{}/healthz", server.server.addr))
        .send()
        .await;
    assert!(plain.is_err(), "{plain:?}");
});

/// The certificate a new TLS connection to `addr` is shown (any of `roots` is trusted).
async fn served_certificate(addr: SocketAddr, roots: &[&TestCert]) -> CertificateDer<'static> {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.der.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].clone()
}

backend_matrix!(
    sighup_reloads_the_certificate_and_a_bad_one_is_not_taken,
    |backend| async move {
        let data = tempfile::tempdir().unwrap();
        let certs = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Postgres => fresh_postgres_database().await,
            Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
        };
        let (first, second) = (TestCert::new(), TestCert::new());
        first.install(certs.path());
        let mut env: Vec<(String, String)> = vec![
            ("RECUR_DATA_DIR".into(), data.path().display().to_string()),
            ("RECUR_DATABASE_URL".into(), database_url),
            ("RECUR_LISTEN".into(), "127.0.0.1:0".into()),
            ("RECUR_DEMO_MERCHANT".into(), "false".into()),
            ("RECUR_LOG".into(), "info".into()),
        ];
        env.extend(
            tls_settings(certs.path())
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        let log_path = data.path().join("serve.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let (child, url) = Recur { env }.serve_logging_to(log);
        let child = Serving(child);
        let addr: SocketAddr = url
            .strip_prefix("https://")
            .expect("listening on https://ADDR")
            .parse()
            .unwrap();
        let both = [&first, &second];
        assert_eq!(served_certificate(addr, &both).await, first.der);

        // A broken certificate file: the reload fails, is logged, and the old one stays.
        std::fs::write(certs.path().join("cert.pem"), "not a certificate").unwrap();
        child.signal(libc::SIGHUP);
        until(
            "the failed reload is logged",
            Duration::from_secs(10),
            async || {
                std::fs::read_to_string(&log_path)
                    .unwrap()
                    .contains("reloading the TLS certificate failed")
            },
        )
        .await;
        assert_eq!(served_certificate(addr, &both).await, first.der);

        // A new certificate and key: new connections get them.
        second.install(certs.path());
        child.signal(libc::SIGHUP);
        until(
            "the new certificate is served",
            Duration::from_secs(10),
            async || served_certificate(addr, &both).await == second.der,
        )
        .await;
        let health = second
            .client()
            .get(format!("{url}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), StatusCode::OK);
    }
);
