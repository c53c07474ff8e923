//! `POST /webhooks/stripe/{paymentProcessorId}` (DESIGN §17): an event is taken only when the
//! account's webhook secret signed its raw body within five minutes, each event id once; a
//! forged, stale, unsigned or malformed one is a 400 and changes nothing; a succeeded
//! PaymentIntent for an attempt already recorded changes nothing either.

use recur_domain::stripe_signature;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::PROCESSORS;
use crate::harness::{Reply, TestServer};

const WEBHOOK_SECRET: &str = "whsec_WebhookTests0123456789";

async fn connect(server: &TestServer, token: &str) -> i64 {
    let reply = server
        .call(
            Method::POST,
            PROCESSORS,
            Some(token),
            Some(
                json!({"kind": "stripe", "name": "Stripe", "secretKey": "sk_test_51WebhookTests",
                "publishableKey": "pk_test_51WebhookTests", "webhookSecret": WEBHOOK_SECRET}),
            ),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body["paymentProcessorId"].as_i64().unwrap()
}

/// Posts `body` to the account's webhook URL with `signature` (none when `None`).
async fn deliver(
    server: &TestServer,
    processor: &str,
    body: &str,
    signature: Option<String>,
) -> Reply {
    let mut request = reqwest::Client::new()
        .post(format!("{}/webhooks/stripe/{processor}", server.base_url))
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(signature) = signature {
        request = request.header("Stripe-Signature", signature);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

fn signed(secret: &str, at: i64, body: &str) -> String {
    format!(
        "t={at},v1={}",
        stripe_signature::sign(secret, at, body.as_bytes())
    )
}

backend_test!(
    stripe_events_are_taken_signed_and_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let processor = connect(&server, &token).await.to_string();
        let now = chrono::Utc::now().timestamp();
        let body =
            json!({"id": "evt_1", "type": "customer.created", "data": {"object": {}}}).to_string();

        let taken = deliver(
            &server,
            &processor,
            &body,
            Some(signed(WEBHOOK_SECRET, now, &body)),
        )
        .await;
        assert_eq!(taken.status, StatusCode::OK, "{}", taken.body);
        assert_eq!(taken.body["outcome"], "ignored");
        let again = deliver(
            &server,
            &processor,
            &body,
            Some(signed(WEBHOOK_SECRET, now, &body)),
        )
        .await;
        assert_eq!(again.body["outcome"], "repeated");

        for (why, signature) in [
            ("forged", Some(signed("whsec_NotTheSecret", now, &body))),
            ("stale", Some(signed(WEBHOOK_SECRET, now - 301, &body))),
            (
                "from the future",
                Some(signed(WEBHOOK_SECRET, now + 301, &body)),
            ),
            ("malformed", Some("v1=abc".to_owned())),
            ("missing", None),
        ] {
            let refused = deliver(&server, &processor, &body, signature).await;
            assert!(
                refused.problem(400).contains_key("Stripe-Signature"),
                "{why}: {}",
                refused.body
            );
        }
        let garbage = "not an event";
        let refused = deliver(
            &server,
            &processor,
            garbage,
            Some(signed(WEBHOOK_SECRET, now, garbage)),
        )
        .await;
        assert!(
            refused.problem(400).contains_key("body"),
            "{}",
            refused.body
        );
        for unknown in ["999", "abc", "101"] {
            let reply = deliver(
                &server,
                unknown,
                &body,
                Some(signed(WEBHOOK_SECRET, now, &body)),
            )
            .await;
            reply.problem(404);
        }
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM stripe_events WHERE event_id = $1",
                    "evt_1"
                )
                .await,
            1
        );
    }
);

backend_test!(
    a_succeeded_intent_for_a_recorded_attempt_changes_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        let processor = connect(&server, &token).await.to_string();
        // An attempt recorded as declined: a succeeded PaymentIntent for it that arrives later
        // (forged by nobody, but stale information) must not turn it into a payment.
        let customer = server.create_customer(&token, "webhook@example.com").await;
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "webhook-1"))
            .await;
        let key = created["membershipKey"].as_str().unwrap();
        let declined = server.pay(&token, key).await;
        declined.problem(402);
        let attempt: String = sqlx::query_scalar("SELECT idempotency_key FROM charges LIMIT 1")
            .fetch_one(server.server.state.store.pool())
            .await
            .unwrap();
        let now = chrono::Utc::now().timestamp();
        let body = json!({"id": "evt_2", "type": "payment_intent.succeeded", "data": {"object": {
            "id": "pi_late", "status": "succeeded", "metadata": {"attemptKey": attempt}}}})
        .to_string();
        let taken = deliver(
            &server,
            &processor,
            &body,
            Some(signed(WEBHOOK_SECRET, now, &body)),
        )
        .await;
        assert_eq!(taken.status, StatusCode::OK, "{}", taken.body);
        assert_eq!(server.membership(&token, key).await["status"], "Incomplete");
        assert_eq!(
            server
                .count("SELECT COUNT(*) FROM charges WHERE status = $1", "Success")
                .await,
            0
        );
    }
);
