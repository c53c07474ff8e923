//! Starts the real recur server on a random port, on SQLite or on a fresh PostgreSQL database,
//! with a sandbox merchant, and speaks HTTP to it.
//!
//! PostgreSQL tests need `RECUR_TEST_POSTGRES_URL`, an administrative URL (for example
//! `postgres://recur:recur@127.0.0.1:5432/postgres`) on which each test creates its own database.
//! `scripts/test` provides it. Without it the PostgreSQL variants fail, never skip silently.

use std::collections::HashMap;

use recur::app::{self, RunningServer};
use recur::config::Config;
use recur::merchants::{self, MerchantCredentials};
use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// The database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Defines one test per backend: `backend_test!(name, |server| async move { … })` expands to
/// `mod name { sqlite(); postgres(); }`.
#[macro_export]
macro_rules! backend_test {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let server =
                    $crate::harness::TestServer::start($crate::harness::Backend::Sqlite).await;
                ($body)(server).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let server =
                    $crate::harness::TestServer::start($crate::harness::Backend::Postgres).await;
                ($body)(server).await;
            }
        }
    };
}

/// A running server with one sandbox merchant.
pub struct TestServer {
    pub base_url: String,
    pub merchant: MerchantCredentials,
    pub client: reqwest::Client,
    pub server: RunningServer,
    _data_dir: tempfile::TempDir,
}

/// A response: status, headers and parsed JSON body (`Value::Null` when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a problem+json body with this status, and returns its `errors` object.
    pub fn problem(&self, status: u16) -> &serde_json::Map<String, Value> {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "body: {}",
            self.body
        );
        assert_eq!(self.body["status"], status);
        assert!(self.body["title"].is_string());
        assert!(self.body["type"].is_string());
        assert_eq!(
            self.body["traceId"].as_str(),
            self.header("x-trace-id"),
            "traceId matches the header"
        );
        self.body["errors"]
            .as_object()
            .expect("errors is an object")
    }
}

impl TestServer {
    /// Starts a server on `backend` with a fresh database and one sandbox merchant.
    pub async fn start(backend: Backend) -> Self {
        Self::start_with(backend, &[]).await
    }

    /// Like [`TestServer::start`], with extra `RECUR_*` settings.
    pub async fn start_with(backend: Backend, extra: &[(&str, &str)]) -> Self {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut env: HashMap<String, String> = HashMap::new();
        env.insert("RECUR_LISTEN".into(), "127.0.0.1:0".into());
        env.insert(
            "RECUR_DATA_DIR".into(),
            data_dir.path().display().to_string(),
        );
        env.insert("RECUR_DEMO_MERCHANT".into(), "false".into());
        if backend == Backend::Postgres {
            env.insert("RECUR_DATABASE_URL".into(), fresh_postgres_database().await);
        }
        for (key, value) in extra {
            env.insert(key.to_string(), value.to_string());
        }
        let config = Config::from_sources(None, |name| env.get(name).cloned()).expect("config");
        let server = app::start(config).await.expect("server starts");
        let merchant = merchants::create(&server.state, "Test Merchant", Mode::Sandbox)
            .await
            .expect("merchant");
        Self {
            base_url: format!("http://{}", server.addr),
            merchant,
            client: reqwest::Client::new(),
            server,
            _data_dir: data_dir,
        }
    }

    /// Creates another merchant on the same server.
    pub async fn another_merchant(&self, mode: Mode) -> MerchantCredentials {
        merchants::create(&self.server.state, "Other Merchant", mode)
            .await
            .expect("merchant")
    }

    /// A fresh access token for `merchant`.
    pub async fn token_for(&self, merchant: &MerchantCredentials) -> String {
        let reply = self
            .call(
                Method::POST,
                "/api/subscriptions/v1/auth",
                None,
                Some(serde_json::json!({"userName": merchant.user_name, "password": merchant.password})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "login: {}", reply.body);
        reply.body["accessToken"]
            .as_str()
            .expect("token")
            .to_string()
    }

    /// A fresh access token for the test's merchant.
    pub async fn token(&self) -> String {
        self.token_for(&self.merchant).await
    }

    /// Sends a request with an optional bearer token and JSON body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base_url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        Self::reply(request.send().await.expect("request sent")).await
    }

    /// Sends raw bytes with the given content type.
    pub async fn call_raw(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> Reply {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base_url))
            .header("content-type", content_type)
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        Self::reply(request.send().await.expect("request sent")).await
    }

    async fn reply(response: reqwest::Response) -> Reply {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
        }
    }

    /// A valid customer body for the test's merchant, with this e-mail.
    pub fn customer_body(&self, email: &str) -> Value {
        serde_json::json!({
            "processorKey": self.merchant.processor_key,
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": email,
            "phone": "+4915112345678",
            "countryCode": "DE",
            "address1": "Main Street 1",
            "city": "Berlin",
            "zipCode": "10115",
            "taxIds": [{"type": "eu_vat", "value": "DE123456789"}]
        })
    }

    /// Creates a customer and returns its key.
    pub async fn create_customer(&self, token: &str, email: &str) -> String {
        let reply = self
            .call(
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(token),
                Some(self.customer_body(email)),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        reply.body["customerKey"].as_str().expect("key").to_string()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Creates an empty database on the PostgreSQL server of `RECUR_TEST_POSTGRES_URL` and returns
/// its URL.
async fn fresh_postgres_database() -> String {
    use sqlx::{Connection, Executor};
    let admin_url = std::env::var("RECUR_TEST_POSTGRES_URL").expect(
        "RECUR_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts PostgreSQL",
    );
    // The creation time in the name lets scripts/postgres.sh drop only stale databases.
    let name = format!(
        "recur_t_{}_{}",
        chrono::Utc::now().timestamp(),
        recur::ids::prefixed("", 12).to_lowercase()
    );
    let mut conn = sqlx::PgConnection::connect(&admin_url)
        .await
        .expect("connect to PostgreSQL");
    conn.execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .expect("create test database");
    conn.close().await.ok();
    let (base, _) = admin_url.rsplit_once('/').expect("URL has a database path");
    format!("{base}/{name}")
}
