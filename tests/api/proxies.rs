//! The client address behind a reverse proxy (`RECUR_TRUSTED_PROXIES`): from a trusted peer the
//! forwarded address is the client for the login limiter and the cashier's `ClientIP`; from
//! anyone else the header is ignored. The request log shows it. The test client on 127.0.0.1
//! plays the proxy.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::StatusCode;
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::cashier::{card, open_order, pay};
use crate::fixtures::AUTH;
use crate::harness::{fresh_postgres_database, Backend, Reply, TestServer};
use crate::process::{until, Recur, Serving};
use crate::receivers::{eventually, WebhookReceiver};

/// The client the proxy forwards for.
const CLIENT: &str = "203.0.113.7";
/// Another client behind the same proxy.
const NEIGHBOUR: &str = "198.51.100.9";

/// A login sent with `X-Forwarded-For: forwarded_for`.
async fn login(server: &TestServer, forwarded_for: &str, user_name: &str, password: &str) -> Reply {
    let response = server
        .client
        .post(format!("{}{AUTH}", server.base_url))
        .header("x-forwarded-for", forwarded_for)
        .json(&json!({"userName": user_name, "password": password}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(serde_json::Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

/// 20 failed logins for 20 user names, forwarded for [`CLIENT`]: the per-source limit.
async fn spray_from_client(server: &TestServer) {
    for i in 0..20 {
        login(server, CLIENT, &format!("nobody-{i}"), "guess")
            .await
            .problem(401);
    }
}

backend_matrix!(
    behind_a_trusted_proxy_failed_logins_lock_only_their_client,
    |backend| async move {
        let server =
            TestServer::start_with(backend, &[("RECUR_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
        let (user, password) = (&server.merchant.user_name, &server.merchant.password);
        spray_from_client(&server).await;
        // That client waits, even with the right password, and cannot hide behind an address
        // written to the left of the proxy's entry.
        login(&server, CLIENT, user, password).await.problem(429);
        let spoofed = format!("{NEIGHBOUR}, {CLIENT}");
        login(&server, &spoofed, user, password).await.problem(429);
        // Another client behind the same proxy still logs in.
        let other = login(&server, NEIGHBOUR, user, password).await;
        assert_eq!(other.status, StatusCode::OK, "{}", other.body);
    }
);

backend_matrix!(
    without_trusted_proxies_a_forwarded_header_gives_no_extra_attempts,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let (user, password) = (&server.merchant.user_name, &server.merchant.password);
        // The 20 failures count against the peer, 127.0.0.1, whatever the header says.
        spray_from_client(&server).await;
        login(&server, NEIGHBOUR, user, password).await.problem(429);
    }
);

/// A browser behind the proxy: every request says `X-Forwarded-For: CLIENT`.
fn browser_behind_proxy() -> reqwest::Client {
    let mut headers = HeaderMap::new();
    headers.insert("x-forwarded-for", HeaderValue::from_static(CLIENT));
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Pays an order through the cashier behind the proxy and returns the notification's
/// `ClientIP`.
async fn notified_client_ip(backend: Backend, trusted_proxies: Option<&str>) -> String {
    let receiver = WebhookReceiver::start().await;
    let mut settings = receiver.settings().to_vec();
    if let Some(ranges) = trusted_proxies {
        settings.push(("RECUR_TRUSTED_PROXIES", ranges.to_string()));
    }
    let server = TestServer::start_with_owned(backend, &settings).await;
    let url = open_order(&server, "proxy-order", &receiver.url, json!({})).await;
    let answer = pay(
        &browser_behind_proxy(),
        &url,
        card("4242 4242 4242 4242", "101"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    eventually(|| !receiver.received().is_empty()).await;
    let body = receiver.received()[0].json();
    assert_eq!(body["OrderId"], "proxy-order");
    body["ClientIP"].as_str().unwrap().to_string()
}

backend_matrix!(
    cashier_client_ip_is_the_forwarded_address_only_from_a_trusted_proxy,
    |backend| async move {
        assert_eq!(
            notified_client_ip(backend, Some("127.0.0.0/8")).await,
            CLIENT
        );
        assert_eq!(notified_client_ip(backend, None).await, "127.0.0.1");
    }
);

backend_matrix!(
    the_request_log_shows_the_forwarded_client,
    |backend| async move {
        let data = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Postgres => fresh_postgres_database().await,
            Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
        };
        let env = [
            ("RECUR_DATA_DIR", data.path().display().to_string()),
            ("RECUR_DATABASE_URL", database_url),
            ("RECUR_LISTEN", "127.0.0.1:0".into()),
            ("RECUR_DEMO_MERCHANT", "false".into()),
            ("RECUR_LOG", "info".into()),
            ("RECUR_LOG_FORMAT", "json".into()),
            ("RECUR_TRUSTED_PROXIES", "127.0.0.1/32".into()),
        ];
        let env = env.map(|(k, v)| (k.to_string(), v)).to_vec();
        let log_path = data.path().join("serve.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let (child, url) = Recur { env }.serve_logging_to(log);
        let _child = Serving(child);
        let response = reqwest::Client::new()
            .get(format!("{url}/healthz"))
            .header("x-forwarded-for", CLIENT)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let trace_id = response.headers()["x-trace-id"]
            .to_str()
            .unwrap()
            .to_string();
        let finished = || -> Option<serde_json::Value> {
            std::fs::read_to_string(&log_path)
                .unwrap()
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .find(|line| {
                    line["message"] == "request finished" && line["span"]["trace_id"] == *trace_id
                })
        };
        until(
            "the request is logged",
            Duration::from_secs(10),
            async || finished().is_some(),
        )
        .await;
        assert_eq!(finished().unwrap()["span"]["client"], CLIENT);
    }
);
