//! SEPA processors (DESIGN §18): connected with a checked creditor identifier, IBAN, BIC and
//! lead, listed beside the other processors, changed (never its creditor identifier), refused
//! field by field with nothing stored, kept apart between merchants, and removed.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::PROCESSORS;
use crate::harness::TestServer;

/// The Deutsche Bundesbank's published example creditor identifier.
const CREDITOR_ID: &str = "DE98ZZZ09999999999";

fn sepa_body() -> Value {
    json!({
        "kind": "sepa_debit",
        "name": "Club account",
        "creditorId": "de98 zzz0 9999 9999 99",
        "iban": "DE89 3704 0044 0532 0130 00",
    })
}

async fn listed_ids(server: &TestServer, token: &str) -> Vec<i64> {
    let reply = server
        .call(Method::GET, PROCESSORS, Some(token), None)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["paymentProcessorId"].as_i64().unwrap())
        .collect()
}

backend_matrix!(
    a_sepa_processor_is_connected_changed_and_removed,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let connected = server
            .call(Method::POST, PROCESSORS, Some(&token), Some(sepa_body()))
            .await;
        assert_eq!(connected.status, StatusCode::CREATED, "{}", connected.body);
        let id = connected.body["paymentProcessorId"].as_i64().unwrap();
        assert!(id >= 301, "{id}");
        assert_eq!(connected.body["kind"], "sepa_debit");
        assert_eq!(connected.body["default"], false);
        assert_eq!(connected.body["stripe"], Value::Null);
        let creditor = &connected.body["sepaDebit"];
        assert_eq!(creditor["creditorId"], CREDITOR_ID, "normalised");
        assert_eq!(
            creditor["creditorName"], "Club account",
            "the name by default"
        );
        assert_eq!(creditor["iban"], "DE89370400440532013000");
        assert_eq!(creditor["bic"], Value::Null);
        assert_eq!(creditor["leadDays"], 5, "the default lead");
        assert_eq!(creditor["currency"], "EUR");
        assert!(connected.body["createdAt"].is_string());

        assert_eq!(listed_ids(&server, &token).await, [101, 102, 201, 202, id]);
        let path = format!("{PROCESSORS}/{id}");
        let fetched = server.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(fetched.body, connected.body);

        let changed = server
            .call(
                Method::PATCH,
                &path,
                Some(&token),
                Some(json!({
                    "name": "Main account",
                    "creditorName": "Sportverein Müller e.V.",
                    "iban": "FR14 2004 1010 0505 0001 3M02 606",
                    "bic": "cobadeffxxx",
                    "leadDays": 2,
                })),
            )
            .await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
        assert_eq!(changed.body["name"], "Main account");
        let creditor = &changed.body["sepaDebit"];
        assert_eq!(creditor["creditorName"], "Sportverein Müller e.V.");
        assert_eq!(creditor["iban"], "FR1420041010050500013M02606");
        assert_eq!(creditor["bic"], "COBADEFFXXX");
        assert_eq!(creditor["leadDays"], 2);
        assert_eq!(creditor["creditorId"], CREDITOR_ID);

        let unset_bic = server
            .call(
                Method::PATCH,
                &path,
                Some(&token),
                Some(json!({"bic": null})),
            )
            .await;
        assert_eq!(unset_bic.status, StatusCode::OK, "{}", unset_bic.body);
        assert_eq!(unset_bic.body["sepaDebit"]["bic"], Value::Null);
        assert_eq!(unset_bic.body["sepaDebit"]["leadDays"], 2, "the rest kept");

        // Its creditor identifier stays; it is no card processor; it has no Stripe keys.
        let refused = server
            .call(
                Method::PATCH,
                &path,
                Some(&token),
                Some(json!({
                    "creditorId": "DE98ZZZ09999999999",
                    "default": true,
                    "secretKey": "sk_test_1234",
                    "leadDays": 15,
                })),
            )
            .await;
        let errors = refused.problem(400);
        for field in ["creditorId", "default", "secretKey", "leadDays"] {
            assert!(errors.contains_key(field), "{field}: {}", refused.body);
        }
        let unchanged = server.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(
            unchanged.body, unset_bic.body,
            "nothing of a refused change is kept"
        );

        // A sandbox gateway has no creditor.
        let sandbox = server
            .call(
                Method::PATCH,
                &format!("{PROCESSORS}/101"),
                Some(&token),
                Some(json!({"iban": "DE89370400440532013000"})),
            )
            .await;
        assert!(sandbox.problem(400).contains_key("iban"));

        // Another merchant sees no such processor.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        for method in [Method::GET, Method::DELETE] {
            let reply = server.call(method, &path, Some(&other_token), None).await;
            reply.problem(404);
        }
        let patched = server
            .call(
                Method::PATCH,
                &path,
                Some(&other_token),
                Some(json!({"leadDays": 3})),
            )
            .await;
        patched.problem(404);

        let removed = server.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(removed.status, StatusCode::NO_CONTENT, "{}", removed.body);
        server
            .call(Method::GET, &path, Some(&token), None)
            .await
            .problem(404);
        assert_eq!(listed_ids(&server, &token).await, [101, 102, 201, 202]);
        server
            .call(Method::DELETE, &path, Some(&token), None)
            .await
            .problem(404);

        // The next one takes a new id: events may name the removed one.
        let again = server
            .call(Method::POST, PROCESSORS, Some(&token), Some(sepa_body()))
            .await;
        assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
        assert!(again.body["paymentProcessorId"].as_i64().unwrap() > id);
    }
);

backend_matrix!(
    bad_creditor_details_are_refused_on_their_fields,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let bad = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(json!({
                    "kind": "sepa_debit",
                    "name": "Club",
                    "creditorId": "DE99ZZZ09999999999",
                    "iban": "DE89370400440532013001",
                    "bic": "DEUTXXFF",
                    "leadDays": 0,
                    "creditorName": "x".repeat(71),
                    "secretKey": "sk_test_1234",
                    "default": true,
                })),
            )
            .await;
        let errors = bad.problem(400);
        for field in [
            "creditorId",
            "iban",
            "bic",
            "leadDays",
            "creditorName",
            "secretKey",
            "default",
        ] {
            assert!(errors.contains_key(field), "{field}: {}", bad.body);
        }
        assert!(errors["creditorId"][0]
            .as_str()
            .unwrap()
            .contains("check digits"));

        let missing = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(json!({"kind": "sepa_debit", "leadDays": "five"})),
            )
            .await;
        let errors = missing.problem(400);
        for field in ["name", "creditorId", "iban", "leadDays"] {
            assert!(errors.contains_key(field), "{field}: {}", missing.body);
        }
        for lead in [15, -1] {
            let mut body = sepa_body();
            body["leadDays"] = json!(lead);
            let reply = server
                .call(Method::POST, PROCESSORS, Some(&token), Some(body))
                .await;
            assert!(reply.problem(400).contains_key("leadDays"));
        }

        // A Stripe account has no creditor.
        let stripe = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(json!({"kind": "stripe", "name": "S", "iban": "DE89370400440532013000"})),
            )
            .await;
        assert!(stripe.problem(400).contains_key("iban"));
        assert_eq!(
            listed_ids(&server, &token).await,
            [101, 102, 201, 202],
            "nothing stored"
        );
    }
);
