//! The real `recur` binary as a child process, for tests that kill it or read its log.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The `recur` binary with a fixed environment.
pub struct Recur {
    pub env: Vec<(String, String)>,
}

impl Recur {
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_recur"));
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .args(args);
        command
    }

    /// Starts `recur serve` and returns it with its base URL once it listens.
    pub fn serve(&self) -> (Child, String) {
        self.serve_logging_to(Stdio::null())
    }

    /// Like [`Recur::serve`], with the server's log (stderr) going to `log`.
    pub fn serve_logging_to(&self, log: impl Into<Stdio>) -> (Child, String) {
        let mut child = self
            .command(&["serve"])
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("recur serve starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines.next().expect("recur prints its address").unwrap();
            if let Some(url) = line.strip_prefix("listening on ") {
                break url.to_string();
            }
        };
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        (child, url)
    }
}

/// A `recur serve` child, killed when the test ends however it ends.
pub struct Serving(pub Child);

impl Serving {
    /// Sends `signal` (`libc::SIGHUP`, …) to the process.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.0.id()).unwrap();
        // SAFETY: kill(2) with a child's pid and a signal number touches no memory of ours.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An access token for `merchant` (the credentials `recur merchant create` printed) from the
/// server whose API is at `api` (`…/api/subscriptions/v1`).
pub async fn access_token(
    client: &reqwest::Client,
    api: &str,
    merchant: &serde_json::Value,
) -> String {
    client
        .post(format!("{api}/auth"))
        .json(&serde_json::json!({"userName": merchant["userName"], "password": merchant["password"]}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap()["accessToken"]
        .as_str()
        .unwrap()
        .to_string()
}

impl Recur {
    /// A `recur` on `database_url` whose webhooks go to `receiver` and e-mails to `sink`, with the
    /// short time-outs the fault tests want (2 s per delivery, 1 s before an unanswered charge is
    /// asked again).
    pub fn delivering_to(
        data_dir: &std::path::Path,
        database_url: &str,
        receiver: &crate::receivers::WebhookReceiver,
        sink: &crate::receivers::SmtpSink,
    ) -> Self {
        let mut env: Vec<(String, String)> = vec![
            ("RECUR_DATA_DIR".into(), data_dir.display().to_string()),
            ("RECUR_DATABASE_URL".into(), database_url.to_string()),
            ("RECUR_LISTEN".into(), "127.0.0.1:0".into()),
            ("RECUR_DEMO_MERCHANT".into(), "false".into()),
            ("RECUR_LOG".into(), "warn".into()),
            ("RECUR_WEBHOOK_TIMEOUT_SECONDS".into(), "2".into()),
            ("RECUR_BILLING_RECOVERY_SECONDS".into(), "1".into()),
            (
                "RECUR_SMTP_URL".into(),
                format!("smtp://127.0.0.1:{}", sink.port),
            ),
        ];
        env.extend(
            receiver
                .settings()
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone())),
        );
        Self { env }
    }

    /// Creates a sandbox merchant with `recur merchant create --json` and returns its credentials.
    pub fn create_merchant(&self, name: &str) -> serde_json::Value {
        let created = self
            .command(&["merchant", "create", "--name", name, "--json"])
            .output()
            .unwrap();
        assert!(
            created.status.success(),
            "{}",
            String::from_utf8_lossy(&created.stderr)
        );
        serde_json::from_slice(&created.stdout).unwrap()
    }
}

/// Waits until `done` holds, failing the test after `timeout`.
pub async fn until(what: &str, timeout: std::time::Duration, mut done: impl AsyncFnMut() -> bool) {
    let deadline = std::time::Instant::now() + timeout;
    while !done().await {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not happen within {timeout:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The subscription API of a `recur serve` process, as a merchant that has logged in.
pub struct MerchantApi {
    client: reqwest::Client,
    /// `…/api/subscriptions/v1` of the process.
    api: String,
    token: String,
}

impl MerchantApi {
    /// Logs `merchant` (the credentials `recur merchant create` printed) in at the process whose
    /// base URL is `base`.
    pub async fn login(base: &str, merchant: &serde_json::Value) -> Self {
        let client = reqwest::Client::new();
        let api = format!("{base}/api/subscriptions/v1");
        let token = access_token(&client, &api, merchant).await;
        Self { client, api, token }
    }

    /// The same merchant, with the same token, at another process on the same database.
    pub fn at(&self, base: &str) -> Self {
        Self {
            client: self.client.clone(),
            api: format!("{base}/api/subscriptions/v1"),
            token: self.token.clone(),
        }
    }

    /// POSTs `body` to `path` (below `/api/subscriptions/v1`), expects a success and returns the
    /// answer's JSON.
    pub async fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let response = self.send(path, body).await.unwrap();
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    /// POSTs `body` to `path` and returns whatever came back, if anything did.
    pub fn send(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> + 'static {
        self.client
            .post(format!("{}{path}", self.api))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
    }

    /// A customer of `merchant` with e-mail `email` and the success card, and an Active
    /// membership made from `membership` (its `customerKey` is filled in) paid with that card.
    /// Returns the membership key.
    pub async fn paying_member(
        &self,
        merchant: &serde_json::Value,
        email: &str,
        mut membership: serde_json::Value,
    ) -> String {
        let customer = self
            .post(
                "/customer",
                serde_json::json!({"processorKey": merchant["processorKey"], "firstName": "Kim",
                    "lastName": "Process", "email": email, "phone": "+4915112345678",
                    "countryCode": "DE"}),
            )
            .await;
        let customer_key = customer["customerKey"].clone();
        self.post(
            "/test-helpers/payment-method",
            serde_json::json!({"customerKey": customer_key, "cardNumber": "4242424242424242"}),
        )
        .await;
        membership["customerKey"] = customer_key;
        let created = self.post("/membership", membership).await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        self.post(
            &format!("/test-helpers/membership/{key}/pay"),
            serde_json::json!({}),
        )
        .await;
        key
    }
}
