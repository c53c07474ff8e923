//! Who may read `/metrics`: anyone by default; with `RECUR_METRICS_TOKEN`, only a request with
//! that bearer token; with `RECUR_METRICS_LISTEN`, only on that address.

use reqwest::Method;

use crate::harness::{Reply, TestServer};
use crate::{backend_matrix, backend_test};

async fn scrape(server: &TestServer, base: &str, authorization: Option<&str>) -> (Reply, String) {
    let mut request = server.client.get(format!("{base}/metrics"));
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_default();
    (
        Reply {
            status,
            headers,
            body,
        },
        text,
    )
}

backend_test!(
    metrics_are_open_without_a_token,
    |server: TestServer| async move {
        let (reply, text) = scrape(&server, &server.base_url, None).await;
        assert_eq!(reply.status, 200, "{text}");
        assert!(text.contains("recur_http_request"), "{text}");
    }
);

backend_matrix!(a_configured_token_guards_metrics, |backend| async move {
    let server =
        TestServer::start_with(backend, &[("RECUR_METRICS_TOKEN", "scrape-me-7f3a")]).await;
    let token = server.token().await;
    let merchant_bearer = format!("Bearer {token}");
    for authorization in [
        None,
        Some("Bearer wrong"),
        Some("Bearer scrape-me-7f3"),
        Some("Bearer scrape-me-7f3a0"),
        Some("Basic scrape-me-7f3a"),
        Some("scrape-me-7f3a"),
        Some("Bearer "),
        Some(merchant_bearer.as_str()),
    ] {
        let (reply, text) = scrape(&server, &server.base_url, authorization).await;
        reply.problem(401);
        assert!(!text.contains("recur_http"), "{authorization:?}: {text}");
    }
    for authorization in ["Bearer scrape-me-7f3a", "bearer scrape-me-7f3a"] {
        let (reply, text) = scrape(&server, &server.base_url, Some(authorization)).await;
        assert_eq!(reply.status, 200, "{authorization}: {text}");
        assert!(text.contains("recur_http_requests_total"), "{text}");
    }
    // Only /metrics asks for it.
    let health = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(health.status, 200);
});

backend_matrix!(
    metrics_can_listen_on_their_own_address,
    |backend| async move {
        let server = TestServer::start_with(
            backend,
            &[
                ("RECUR_METRICS_LISTEN", "127.0.0.1:0"),
                ("RECUR_METRICS_TOKEN", "scrape-me-7f3a"),
            ],
        )
        .await;
        let metrics_base = format!("http://{}", server.server.metrics_addr.unwrap());
        // Not on the public listener.
        let (reply, _) = scrape(&server, &server.base_url, Some("Bearer scrape-me-7f3a")).await;
        reply.problem(404);
        // On its own, with the token.
        let (reply, _) = scrape(&server, &metrics_base, None).await;
        reply.problem(401);
        let (reply, text) = scrape(&server, &metrics_base, Some("Bearer scrape-me-7f3a")).await;
        assert_eq!(reply.status, 200, "{text}");
        assert!(text.contains("recur_outbox_pending"), "{text}");
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
        // Which serves nothing else.
        let other = server
            .client
            .get(format!("{metrics_base}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), 404);
    }
);
