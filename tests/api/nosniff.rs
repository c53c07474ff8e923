//! `X-Content-Type-Options: nosniff` on every answer: API successes and problems, the OpenAPI
//! document and reference page, probes, metrics and static assets.

use reqwest::Method;

use crate::backend_test;
use crate::harness::TestServer;

backend_test!(
    every_answer_forbids_content_sniffing,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut answers = Vec::new();
        for (method, path, token, body) in [
            (Method::GET, "/healthz", None, None),
            (Method::GET, "/openapi.json", None, None),
            (Method::GET, "/docs", None, None),
            (Method::GET, "/metrics", None, None),
            (Method::GET, "/nowhere", None, None),
            (Method::DELETE, "/healthz", None, None),
            (
                Method::GET,
                "/api/subscriptions/v1/customer/cstmr_nope",
                None,
                None,
            ),
            (
                Method::GET,
                "/api/subscriptions/v1/customer/cstmr_nope",
                Some(token.as_str()),
                None,
            ),
            (
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(token.as_str()),
                Some(serde_json::json!({})),
            ),
            (
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(token.as_str()),
                Some(server.customer_body("sniff@example.com")),
            ),
            (Method::GET, "/cdn/cashier.js", None, None),
        ] {
            let reply = server.call(method.clone(), path, token, body).await;
            assert_eq!(
                reply.header("x-content-type-options"),
                Some("nosniff"),
                "{method} {path} ({})",
                reply.status
            );
            assert_eq!(
                reply
                    .headers
                    .get_all("x-content-type-options")
                    .iter()
                    .count(),
                1,
                "{method} {path}: one header"
            );
            answers.push((method, path, reply.status.as_u16()));
        }
        // The answers cover successes, problems and pages.
        let statuses: Vec<u16> = answers.iter().map(|a| a.2).collect();
        assert_eq!(
            statuses,
            [200, 200, 200, 200, 404, 405, 401, 404, 400, 201, 200],
            "{answers:?}"
        );
    }
);
