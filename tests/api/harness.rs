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

/// Like [`backend_test!`] for tests that start their own server(s): the body gets the
/// [`Backend`].
#[macro_export]
macro_rules! backend_matrix {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                ($body)($crate::harness::Backend::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                ($body)($crate::harness::Backend::Postgres).await;
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
        let url = match backend {
            Backend::Postgres => Some(fresh_postgres_database().await),
            Backend::Sqlite => None,
        };
        Self::start_on(url, extra).await
    }

    async fn start_with_database(url: String, extra: &[(&str, &str)]) -> Self {
        Self::start_on(Some(url), extra).await
    }

    /// A server on `url` (`None`: SQLite in its own data directory).
    async fn start_on(url: Option<String>, extra: &[(&str, &str)]) -> Self {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut env: HashMap<String, String> = HashMap::new();
        env.insert("RECUR_LISTEN".into(), "127.0.0.1:0".into());
        env.insert(
            "RECUR_DATA_DIR".into(),
            data_dir.path().display().to_string(),
        );
        env.insert("RECUR_DEMO_MERCHANT".into(), "false".into());
        if let Ok(stripe) = std::env::var("RECUR_TEST_STRIPE_URL") {
            env.insert(
                "RECUR_STRIPE_JS_URL".into(),
                format!("{stripe}/js.stripe.com/v3/"),
            );
            env.insert("RECUR_STRIPE_API_BASE".into(), stripe);
        }
        if let Some(url) = url {
            env.insert("RECUR_DATABASE_URL".into(), url);
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
            base_url: server.url(),
            merchant,
            client: reqwest::Client::new(),
            server,
            _data_dir: data_dir,
        }
    }

    /// The server's data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        self._data_dir.path()
    }

    /// Starts a server on `backend` with `settings` given as owned values.
    pub async fn start_with_owned(backend: Backend, settings: &[(&str, String)]) -> Self {
        let borrowed: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Self::start_with(backend, &borrowed).await
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

    /// The `/metrics` document.
    pub async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
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

/// Memberships and the sandbox helpers.
impl TestServer {
    /// A valid membership body: Monthly, EUR 9.99 × 3.
    pub fn membership_body(&self, customer_key: &str, order_id: &str) -> Value {
        serde_json::json!({
            "customerKey": customer_key,
            "subscriptionName": "Gold plan",
            "webhookUrl": "https://merchant.example/hooks",
            "metadata": "crm-42",
            "productInfo": {"orderId": order_id, "description": "Gold, three seats"},
            "pricingInfo": {"currency": "EUR", "totalAmount": "29.97", "pricePerUnit": 9.99, "quantity": 3},
            "billingCycle": {"intervalType": "Monthly", "intervalCount": 1}
        })
    }

    /// Creates a membership from `body` (expects 201) and returns its record.
    pub async fn create_membership(&self, token: &str, body: Value) -> Value {
        let reply = self
            .call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(token),
                Some(body),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        reply.body
    }

    /// Reads a membership (expects 200).
    pub async fn membership(&self, token: &str, key: &str) -> Value {
        let reply = self
            .call(
                Method::GET,
                &format!("/api/subscriptions/v1/membership/{key}"),
                Some(token),
                None,
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply.body
    }

    /// Attaches a test card to a customer (expects 201).
    pub async fn attach_card(&self, token: &str, customer_key: &str, card: &str) {
        let reply = self
            .call(
                Method::POST,
                "/api/subscriptions/v1/test-helpers/payment-method",
                Some(token),
                Some(serde_json::json!({"customerKey": customer_key, "cardNumber": card})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }

    /// Pays a membership's first invoice with the saved card.
    pub async fn pay(&self, token: &str, membership_key: &str) -> Reply {
        self.call(
            Method::POST,
            &format!("/api/subscriptions/v1/test-helpers/membership/{membership_key}/pay"),
            Some(token),
            None,
        )
        .await
    }

    /// Moves the merchant's test clock to `to` (expects 200).
    pub async fn advance(&self, token: &str, to: &str) {
        let reply = self
            .call(
                Method::POST,
                "/api/subscriptions/v1/test-clock/advance",
                Some(token),
                Some(serde_json::json!({"to": to})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }

    /// Customer with a success card and an Active membership made from `body`, at test-clock
    /// time `start`. Returns the membership record.
    pub async fn active_membership(&self, token: &str, start: &str, body: Value) -> Value {
        self.advance(token, start).await;
        let customer_key = body["customerKey"]
            .as_str()
            .expect("customerKey")
            .to_string();
        self.attach_card(token, &customer_key, "4242424242424242")
            .await;
        let created = self.create_membership(token, body).await;
        let key = created["membershipKey"].as_str().expect("key");
        let paid = self.pay(token, key).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        assert_eq!(paid.body["status"], "Active");
        paid.body
    }

    /// A customer `email` whose membership `order_id` went Active at test-clock time `start` and
    /// whose first renewal, at `renewal_at`, was declined (its `chargeEmitterQueue` rejects it):
    /// PastDue, with the renewal invoice Open. Returns the customer's and the membership's keys.
    pub async fn past_due_membership(
        &self,
        token: &str,
        email: &str,
        order_id: &str,
        start: &str,
        renewal_at: &str,
    ) -> (String, String) {
        let customer = self.create_customer(token, email).await;
        let mut body = self.membership_body(&customer, order_id);
        body["chargeEmitterQueue"] = serde_json::json!([{"transactionStatus": "Rejected"}]);
        let record = self.active_membership(token, start, body).await;
        let key = record["membershipKey"].as_str().expect("key").to_string();
        self.advance(token, renewal_at).await;
        assert_eq!(self.membership(token, &key).await["status"], "PastDue");
        (customer, key)
    }

    /// One number from the database (for checks the API does not show, like outbox rows).
    pub async fn count(&self, sql: &str, key: &str) -> i64 {
        sqlx::query_scalar(sql)
            .bind(key)
            .fetch_one(self.server.state.store.pool())
            .await
            .expect("count query")
    }
}

/// Looking inside, for what the API does not show.
impl TestServer {
    /// Start of every invoiced period of a membership, oldest first, as `YYYY-MM-DD`.
    pub async fn invoice_periods(&self, membership_key: &str) -> Vec<String> {
        let starts: Vec<Option<i64>> = sqlx::query_scalar(
            "SELECT i.period_start FROM invoices i JOIN memberships m ON m.id = i.membership_id \
             WHERE m.membership_key = $1 ORDER BY i.id",
        )
        .bind(membership_key)
        .fetch_all(self.server.state.store.pool())
        .await
        .expect("invoice query");
        starts
            .into_iter()
            .map(|start| {
                start
                    .and_then(chrono::DateTime::from_timestamp_micros)
                    .map(|d| d.format("%Y-%m-%d").to_string())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Every webhook event recorded for an order, oldest first.
    pub async fn events(&self, order_id: &str) -> Vec<Value> {
        let payloads: Vec<String> =
            sqlx::query_scalar("SELECT payload FROM events WHERE order_id = $1 ORDER BY id")
                .bind(order_id)
                .fetch_all(self.server.state.store.pool())
                .await
                .expect("event query");
        payloads
            .iter()
            .map(|p| serde_json::from_str(p).expect("payload is JSON"))
            .collect()
    }

    /// A second `recur` process on the same database and server key (PostgreSQL: several
    /// processes may share one database).
    pub async fn second_process(&self) -> TestServer {
        let key = std::fs::read_to_string(self._data_dir.path().join("server.key"))
            .expect("the first server wrote its key");
        let url = self.server.state.config.database_url.clone();
        Self::start_with_database(url, &[("RECUR_SECRET_KEY", key.trim())]).await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The address of the localstripe emulator `scripts/test` starts (`RECUR_TEST_STRIPE_URL`).
pub fn stripe_url() -> String {
    std::env::var("RECUR_TEST_STRIPE_URL").expect(
        "RECUR_TEST_STRIPE_URL is not set: run the tests with scripts/test, which starts localstripe",
    )
}

/// Creates an empty database on the PostgreSQL server of `RECUR_TEST_POSTGRES_URL` and returns
/// its URL.
pub async fn fresh_postgres_database() -> String {
    use sqlx::{Connection, Executor};
    let admin_url = std::env::var("RECUR_TEST_POSTGRES_URL").expect(
        "RECUR_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts PostgreSQL",
    );
    // The creation time in the name lets scripts/postgres.sh drop only stale databases; the run
    // tag scripts/test exports lets it drop this run's databases when the run ends.
    let run = std::env::var("RECUR_TEST_RUN")
        .ok()
        .filter(|tag| !tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(|tag| format!("{}_", tag.to_lowercase()))
        .unwrap_or_default();
    let name = format!(
        "recur_t_{}_{run}{}",
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
