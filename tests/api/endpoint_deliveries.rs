//! Deliveries to registered webhook endpoints (DESIGN §12) over real HTTPS, each verified with
//! the Standard Webhooks reference library (`standardwebhooks`): the fan-out written with the
//! event, filters, each endpoint's own secret and attempt log, rotation with a day of two
//! signatures, test events, the five-day disabling, deletion and re-sending.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use standardwebhooks::Webhook;

use crate::backend_matrix;
use crate::fixtures::webhooks::{at, membership_to, new_endpoint, server_with};
use crate::fixtures::ENDPOINTS;
use crate::harness::TestServer;
use crate::receivers::{Received, WebhookReceiver};

const START: &str = "2027-03-01T00:00:00Z";

/// Whether the Standard Webhooks library accepts `request` under `secret`.
fn verifies(request: &Received, secret: &str) -> bool {
    Webhook::new(secret)
        .unwrap()
        .verify(&request.body, &request.headers)
        .is_ok()
}

async fn deliveries(server: &TestServer, token: &str, endpoint: &str) -> Vec<Value> {
    let reply = server
        .call(
            Method::GET,
            &format!("{ENDPOINTS}/{endpoint}/deliveries"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["data"].as_array().unwrap().clone()
}

async fn send_test(server: &TestServer, token: &str, endpoint: &str) -> String {
    let reply = server
        .call(
            Method::POST,
            &format!("{ENDPOINTS}/{endpoint}/test"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(reply.body["action"], "WEBHOOK_TEST");
    reply.body["actionId"].as_str().unwrap().to_string()
}

async fn endpoint(server: &TestServer, token: &str, id: &str) -> Value {
    server
        .call(Method::GET, &format!("{ENDPOINTS}/{id}"), Some(token), None)
        .await
        .body
}

backend_matrix!(
    every_event_goes_to_each_matching_endpoint_under_its_own_secret,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        let base = &receiver.url;
        let (all, all_secret) =
            new_endpoint(&server, &token, &format!("{base}/all"), json!(null)).await;
        let (tx, tx_secret) = new_endpoint(
            &server,
            &token,
            &format!("{base}/tx"),
            json!(["TRANSACTION_DATA_UPDATE"]),
        )
        .await;
        let (off, _) = new_endpoint(&server, &token, &format!("{base}/off"), json!(null)).await;
        let disabled = server
            .call(
                Method::PATCH,
                &format!("{ENDPOINTS}/{off}"),
                Some(&token),
                Some(json!({"enabled": false})),
            )
            .await;
        assert_eq!(disabled.status, StatusCode::OK);
        // Another merchant's endpoint gets none of this merchant's events.
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        new_endpoint(&server, &other_token, &format!("{base}/other"), json!(null)).await;

        membership_to(
            &server,
            &token,
            &format!("{base}/own"),
            "order-fan-1",
            START,
        )
        .await;
        // Written with the events, before anything is delivered.
        let written = server
            .count(
                "SELECT COUNT(*) FROM endpoint_deliveries d JOIN events e ON e.id = d.event_id \
                 WHERE e.order_id = $1",
                "order-fan-1",
            )
            .await;
        assert_eq!(written, 3, "two events to `all`, the transaction to `tx`");
        server.advance(&token, START).await;

        let own = at(&receiver, "/hooks/own");
        let to_all = at(&receiver, "/hooks/all");
        let to_tx = at(&receiver, "/hooks/tx");
        assert_eq!(own.len(), 2, "the transaction and the status change");
        assert_eq!(to_all.len(), 2);
        assert_eq!(to_tx.len(), 1);
        assert_eq!(to_tx[0].json()["Action"], "TRANSACTION_DATA_UPDATE");
        assert!(at(&receiver, "/hooks/off").is_empty(), "disabled");
        assert!(
            at(&receiver, "/hooks/other").is_empty(),
            "another merchant's"
        );
        let whsec = &server.merchant.webhook_signing_secret;
        for request in &own {
            assert!(verifies(request, whsec));
            assert!(!verifies(request, &all_secret));
        }
        for request in &to_all {
            assert!(verifies(request, &all_secret), "the endpoint's own secret");
            assert!(!verifies(request, whsec));
            assert!(!verifies(request, &tx_secret));
            // The same event, with the spec's signature too.
            let body = request.json();
            assert_eq!(body["OrderId"], "order-fan-1");
            assert_eq!(
                request.header("x-signature"),
                body["Signature"].as_str().unwrap()
            );
            assert!(own
                .iter()
                .any(|o| o.header("webhook-id") == request.header("webhook-id")));
        }
        assert!(verifies(&to_tx[0], &tx_secret));

        // Each endpoint's attempt log, newest first, in the page shape.
        let log = deliveries(&server, &token, &all).await;
        assert_eq!(log.len(), 2);
        for attempt in &log {
            assert_eq!(attempt["attempt"], 1);
            assert_eq!(attempt["statusCode"], 200);
            assert_eq!(attempt["error"], Value::Null);
            assert_eq!(attempt["at"], START);
            assert!(attempt["durationMs"].as_i64().unwrap() >= 0);
            assert!(to_all
                .iter()
                .any(|r| r.header("webhook-id") == attempt["actionId"].as_str().unwrap()));
        }
        let log = deliveries(&server, &token, &tx).await;
        assert_eq!(log.len(), 1);
        assert_eq!(log[0]["action"], "TRANSACTION_DATA_UPDATE");
        assert!(deliveries(&server, &token, &off).await.is_empty());
    }
);

backend_matrix!(
    the_attempt_log_pages_with_a_tamper_proof_cursor,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        server.advance(&token, START).await;
        let (id, _) =
            new_endpoint(&server, &token, &format!("{}/p", receiver.url), json!(null)).await;
        let mut sent = Vec::new();
        for _ in 0..5 {
            sent.push(send_test(&server, &token, &id).await);
        }
        server.advance(&token, START).await;
        let page = |query: String| {
            let (server, token, id) = (&server, &token, &id);
            async move {
                server
                    .call(
                        Method::GET,
                        &format!("{ENDPOINTS}/{id}/deliveries{query}"),
                        Some(token),
                        None,
                    )
                    .await
            }
        };
        let first = page("?limit=2".into()).await;
        assert_eq!(first.body["hasMore"], true);
        let cursor = first.body["nextCursor"].as_str().unwrap().to_string();
        let mut seen: Vec<String> = Vec::new();
        let mut reply = first;
        loop {
            for attempt in reply.body["data"].as_array().unwrap() {
                seen.push(attempt["actionId"].as_str().unwrap().to_string());
            }
            match reply.body["nextCursor"].as_str() {
                Some(next) => reply = page(format!("?limit=2&cursor={next}")).await,
                None => break,
            }
        }
        // Made at once, so recorded in the order they finished: every one, each once.
        assert_eq!(seen.len(), 5);
        seen.sort();
        sent.sort();
        assert_eq!(seen, sent);
        page("?limit=0".into()).await.problem(400);
        page("?cursor=forged".into()).await.problem(400);
        // Another endpoint's list does not take this one's cursor.
        let (other, _) =
            new_endpoint(&server, &token, &format!("{}/q", receiver.url), json!(null)).await;
        let reply = server
            .call(
                Method::GET,
                &format!("{ENDPOINTS}/{other}/deliveries?cursor={cursor}"),
                Some(&token),
                None,
            )
            .await;
        assert!(reply.problem(400).contains_key("cursor"));
    }
);

backend_matrix!(
    a_test_event_goes_to_its_endpoint_alone,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        server.advance(&token, START).await;
        let base = &receiver.url;
        let (a, a_secret) = new_endpoint(
            &server,
            &token,
            &format!("{base}/a"),
            json!(["SUBSCRIPTION_UPDATED"]),
        )
        .await;
        let (b, _) = new_endpoint(&server, &token, &format!("{base}/b"), json!(null)).await;
        let action_id = send_test(&server, &token, &a).await;
        server.advance(&token, START).await;
        let received = receiver.received();
        assert_eq!(
            received.len(),
            1,
            "to that endpoint alone, whatever its filter"
        );
        let request = &received[0];
        assert_eq!(request.path, "/hooks/a");
        assert!(verifies(request, &a_secret));
        assert_eq!(request.header("webhook-id"), action_id);
        assert_eq!(request.header("x-signature"), "", "no OrderId to sign");
        assert_eq!(
            request.json(),
            json!({"Action": "WEBHOOK_TEST", "ActionId": action_id, "IssuedAt": START})
        );
        let log = deliveries(&server, &token, &a).await;
        assert_eq!(log.len(), 1);
        assert_eq!(log[0]["action"], "WEBHOOK_TEST");
        assert_eq!(log[0]["actionId"], action_id.as_str());
        assert!(deliveries(&server, &token, &b).await.is_empty());
        // Not one of the merchant's events.
        let events = server
            .call(
                Method::GET,
                "/api/subscriptions/v1/events",
                Some(&token),
                None,
            )
            .await;
        assert_eq!(events.body["data"], json!([]));
        // A disabled endpoint gets no test event.
        server
            .call(
                Method::PATCH,
                &format!("{ENDPOINTS}/{b}"),
                Some(&token),
                Some(json!({"enabled": false})),
            )
            .await;
        let reply = server
            .call(
                Method::POST,
                &format!("{ENDPOINTS}/{b}/test"),
                Some(&token),
                None,
            )
            .await;
        reply.problem(409);
    }
);

backend_matrix!(
    a_rotated_secret_signs_beside_the_old_one_for_a_day,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        server.advance(&token, START).await;
        let (id, old) = new_endpoint(&server, &token, &receiver.url, json!(null)).await;
        let rotated = server
            .call(
                Method::POST,
                &format!("{ENDPOINTS}/{id}/rotate-secret"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
        let new = rotated.body["secret"].as_str().unwrap().to_string();
        assert!(new.starts_with("whsec_") && new != old);

        send_test(&server, &token, &id).await;
        server.advance(&token, START).await;
        let request = receiver.received().pop().unwrap();
        let signatures: Vec<&str> = request.header("webhook-signature").split(' ').collect();
        assert_eq!(signatures.len(), 2, "{signatures:?}");
        assert!(signatures.iter().all(|s| s.starts_with("v1,")));
        assert!(verifies(&request, &new), "a receiver with the new secret");
        assert!(verifies(&request, &old), "a receiver still on the old one");

        // Just before the day ends, both; after it, the new secret alone.
        server.advance(&token, "2027-03-01T23:59:59Z").await;
        send_test(&server, &token, &id).await;
        server.advance(&token, "2027-03-01T23:59:59Z").await;
        let request = receiver.received().pop().unwrap();
        assert!(verifies(&request, &old));
        server.advance(&token, "2027-03-02T00:00:00Z").await;
        send_test(&server, &token, &id).await;
        server.advance(&token, "2027-03-02T00:00:00Z").await;
        let request = receiver.received().pop().unwrap();
        assert_eq!(request.header("webhook-signature").split(' ').count(), 1);
        assert!(verifies(&request, &new));
        assert!(!verifies(&request, &old));
    }
);

backend_matrix!(
    deleting_an_endpoint_stops_it_and_a_resend_reaches_the_others,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        receiver.answer_with(503);
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        let base = &receiver.url;
        let (gone, _) = new_endpoint(&server, &token, &format!("{base}/gone"), json!(null)).await;
        let (kept, kept_secret) =
            new_endpoint(&server, &token, &format!("{base}/kept"), json!(null)).await;
        membership_to(
            &server,
            &token,
            &format!("{base}/own"),
            "order-del-1",
            START,
        )
        .await;
        server.advance(&token, START).await;
        assert_eq!(
            at(&receiver, "/hooks/gone").len(),
            2,
            "first attempts failed"
        );
        let deleted = server
            .call(
                Method::DELETE,
                &format!("{ENDPOINTS}/{gone}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(deleted.status, StatusCode::NO_CONTENT);
        receiver.answer_with(200);
        server.advance(&token, "2027-03-01T00:05:00Z").await;
        assert_eq!(
            at(&receiver, "/hooks/gone").len(),
            2,
            "no retry to a deleted endpoint"
        );
        assert_eq!(
            at(&receiver, "/hooks/kept").len(),
            4,
            "retried on its own schedule"
        );
        assert_eq!(at(&receiver, "/hooks/own").len(), 4);

        // A re-send goes to the event's own URL and to the endpoints that still exist.
        let action_id = at(&receiver, "/hooks/own")[3]
            .header("webhook-id")
            .to_string();
        let resend = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/events/{action_id}/resend"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(resend.status, StatusCode::ACCEPTED, "{}", resend.body);
        server.advance(&token, "2027-03-01T00:05:00Z").await;
        let kept_now = at(&receiver, "/hooks/kept");
        assert_eq!(kept_now.len(), 5);
        assert_eq!(kept_now[4].header("webhook-id"), action_id);
        assert!(verifies(&kept_now[4], &kept_secret));
        assert_eq!(at(&receiver, "/hooks/own").len(), 5);
        assert_eq!(at(&receiver, "/hooks/gone").len(), 2);
        let log = deliveries(&server, &token, &kept).await;
        assert_eq!(log.len(), 5);
        assert_eq!(log[0]["attempt"], 3, "the re-sent delivery's third attempt");
    }
);

/// `START` plus `days`, as the test clock takes it.
fn day(days: i64) -> String {
    let start = chrono::DateTime::parse_from_rfc3339(START).unwrap();
    (start + chrono::TimeDelta::days(days))
        .to_utc()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Sends a test event at `day(n)` and delivers what is due then.
async fn test_on_day(server: &TestServer, token: &str, endpoint: &str, n: i64) {
    server.advance(token, &day(n)).await;
    send_test(server, token, endpoint).await;
    server.advance(token, &day(n)).await;
}

backend_matrix!(
    an_endpoint_failing_for_five_days_is_disabled_and_the_merchant_told,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        receiver.answer_with(500);
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        let settings = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&token),
                Some(json!({"supportEmail": "ops@shop.example"})),
            )
            .await;
        assert_eq!(settings.status, StatusCode::OK, "{}", settings.body);
        let (id, _) = new_endpoint(&server, &token, &receiver.url, json!(null)).await;
        // Four days of failures, then a success: the run of failures starts again after it.
        for n in 0..=3 {
            test_on_day(&server, &token, &id, n).await;
        }
        receiver.answer_with(200);
        test_on_day(&server, &token, &id, 4).await;
        receiver.answer_with(500);
        for n in 5..=9 {
            test_on_day(&server, &token, &id, n).await;
            let record = endpoint(&server, &token, &id).await;
            assert_eq!(record["enabled"], true, "failing {} days", n - 5);
        }
        // Five days after the run began, its next failure (a retry of day 9's test event)
        // disables the endpoint.
        server.advance(&token, &day(10)).await;
        let record = endpoint(&server, &token, &id).await;
        assert_eq!(record["enabled"], false);
        assert_eq!(record["disabledAt"], day(10));
        let sent = receiver.received().len();
        let reply = server
            .call(
                Method::POST,
                &format!("{ENDPOINTS}/{id}/test"),
                Some(&token),
                None,
            )
            .await;
        reply.problem(409);
        server.advance(&token, &day(11)).await;
        assert_eq!(
            receiver.received().len(),
            sent,
            "nothing more is sent to it"
        );

        // The merchant is told at its support address.
        let dir = server.data_dir().join("mail");
        let find = || -> Option<String> {
            std::fs::read_dir(&dir)
                .ok()?
                .filter_map(Result::ok)
                .find_map(|entry| {
                    let text = std::fs::read_to_string(entry.path()).ok()?;
                    text.contains("To: ops@shop.example").then_some(text)
                })
        };
        crate::receivers::eventually(|| find().is_some()).await;
        let mail = find().unwrap();
        assert!(
            mail.contains(&format!("Subject: Webhook endpoint {id} was disabled")),
            "{mail}"
        );
        assert!(mail.contains(&day(5)), "when the failures began: {mail}");

        // Enabled again, it is healthy afresh and its pending deliveries resume.
        receiver.answer_with(200);
        let enabled = server
            .call(
                Method::PATCH,
                &format!("{ENDPOINTS}/{id}"),
                Some(&token),
                Some(json!({"enabled": true})),
            )
            .await;
        assert_eq!(enabled.body["enabled"], true);
        assert_eq!(enabled.body["disabledAt"], Value::Null);
        server.advance(&token, &day(12)).await;
        assert!(
            receiver.received().len() > sent,
            "the pending retries went out"
        );
        let log = deliveries(&server, &token, &id).await;
        assert_eq!(log[0]["statusCode"], 200);
    }
);
