//! The `Idempotency-Key` header (DESIGN §2): replay, 422 on reuse with another body, per-merchant
//! keys, 24-hour retention.

use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::CUSTOMER;
use crate::harness::{Reply, TestServer};

async fn post_with_key(server: &TestServer, token: &str, key: &str, body: &Value) -> Reply {
    let response = server
        .client
        .post(format!("{}{CUSTOMER}", server.base_url))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

backend_test!(
    same_key_and_body_replays_the_first_response,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = server.customer_body("idem@example.com");
        let first = post_with_key(&server, &token, "order-1", &body).await;
        assert_eq!(first.status, 201);
        assert_eq!(first.header("idempotent-replayed"), None);
        let second = post_with_key(&server, &token, "order-1", &body).await;
        assert_eq!(second.status, 201, "the first status is replayed, not 200");
        assert_eq!(second.header("idempotent-replayed"), Some("true"));
        assert_eq!(second.body, first.body);
        assert_eq!(second.header("content-type"), Some("application/json"));
    }
);

backend_test!(
    same_key_with_a_different_body_is_422,
    |server: TestServer| async move {
        let token = server.token().await;
        let first = post_with_key(
            &server,
            &token,
            "k-422",
            &server.customer_body("a@example.com"),
        )
        .await;
        assert_eq!(first.status, 201);
        let other = post_with_key(
            &server,
            &token,
            "k-422",
            &server.customer_body("b@example.com"),
        )
        .await;
        other.problem(422);
        // The other body was not executed.
        let fresh = server
            .call(
                Method::POST,
                CUSTOMER,
                Some(&token),
                Some(server.customer_body("b@example.com")),
            )
            .await;
        assert_eq!(fresh.status, 201);
    }
);

backend_test!(
    validation_failures_are_replayed_too,
    |server: TestServer| async move {
        let token = server.token().await;
        let bad = json!({"firstName": "R2D2"});
        let first = post_with_key(&server, &token, "bad-1", &bad).await;
        first.problem(400);
        let second = post_with_key(&server, &token, "bad-1", &bad).await;
        assert_eq!(second.status, 400);
        assert_eq!(second.header("idempotent-replayed"), Some("true"));
        assert_eq!(second.body["errors"], first.body["errors"]);
    }
);

backend_test!(
    keys_belong_to_one_merchant,
    |server: TestServer| async move {
        let token = server.token().await;
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        let mine = post_with_key(
            &server,
            &token,
            "shared",
            &server.customer_body("m@example.com"),
        )
        .await;
        assert_eq!(mine.status, 201);
        let mut body = server.customer_body("m@example.com");
        body["processorKey"] = json!(other.processor_key);
        let theirs = post_with_key(&server, &other_token, "shared", &body).await;
        assert_eq!(theirs.status, 201);
        assert_eq!(theirs.header("idempotent-replayed"), None);
        assert_ne!(theirs.body["customerKey"], mine.body["customerKey"]);
    }
);

backend_test!(malformed_keys_are_400, |server: TestServer| async move {
    let token = server.token().await;
    let body = server.customer_body("k@example.com");
    for key in ["x".repeat(256), "has space".to_string()] {
        let reply = post_with_key(&server, &token, &key, &body).await;
        assert!(reply.problem(400).contains_key("Idempotency-Key"));
    }
});

backend_test!(
    keys_expire_after_24_hours,
    |server: TestServer| async move {
        use recur::store::idempotency;
        let store = &server.server.state.store;
        let id = server.merchant.merchant_id;
        let t0 = Utc::now();
        assert!(
            idempotency::claim(store, id, "k", "h1", t0, t0 - Duration::hours(24))
                .await
                .unwrap()
        );
        idempotency::complete(store, id, "k", 201, Some("application/json"), b"{}")
            .await
            .unwrap();
        let later = t0 + Duration::hours(23);
        assert!(
            !idempotency::claim(store, id, "k", "h2", later, later - Duration::hours(24))
                .await
                .unwrap()
        );
        let after = t0 + Duration::hours(24) + Duration::seconds(1);
        assert!(
            idempotency::claim(store, id, "k", "h2", after, after - Duration::hours(24))
                .await
                .unwrap()
        );
        assert_eq!(
            idempotency::get(store, id, "k")
                .await
                .unwrap()
                .unwrap()
                .request_hash,
            "h2"
        );
    }
);

backend_test!(
    expired_keys_are_purged_oldest_first_a_batch_at_a_time,
    |server: TestServer| async move {
        use recur::store::idempotency;
        let store = &server.server.state.store;
        let id = server.merchant.merchant_id;
        let t0 = Utc::now();
        for (key, at) in [
            ("old-1", t0),
            ("old-2", t0 + Duration::minutes(1)),
            ("old-3", t0 + Duration::minutes(2)),
            ("fresh", t0 + Duration::hours(2)),
        ] {
            assert!(
                idempotency::claim(store, id, key, "h", at, at - idempotency::RETENTION)
                    .await
                    .unwrap()
            );
        }
        let cutoff = t0 + Duration::hours(1);
        let purge = || idempotency::purge_expired(store, cutoff, 2);
        let kept = |key: &'static str| async move {
            idempotency::get(store, id, key).await.unwrap().is_some()
        };
        assert_eq!(purge().await.unwrap(), 2, "a batch, oldest first");
        assert!(!kept("old-1").await && !kept("old-2").await);
        assert!(kept("old-3").await);
        assert_eq!(purge().await.unwrap(), 1);
        assert_eq!(purge().await.unwrap(), 0);
        assert!(kept("fresh").await, "keys within their retention stay");
    }
);
