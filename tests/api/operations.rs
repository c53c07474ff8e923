//! Operator surface: probes, metrics, OpenAPI document, reference page, trace ids.

use reqwest::Method;

use crate::backend_test;
use crate::harness::TestServer;

backend_test!(probes_answer, |server: TestServer| async move {
    let health = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (health.status.as_u16(), health.body["status"].as_str()),
        (200, Some("ok"))
    );
    let ready = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(
        (ready.status.as_u16(), ready.body["status"].as_str()),
        (200, Some("ok"))
    );
});

backend_test!(
    readyz_reports_an_unreachable_database,
    |server: TestServer| async move {
        server.server.state.store.close().await;
        let reply = server.call(Method::GET, "/readyz", None, None).await;
        reply.problem(503);
    }
);

backend_test!(
    metrics_count_requests_by_route,
    |server: TestServer| async move {
        let token = server.token().await;
        server
            .call(
                Method::GET,
                "/api/subscriptions/v1/customer/cstmr_nope",
                Some(&token),
                None,
            )
            .await;
        let text = server.metrics().await;
        assert!(text.contains(
        r#"recur_http_requests_total{method="GET",route="/api/subscriptions/v1/customer/{customer_key}",status="404"} 1"#
    ), "{text}");
        assert!(text.contains("recur_http_request_duration_seconds_bucket"));
    }
);

backend_test!(
    openapi_document_describes_the_api,
    |server: TestServer| async move {
        let doc = server
            .call(Method::GET, "/openapi.json", None, None)
            .await
            .body;
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        for path in [
            "/api/subscriptions/v1/auth",
            "/api/subscriptions/v1/customer",
            "/api/subscriptions/v1/customer/{customerKey}",
            "/api/subscriptions/v1/customer/phone",
        ] {
            assert!(doc["paths"][path].is_object(), "{path} documented");
        }
        assert!(
            doc["components"]["schemas"]["CreateCustomerRequest"]["properties"]["processorKey"]
                .is_object()
        );
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        // Every link from a create's answer names an operation the document has, with the key.
        let operation_ids: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|operation| operation["operationId"].as_str())
            .collect();
        for (path, key, expected) in [
            ("/api/subscriptions/v1/customer", "customerKey", 1),
            ("/api/subscriptions/v1/membership", "membershipKey", 6),
        ] {
            let links = doc["paths"][path]["post"]["responses"]["201"]["links"]
                .as_object()
                .unwrap_or_else(|| panic!("{path} 201 has links"));
            assert_eq!(links.len(), expected, "{path}: {links:?}");
            for link in links.values() {
                let target = link["operationId"].as_str().unwrap();
                assert!(operation_ids.contains(&target), "{target} is an operation");
                assert_eq!(
                    link["parameters"][key],
                    format!("$response.body#/{key}"),
                    "{target} takes {key}"
                );
            }
        }
        let page = server
            .client
            .get(format!("{}/docs", server.base_url))
            .send()
            .await
            .unwrap();
        assert!(page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        let html = page.text().await.unwrap().replace("&#x2f;", "/");
        assert!(html.contains("/api/subscriptions/v1/customer/phone"));
        assert!(html.contains("CustomerRecord"));
    }
);

backend_test!(
    trace_ids_are_echoed_and_adopted,
    |server: TestServer| async move {
        let reply = server.call(Method::GET, "/healthz", None, None).await;
        let id = reply.header("x-trace-id").unwrap();
        assert_eq!(id.len(), 32);
        let response = server
            .client
            .get(format!("{}/nowhere", server.base_url))
            .header(
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()["x-trace-id"],
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    }
);
