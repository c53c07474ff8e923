//! Managing webhook endpoints (DESIGN §12): create with a secret shown once, list, get, change,
//! delete; every bad input a problem+json 400 naming its field; the cap; a read key held to
//! reading; another merchant's endpoint a 404 on every route.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::webhooks::{create_endpoint, new_endpoint};
use crate::fixtures::ENDPOINTS;
use crate::harness::{Reply, TestServer};

async fn call(
    server: &TestServer,
    method: Method,
    path: &str,
    auth: &str,
    body: Option<Value>,
) -> Reply {
    server.call(method, path, Some(auth), body).await
}

backend_matrix!(
    an_endpoint_is_created_read_changed_and_deleted,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let reply = create_endpoint(
            &server,
            &token,
            json!({"url": "https://hooks.example.com/recur", "description": "Back office"}),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let created = reply.body.clone();
        let id = created["endpointId"].as_str().unwrap().to_string();
        assert!(id.starts_with("we_") && id.len() == 27, "{id}");
        let secret = created["secret"].as_str().unwrap();
        assert!(
            secret.starts_with("whsec_") && secret.len() > 40,
            "{secret}"
        );
        assert_eq!(created["url"], "https://hooks.example.com/recur");
        assert_eq!(
            created["events"],
            Value::Null,
            "omitted events: every event"
        );
        assert_eq!(created["enabled"], true);
        assert_eq!(created["description"], "Back office");
        assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
        assert_eq!(created["disabledAt"], Value::Null);

        let path = format!("{ENDPOINTS}/{id}");
        let got = call(&server, Method::GET, &path, &token, None).await;
        assert_eq!(got.status, StatusCode::OK);
        assert!(got.body.get("secret").is_none(), "the secret is shown once");
        assert_eq!(got.body["endpointId"], id.as_str());

        // Every field changes alone; an Action filter is kept in one order, each once.
        let changed = call(
        &server,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"events": ["TRANSACTION_DATA_UPDATE", "SUBSCRIPTION_STATUS_CHANGED", "TRANSACTION_DATA_UPDATE"]})),
    )
    .await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
        assert_eq!(
            changed.body["events"],
            json!(["SUBSCRIPTION_STATUS_CHANGED", "TRANSACTION_DATA_UPDATE"])
        );
        assert_eq!(changed.body["description"], "Back office");
        let changed = call(
        &server,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"enabled": false, "description": null, "url": "https://other.example.com/h"})),
    )
    .await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
        assert_eq!(changed.body["enabled"], false);
        assert_eq!(changed.body["description"], Value::Null);
        assert_eq!(changed.body["url"], "https://other.example.com/h");
        assert_eq!(changed.body["events"].as_array().unwrap().len(), 2);
        let changed = call(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"events": null})),
        )
        .await;
        assert_eq!(changed.body["events"], Value::Null);
        assert_eq!(changed.body["enabled"], false, "unchanged when omitted");

        // The list: newest first, the page shape, no secrets.
        let (second, _) =
            new_endpoint(&server, &token, "https://b.example.com/h", json!(null)).await;
        let list = call(&server, Method::GET, ENDPOINTS, &token, None).await;
        assert_eq!(list.status, StatusCode::OK);
        assert_eq!(list.body["hasMore"], false);
        assert_eq!(list.body["nextCursor"], Value::Null);
        let ids: Vec<&str> = list.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["endpointId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [second.as_str(), id.as_str()]);
        assert!(list.body["data"][0].get("secret").is_none());

        let deleted = call(&server, Method::DELETE, &path, &token, None).await;
        assert_eq!(deleted.status, StatusCode::NO_CONTENT);
        call(&server, Method::GET, &path, &token, None)
            .await
            .problem(404);
        call(&server, Method::DELETE, &path, &token, None)
            .await
            .problem(404);
        let list = call(&server, Method::GET, ENDPOINTS, &token, None).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    }
);

backend_matrix!(
    every_bad_input_is_a_400_naming_its_field,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let refused = |body: Value| {
            let (server, token) = (&server, &token);
            async move {
                let reply = create_endpoint(server, token, body).await;
                reply.problem(400).clone()
            }
        };
        for (body, field) in [
            (json!({}), "url"),
            (json!({"url": null}), "url"),
            (json!({"url": 5}), "url"),
            (json!({"url": "http://hooks.example.com/h"}), "url"),
            (json!({"url": "hooks.example.com/h"}), "url"),
            (json!({"url": "https://127.0.0.1/h"}), "url"),
            (json!({"url": "https://[::ffff:10.0.0.1]/h"}), "url"),
            (json!({"url": "https://169.254.169.254/latest"}), "url"),
            (
                json!({"url": format!("https://example.com/{}", "a".repeat(2100))}),
                "url",
            ),
            (
                json!({"url": "https://example.com/h", "events": []}),
                "events",
            ),
            (
                json!({"url": "https://example.com/h", "events": "TRANSACTION_DATA_UPDATE"}),
                "events",
            ),
            (
                json!({"url": "https://example.com/h", "events": ["SUBSCRIPTION_UPDATED", "NOPE"]}),
                "events[1]",
            ),
            (
                json!({"url": "https://example.com/h", "events": ["WEBHOOK_TEST"]}),
                "events[0]",
            ),
            (
                json!({"url": "https://example.com/h", "events": [5]}),
                "events",
            ),
            (
                json!({"url": "https://example.com/h", "description": ""}),
                "description",
            ),
            (
                json!({"url": "https://example.com/h", "description": "x".repeat(501)}),
                "description",
            ),
        ] {
            let errors = refused(body.clone()).await;
            assert!(errors.contains_key(field), "{body}: {errors:?}");
        }
        let (id, _) = new_endpoint(&server, &token, "https://example.com/h", json!(null)).await;
        let path = format!("{ENDPOINTS}/{id}");
        for (body, field) in [
            (json!({"enabled": null}), "enabled"),
            (json!({"enabled": "yes"}), "enabled"),
            (json!({"url": null}), "url"),
            (json!({"url": "https://10.1.2.3/h"}), "url"),
            (json!({"events": ["NOPE"]}), "events[0]"),
            (json!({"events": []}), "events"),
        ] {
            let reply = call(&server, Method::PATCH, &path, &token, Some(body.clone())).await;
            assert!(
                reply.problem(400).contains_key(field),
                "{body}: {}",
                reply.body
            );
        }
        let got = call(&server, Method::GET, &path, &token, None).await;
        assert_eq!(
            got.body["url"], "https://example.com/h",
            "a refused change changes nothing"
        );
        assert_eq!(got.body["enabled"], true);
        // Not JSON at all.
        let reply = server
            .call_raw(
                Method::POST,
                ENDPOINTS,
                Some(&token),
                "application/json",
                b"{".to_vec(),
            )
            .await;
        reply.problem(400);
    }
);

backend_matrix!(
    a_merchant_holds_at_most_twenty_endpoints,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        for i in 0..20 {
            new_endpoint(
                &server,
                &token,
                &format!("https://example.com/{i}"),
                json!(null),
            )
            .await;
        }
        let reply = create_endpoint(&server, &token, json!({"url": "https://example.com/x"})).await;
        reply.problem(409);
        // Another merchant has its own twenty.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        new_endpoint(&server, &other_token, "https://example.com/o", json!(null)).await;
    }
);

backend_matrix!(
    another_merchants_endpoint_is_not_found,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let (id, _) = new_endpoint(&server, &token, "https://example.com/h", json!(null)).await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let path = format!("{ENDPOINTS}/{id}");
        for (method, path, body) in [
            (Method::GET, path.clone(), None),
            (Method::PATCH, path.clone(), Some(json!({"enabled": false}))),
            (Method::DELETE, path.clone(), None),
            (Method::POST, format!("{path}/rotate-secret"), None),
            (Method::POST, format!("{path}/test"), None),
            (Method::GET, format!("{path}/deliveries"), None),
        ] {
            let reply = call(&server, method.clone(), &path, &other_token, body).await;
            reply.problem(404);
        }
        let list = call(&server, Method::GET, ENDPOINTS, &other_token, None).await;
        assert_eq!(list.body["data"], json!([]));
        let got = call(&server, Method::GET, &path, &token, None).await;
        assert_eq!(got.body["enabled"], true, "untouched by the other merchant");
    }
);

backend_matrix!(
    a_read_key_reads_endpoints_and_changes_none,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let (id, _) = new_endpoint(&server, &token, "https://example.com/h", json!(null)).await;
        let key = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/api-keys",
                Some(&token),
                Some(json!({"name": "reader", "scope": "read"})),
            )
            .await;
        let read_key = key.body["secret"].as_str().unwrap().to_string();
        let path = format!("{ENDPOINTS}/{id}");
        assert_eq!(
            call(&server, Method::GET, ENDPOINTS, &read_key, None)
                .await
                .status,
            200
        );
        assert_eq!(
            call(&server, Method::GET, &path, &read_key, None)
                .await
                .status,
            200
        );
        for (method, path, body) in [
            (
                Method::POST,
                ENDPOINTS.to_string(),
                Some(json!({"url": "https://example.com/r"})),
            ),
            (Method::PATCH, path.clone(), Some(json!({"enabled": false}))),
            (Method::DELETE, path.clone(), None),
            (Method::POST, format!("{path}/rotate-secret"), None),
            (Method::POST, format!("{path}/test"), None),
        ] {
            call(&server, method, &path, &read_key, body)
                .await
                .problem(403);
        }
    }
);

backend_matrix!(
    a_repeated_create_replays_without_the_secret,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let send = || {
            server
                .client
                .post(format!("{}{ENDPOINTS}", server.base_url))
                .bearer_auth(&token)
                .header("idempotency-key", "endpoint-once")
                .json(&json!({"url": "https://example.com/h"}))
                .send()
        };
        let first: Value = send().await.unwrap().json().await.unwrap();
        let second = send().await.unwrap();
        assert_eq!(second.status(), StatusCode::CREATED);
        let second: Value = second.json().await.unwrap();
        assert!(first["secret"].as_str().unwrap().starts_with("whsec_"));
        assert_eq!(second["secret"], Value::Null, "the secret is never stored");
        assert_eq!(second["endpointId"], first["endpointId"]);
        let list = call(&server, Method::GET, ENDPOINTS, &token, None).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    }
);
