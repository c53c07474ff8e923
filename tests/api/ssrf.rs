//! The SSRF guard at the API (DESIGN §5): a webhook URL whose host is an internal IP literal, in
//! any spelling, is a 400 at create unless the operator allows private addresses; names are
//! accepted there and judged at every connection, and literals recorded earlier are refused
//! before the request.

use serde_json::json;

use crate::fixtures::cashier::session_body;
use crate::fixtures::memberships::create_raw;
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;
use crate::{backend_matrix, backend_test};

/// Internal addresses in the spellings the guard knows.
const INTERNAL: [&str; 9] = [
    "https://127.0.0.1/hooks",
    "https://2130706433/hooks",
    "https://0x7f.1:8443/hooks",
    "https://[::1]/hooks",
    "https://[::ffff:169.254.169.254]/latest/meta-data",
    "https://[::10.0.0.1]/hooks",
    "https://[2002:c0a8:101::1]/hooks",
    "https://[64:ff9b::a00:1]/hooks",
    "https://[fec0::1]/hooks",
];

backend_test!(
    internal_ip_literals_are_refused_at_create,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "ssrf@example.com").await;
        let secret = server.merchant.merchant_secret.clone();
        for (i, url) in INTERNAL.iter().enumerate() {
            // Listed with the body's other errors.
            let mut body = server.membership_body(&customer, &format!("order-ssrf-{i}"));
            body["webhookUrl"] = json!(url);
            body["subscriptionName"] = json!("");
            let reply = create_raw(&server, &token, body).await;
            let errors = reply.problem(400);
            assert!(errors.contains_key("subscriptionName"), "{errors:?}");
            let why = errors["webhookUrl"][0].as_str().unwrap();
            assert!(
                why.ends_with("which webhooks may not reach"),
                "{url}: {why}"
            );

            let reply = crate::fixtures::cashier::post(
                &server,
                Some(&secret),
                &session_body(&server, &format!("hp-ssrf-{i}"), url, json!({})),
            )
            .await;
            let errors = reply.problem(400);
            assert_eq!(
                errors.keys().collect::<Vec<_>>(),
                ["webhookUrl"],
                "{url}: {errors:?}"
            );
        }
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM memberships WHERE order_id LIKE $1",
                    "order-ssrf-%"
                )
                .await,
            0
        );
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM cashier_sessions WHERE order_id LIKE $1",
                    "hp-ssrf-%"
                )
                .await,
            0
        );

        // A name is judged at the connection, and a public literal is fine.
        for (i, url) in ["https://localhost/hooks", "https://93.184.216.34/hooks"]
            .iter()
            .enumerate()
        {
            let mut body = server.membership_body(&customer, &format!("order-name-{i}"));
            body["webhookUrl"] = json!(url);
            server.create_membership(&token, body).await;
            let reply = crate::fixtures::cashier::post(
                &server,
                Some(&secret),
                &session_body(&server, &format!("hp-name-{i}"), url, json!({})),
            )
            .await;
            assert_eq!(reply.status, 200, "{url}: {}", reply.body);
        }
    }
);

backend_matrix!(
    internal_ip_literals_are_accepted_when_the_operator_allows_them,
    |backend| async move {
        let server =
            TestServer::start_with(backend, &[("RECUR_WEBHOOK_ALLOW_PRIVATE", "true")]).await;
        let token = server.token().await;
        let customer = server.create_customer(&token, "private@example.com").await;
        let secret = server.merchant.merchant_secret.clone();
        for (i, url) in INTERNAL.iter().enumerate() {
            let mut body = server.membership_body(&customer, &format!("order-private-{i}"));
            body["webhookUrl"] = json!(url);
            let record = server.create_membership(&token, body).await;
            // Stored as checked: the URL's normalized form (`2130706433` is `127.0.0.1`).
            let normalized = reqwest::Url::parse(url).unwrap().to_string();
            assert_eq!(record["webhookUrl"], normalized);
            let reply = crate::fixtures::cashier::post(
                &server,
                Some(&secret),
                &session_body(&server, &format!("hp-private-{i}"), url, json!({})),
            )
            .await;
            assert_eq!(reply.status, 200, "{url}: {}", reply.body);
        }
    }
);

backend_matrix!(
    internal_addresses_are_refused_at_delivery,
    |backend| async move {
        use recur::store::outbox::{self, NewEvent};

        let receiver = WebhookReceiver::start().await;
        // Trusts the test CA, but private addresses are not allowed.
        let server = TestServer::start_with_owned(
            backend,
            &[(
                "RECUR_WEBHOOK_EXTRA_ROOTS",
                receiver.ca_path.display().to_string(),
            )],
        )
        .await;
        let token = server.token().await;
        let port = receiver.addr.port();
        // A name is accepted at create and refused at the connection.
        let customer = server
            .create_customer(&token, "ssrf-name@example.com")
            .await;
        let mut body = server.membership_body(&customer, "order-ssrf-name");
        body["webhookUrl"] = json!(format!("https://localhost:{port}/hooks"));
        server
            .active_membership(&token, "2027-03-01T00:00:00Z", body)
            .await;
        // Literals recorded while the operator allowed private addresses are refused before the
        // request.
        let literals = [
            format!("https://127.0.0.1:{port}/hooks"),
            format!("https://[::ffff:127.0.0.1]:{port}/hooks"),
            format!("https://[::127.0.0.1]:{port}/hooks"),
            format!("https://[2002:7f00:1::]:{port}/hooks"),
            "https://169.254.169.254/latest/meta-data".to_string(),
        ];
        let orders: Vec<String> = (0..literals.len())
            .map(|i| format!("order-ssrf-literal-{i}"))
            .collect();
        let state = &server.server.state;
        let at = chrono::DateTime::parse_from_rfc3339("2027-03-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let events = literals
            .iter()
            .zip(&orders)
            .map(|(url, order_id)| NewEvent {
                merchant_id: server.merchant.merchant_id,
                membership_id: None,
                action: "TRANSACTION_DATA_UPDATE",
                order_id,
                webhook_url: url,
                fields: serde_json::Map::new(),
            })
            .collect();
        let mut tx = state.store.begin().await.unwrap();
        outbox::insert_events(&mut tx, events, at).await.unwrap();
        tx.commit().await.unwrap();

        server.advance(&token, "2027-03-02T00:00:00Z").await;
        assert!(
            receiver.received().is_empty(),
            "nothing reached the loopback receiver"
        );
        let attempts: Vec<(String, Option<i64>, Option<String>, String)> = sqlx::query_as(
            "SELECT e.order_id, a.status_code, a.error, e.status FROM event_attempts a \
         JOIN events e ON e.id = a.event_id WHERE e.order_id LIKE $1 ORDER BY a.id",
        )
        .bind("order-ssrf-%")
        .fetch_all(state.store.pool())
        .await
        .unwrap();
        let mut attempted: Vec<&str> = attempts.iter().map(|a| a.0.as_str()).collect();
        attempted.dedup();
        assert!(attempted.contains(&"order-ssrf-name"), "{attempts:?}");
        for order in &orders {
            assert!(attempted.contains(&order.as_str()), "{order}: {attempts:?}");
        }
        for (order, status_code, error, status) in &attempts {
            assert_eq!(*status_code, None, "{order}");
            let error = error.as_deref().unwrap_or_default();
            assert!(error.contains("may not reach"), "{order}: {error}");
            assert_eq!(
                status, "Pending",
                "{order}: retried on schedule like any failure"
            );
        }
    }
);
