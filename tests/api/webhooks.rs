//! Webhook delivery over real HTTPS to a receiver with a test CA: both signatures checked by an
//! independent implementation, the exact retry schedule on the test clock, Undeliverable after
//! seven failures, re-sending, the SSRF guard, redirects and time-outs.

use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::Value;
use sha2::Sha256;

use crate::backend_matrix;
use crate::fixtures::sha256_hex;
use crate::fixtures::webhooks::membership_to;
use crate::harness::{Backend, TestServer};
use crate::receivers::WebhookReceiver;

/// A server that trusts and may reach `receiver`, plus extra settings.
async fn server_for(
    backend: Backend,
    receiver: &WebhookReceiver,
    extra: &[(&str, &str)],
) -> TestServer {
    let mut settings: Vec<(&str, String)> = receiver.settings().to_vec();
    settings.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    TestServer::start_with_owned(backend, &settings).await
}

async fn events_of(server: &TestServer, token: &str, key: &str) -> Vec<Value> {
    let reply = server
        .call(
            Method::GET,
            &format!("/api/subscriptions/v1/membership/{key}/events"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["events"].as_array().unwrap().clone()
}

#[path = "../../examples/verify_webhook.rs"]
mod verify_example;

/// The verification samples of the README (`examples/verify_webhook.{rs,py}`) accept a real
/// delivery and refuse a tampered one.
fn check_readme_samples(request: &crate::receivers::Received, secret: &str, whsec: &str) {
    let headers: std::collections::HashMap<String, String> = request
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap().to_string()))
        .collect();
    let now = chrono::Utc::now().timestamp();
    assert!(verify_example::verify(
        &headers,
        &request.body,
        secret,
        whsec,
        now
    ));
    let mut tampered = request.body.clone();
    let at = tampered.len() - 2;
    tampered[at] = b' ';
    assert!(!verify_example::verify(
        &headers, &tampered, secret, whsec, now
    ));
    assert!(!verify_example::verify(
        &headers,
        &request.body,
        "msk_wrong",
        whsec,
        now
    ));

    let dir = tempfile::tempdir().unwrap();
    let headers_path = dir.path().join("headers.json");
    std::fs::write(&headers_path, serde_json::to_vec(&headers).unwrap()).unwrap();
    let python = |body: &[u8]| {
        let body_path = dir.path().join("body");
        std::fs::write(&body_path, body).unwrap();
        let out = std::process::Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/verify_webhook.py"
            ))
            .args([headers_path.as_os_str(), body_path.as_os_str()])
            .args([secret, whsec])
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(python(&request.body), "valid");
    assert_eq!(python(&tampered), "invalid");
}

backend_matrix!(deliveries_carry_both_signatures, |backend| async move {
    let receiver = WebhookReceiver::start().await;
    let server = server_for(backend, &receiver, &[]).await;
    let token = server.token().await;
    let key = membership_to(
        &server,
        &token,
        &receiver.url,
        "order-w1",
        "2027-03-01T00:00:00Z",
    )
    .await;
    // The clock's catch-up delivers what is due before it answers.
    server.advance(&token, "2027-03-01T00:00:00Z").await;
    let received = receiver.received();
    assert_eq!(received.len(), 2, "transaction and status change");
    let secret = &server.merchant.merchant_secret;
    let whsec = &server.merchant.webhook_signing_secret;
    for request in &received {
        let body = request.json();
        assert_eq!(body["OrderId"], "order-w1");
        // The spec's signature: lowercase hex SHA-256 of "secret:OrderId", in body and header.
        let expected = sha256_hex(&format!("{secret}:order-w1"));
        assert_eq!(body["Signature"], expected.as_str());
        assert_eq!(request.header("x-signature"), expected);
        // Standard Webhooks: HMAC-SHA256 over "id.timestamp.body" with the decoded whsec key.
        let id = request.header("webhook-id");
        assert_eq!(id, body["ActionId"].as_str().unwrap());
        let timestamp = request.header("webhook-timestamp");
        let key_bytes = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            whsec.strip_prefix("whsec_").unwrap(),
        )
        .unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(&key_bytes).unwrap();
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(&request.body);
        let signature = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            mac.finalize().into_bytes(),
        );
        assert_eq!(
            request.header("webhook-signature"),
            format!("v1,{signature}")
        );
        assert_eq!(request.header("content-type"), "application/json");
    }
    check_readme_samples(&received[0], secret, whsec);
    let actions: Vec<&str> = received.iter().map(|r| r.header("webhook-id")).collect();
    let events = events_of(&server, &token, &key).await;
    assert_eq!(events.len(), 2);
    for event in &events {
        assert_eq!(event["status"], "Delivered");
        assert!(actions.contains(&event["actionId"].as_str().unwrap()));
        assert_eq!(event["attempts"][0]["statusCode"], 200);
        assert_eq!(event["attempts"][0]["startedAt"], "2027-03-01T00:00:00Z");
    }
});

backend_matrix!(
    the_exact_retry_schedule_then_undeliverable,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        receiver.answer_with(500);
        let server = server_for(backend, &receiver, &[]).await;
        let token = server.token().await;
        let key = membership_to(
            &server,
            &token,
            &receiver.url,
            "order-w2",
            "2027-03-01T00:00:00Z",
        )
        .await;
        let schedule = [
            "2027-03-01T00:00:00Z",
            "2027-03-01T00:05:00Z",
            "2027-03-01T00:35:00Z",
            "2027-03-01T01:35:00Z",
            "2027-03-01T03:35:00Z",
            "2027-03-01T07:35:00Z",
            "2027-03-01T15:35:00Z",
        ];
        for (i, at) in schedule.iter().enumerate() {
            // A moment early nothing happens; at the due time the attempt runs.
            if i > 0 {
                let early = chrono::DateTime::parse_from_rfc3339(at).unwrap()
                    - chrono::TimeDelta::seconds(1);
                server.advance(&token, &early.to_rfc3339()).await;
                assert_eq!(receiver.received().len(), 2 * i, "nothing before {at}");
            }
            server.advance(&token, at).await;
            assert_eq!(
                receiver.received().len(),
                2 * (i + 1),
                "attempt {} at {at}",
                i + 1
            );
        }
        server.advance(&token, "2027-03-10T00:00:00Z").await;
        assert_eq!(receiver.received().len(), 14, "no eighth attempt");
        let events = events_of(&server, &token, &key).await;
        for event in &events {
            assert_eq!(event["status"], "Undeliverable");
            let started: Vec<&str> = event["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["startedAt"].as_str().unwrap())
                .collect();
            assert_eq!(started, schedule);
            assert!(event["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["statusCode"] == 500));
            assert_eq!(event["nextAttemptAt"], Value::Null);
        }
        // Every attempt carried the same ActionId.
        let first = events[0]["actionId"].as_str().unwrap();
        assert_eq!(
            receiver
                .received()
                .iter()
                .filter(|r| r.header("webhook-id") == first)
                .count(),
            7
        );
        // An Undeliverable event can be re-sent: a new round starts now.
        receiver.answer_with(204);
        let resend = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/events/{first}/resend"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(resend.status, 202, "{}", resend.body);
        assert_eq!(resend.body["status"], "Pending");
        server.advance(&token, "2027-03-10T00:00:00Z").await;
        let events = events_of(&server, &token, &key).await;
        let resent = events.iter().find(|e| e["actionId"] == first).unwrap();
        assert_eq!(resent["status"], "Delivered");
        assert_eq!(resent["attempts"].as_array().unwrap().len(), 8);
        assert_eq!(resent["attempts"][7]["statusCode"], 204);
        // Another merchant sees none of it.
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/events/{first}/resend"),
                Some(&other_token),
                None,
            )
            .await
            .problem(404);
        server
            .call(
                Method::GET,
                &format!("/api/subscriptions/v1/membership/{key}/events"),
                Some(&other_token),
                None,
            )
            .await
            .problem(404);
    }
);

backend_matrix!(
    redirects_and_slow_endpoints_fail_the_attempt,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        receiver.answer_with(302);
        let server = server_for(
            backend,
            &receiver,
            &[("RECUR_WEBHOOK_TIMEOUT_SECONDS", "1")],
        )
        .await;
        let token = server.token().await;
        let key = membership_to(
            &server,
            &token,
            &receiver.url,
            "order-w4",
            "2027-03-01T00:00:00Z",
        )
        .await;
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        for event in events_of(&server, &token, &key).await {
            assert_eq!(event["status"], "Pending");
            assert_eq!(
                event["attempts"][0]["statusCode"], 302,
                "the redirect is not followed"
            );
        }
        assert_eq!(receiver.received().len(), 2);
        receiver.answer_with(200);
        receiver.delay(std::time::Duration::from_millis(2500));
        server.advance(&token, "2027-03-01T00:05:00Z").await;
        for event in events_of(&server, &token, &key).await {
            assert_eq!(event["status"], "Pending");
            assert_eq!(event["attempts"][1]["error"], "timed out");
            assert_eq!(
                event["attempts"][1]["nextAttemptAt"],
                "2027-03-01T00:35:00Z"
            );
        }
    }
);

/// Stores `count` `TRANSACTION_DATA_UPDATE` events of the server's merchant to `url`, due at
/// `at`, with the order ids `{prefix}-0` … ; returns their action ids.
async fn events_to(
    server: &TestServer,
    url: &str,
    prefix: &str,
    count: usize,
    at: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    use recur::store::outbox::{self, NewEvent};

    let orders: Vec<String> = (0..count).map(|i| format!("{prefix}-{i}")).collect();
    let events = orders
        .iter()
        .map(|order_id| NewEvent {
            merchant_id: server.merchant.merchant_id,
            membership_id: None,
            action: "TRANSACTION_DATA_UPDATE",
            order_id,
            webhook_url: url,
            fields: serde_json::Map::new(),
        })
        .collect();
    let store = &server.server.state.store;
    let mut tx = store.begin().await.unwrap();
    let action_ids = outbox::insert_events(&mut tx, events, at).await.unwrap();
    tx.commit().await.unwrap();
    action_ids
}

/// Status, attempts, round attempts, lease and delivery time of the event with `action_id`.
async fn event_row(
    pool: &recur::store::Pool,
    action_id: &str,
) -> (String, i64, i64, Option<i64>, Option<i64>) {
    sqlx::query_as(
        "SELECT status, attempts, round_attempts, lease_until, delivered_at \
         FROM events WHERE action_id = $1",
    )
    .bind(action_id)
    .fetch_one(pool)
    .await
    .unwrap()
}

crate::backend_test!(
    one_batch_records_a_resend_made_while_its_attempt_was_in_flight,
    |server: TestServer| async move {
        use recur::store::events::{self, EventStatus, Outcome, Scope};
        use recur::store::outbox::{self, NewEvent};

        let token = server.token().await;
        // On a test clock the background dispatcher leaves the merchant's events alone.
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let state = &server.server.state;
        let merchant_id = server.merchant.merchant_id;
        let now = chrono::DateTime::parse_from_rfc3339("2027-06-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let event = |order_id| NewEvent {
            merchant_id,
            membership_id: None,
            action: "TRANSACTION_DATA_UPDATE",
            order_id,
            webhook_url: "https://merchant.example/hooks",
            fields: serde_json::Map::new(),
        };
        let mut tx = state.store.begin().await.unwrap();
        let action_ids = outbox::insert_events(&mut tx, vec![event("o-1"), event("o-2")], now)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let real_now = state.clock.now();
        let due = events::due(
            &state.store,
            Scope::Merchant(merchant_id),
            now,
            real_now,
            10,
        )
        .await
        .unwrap();
        assert_eq!(due.len(), 2);
        let ids: Vec<i64> = due.iter().map(|e| e.id).collect();
        let until = real_now + chrono::TimeDelta::seconds(60);
        let leased = events::lease(&state.store, &ids, real_now, until)
            .await
            .unwrap();
        let mut leased_ids: Vec<i64> = leased.iter().map(|e| e.id).collect();
        leased_ids.sort_unstable();
        assert_eq!(leased_ids, ids, "both leased");
        assert!(
            events::lease(&state.store, &ids, real_now, until)
                .await
                .unwrap()
                .is_empty(),
            "a lease is held once"
        );
        // The first event is re-sent while both attempts are in flight.
        let resent = leased
            .iter()
            .find(|e| e.action_id == action_ids[0])
            .unwrap();
        let mut tx = state.store.begin().await.unwrap();
        events::resend(&mut tx, merchant_id, &resent.action_id, now)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let delivered = Outcome {
            started_at: now,
            status_code: Some(204),
            latency_ms: 3,
            error: None,
            status: EventStatus::Delivered,
            next_attempt_at: None,
        };
        let attempts: Vec<_> = leased.iter().map(|e| (e, &delivered)).collect();
        let mut tx = state.store.begin().await.unwrap();
        events::record_attempts(&mut tx, &attempts).await.unwrap();
        tx.commit().await.unwrap();

        let pool = state.store.pool();
        let (status, attempts, round, lease, delivered_at) = event_row(pool, &action_ids[0]).await;
        assert_eq!(
            (status.as_str(), attempts, round, lease),
            ("Pending", 1, 0, None),
            "the re-sent event counts the attempt and stays due in its new round"
        );
        assert!(delivered_at.is_some());
        let (status, attempts, round, lease, delivered_at) = event_row(pool, &action_ids[1]).await;
        assert_eq!(
            (status.as_str(), attempts, round, lease),
            ("Delivered", 1, 1, None)
        );
        assert!(delivered_at.is_some());
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM event_attempts a JOIN events e ON e.id = a.event_id \
                     WHERE e.order_id LIKE $1",
                    "o-%",
                )
                .await,
            2
        );
    }
);

backend_matrix!(
    the_background_dispatcher_keeps_four_deliveries_in_flight_per_endpoint,
    |backend| async move {
        const EVENTS: usize = 20;
        let receiver = WebhookReceiver::start().await;
        // Slow answers keep deliveries in flight; 16 slots would allow more than four.
        receiver.delay(std::time::Duration::from_millis(60));
        let server = server_for(backend, &receiver, &[("RECUR_WEBHOOK_CONCURRENCY", "16")]).await;
        let now = server.server.state.clock.now();
        let action_ids = events_to(&server, &receiver.url, "bound", EVENTS, now).await;
        crate::process::until(
            "every event delivered and recorded",
            std::time::Duration::from_secs(30),
            async || {
                server
                    .count(
                        "SELECT COUNT(*) FROM events WHERE status = 'Delivered' AND order_id LIKE $1",
                        "bound-%",
                    )
                    .await
                    == EVENTS as i64
            },
        )
        .await;
        assert_eq!(
            receiver.action_ids(),
            action_ids.into_iter().collect(),
            "each event arrived"
        );
        assert_eq!(receiver.received().len(), EVENTS, "and only once");
        assert_eq!(
            receiver.peak_in_flight(),
            4,
            "four deliveries at once to the one endpoint, never more"
        );
    }
);

backend_matrix!(
    metrics_count_attempts_and_show_the_backlog,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_for(backend, &receiver, &[]).await;
        let token = server.token().await;
        membership_to(
            &server,
            &token,
            &receiver.url,
            "order-wm",
            "2027-03-01T00:00:00Z",
        )
        .await;
        let before = server.metrics().await;
        assert!(
            before.contains(r#"recur_outbox_pending{outbox="events"} 2"#),
            "{before}"
        );
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        assert_eq!(receiver.received().len(), 2);
        let after = server.metrics().await;
        assert!(
            after.contains(r#"recur_webhook_attempts_total{outcome="Delivered"} 2"#),
            "{after}"
        );
        assert!(
            after.contains(r#"recur_outbox_pending{outbox="events"} 0"#),
            "{after}"
        );
    }
);

backend_matrix!(
    an_endpoint_that_never_answers_costs_a_test_clock_advance_one_round,
    |backend| async move {
        const EVENTS: usize = 12;
        let receiver = WebhookReceiver::start().await;
        // Every answer comes after the one-second time-out.
        receiver.delay(std::time::Duration::from_millis(3000));
        let server = server_for(
            backend,
            &receiver,
            &[("RECUR_WEBHOOK_TIMEOUT_SECONDS", "1")],
        )
        .await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        let at = chrono::DateTime::parse_from_rfc3339("2027-03-01T00:00:00Z")
            .unwrap()
            .to_utc();
        events_to(&server, &receiver.url, "silent", EVENTS, at).await;
        server.advance(&token, "2027-03-01T00:01:00Z").await;
        let attempted = server
            .count(
                "SELECT COUNT(*) FROM events WHERE attempts > 0 AND order_id LIKE $1",
                "silent-%",
            )
            .await;
        assert_eq!(
            attempted, 4,
            "one round of four attempts, then nothing more to the endpoint in this advance"
        );
        let waiting = server
            .count(
                "SELECT COUNT(*) FROM events WHERE status = 'Pending' AND attempts = 0 \
                 AND order_id LIKE $1",
                "silent-%",
            )
            .await;
        assert_eq!(waiting, (EVENTS - 4) as i64, "the others stay due");
        let retried = server
            .count(
                "SELECT COUNT(*) FROM events WHERE status = 'Pending' AND attempts = 1 \
                 AND next_attempt_at IS NOT NULL AND order_id LIKE $1",
                "silent-%",
            )
            .await;
        assert_eq!(retried, 4, "the failed ones are on the retry schedule");
    }
);
