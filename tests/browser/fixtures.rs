//! What the browser test modules share: the merchant API calls that set up a page. Chromium is
//! driven by `chrome.rs`; the server comes from the API tests' `harness.rs`.

use reqwest::Method;
use serde_json::Value;

use crate::harness::TestServer;

/// `POST {path}` of the merchant API with `body` (expects 201); the reply's body.
pub async fn create(server: &TestServer, token: &str, path: &str, body: Value) -> Value {
    let reply = server
        .call(
            Method::POST,
            &format!("/api/subscriptions/v1{path}"),
            Some(token),
            Some(body),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body
}
