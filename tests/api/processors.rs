//! A merchant's processors (DESIGN §17) against localstripe: the sandbox set listed, a Stripe
//! account connected with its key checked and never shown, made the default, changed and
//! removed; keys of the wrong kind or mode refused on their fields with nothing stored; Stripe
//! out of reach a 503 with nothing stored; another merchant's processor a 404.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::PROCESSORS;
use crate::harness::{Reply, TestServer};

const SECRET_KEY: &str = "sk_test_51ProcTestKey4242abcd";
const WEBHOOK_SECRET: &str = "whsec_ProcTestSecret0123456789";

fn stripe_body(name: &str) -> Value {
    json!({
        "kind": "stripe",
        "name": name,
        "secretKey": SECRET_KEY,
        "publishableKey": "pk_test_51ProcTestKey",
        "webhookSecret": WEBHOOK_SECRET,
    })
}

async fn list(server: &TestServer, token: &str) -> Vec<Value> {
    let reply = server
        .call(Method::GET, PROCESSORS, Some(token), None)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["next"], Value::Null, "one page");
    reply.body["data"].as_array().unwrap().clone()
}

fn defaults(listed: &[Value]) -> Vec<i64> {
    listed
        .iter()
        .filter(|p| p["default"] == true)
        .map(|p| p["paymentProcessorId"].as_i64().unwrap())
        .collect()
}

/// Nothing of a secret is in an answer.
fn shows_no_secret(reply: &Reply) {
    let text = reply.body.to_string();
    for secret in [
        SECRET_KEY,
        WEBHOOK_SECRET,
        SECRET_KEY.trim_start_matches("sk_test_"),
    ] {
        assert!(!text.contains(secret), "{text}");
    }
}

backend_matrix!(
    a_stripe_account_is_connected_made_default_changed_and_removed,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let sandbox = list(&server, &token).await;
        let kinds: Vec<(i64, &str)> = sandbox
            .iter()
            .map(|p| {
                (
                    p["paymentProcessorId"].as_i64().unwrap(),
                    p["kind"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (101, "sandbox-card"),
                (102, "sandbox-card"),
                (201, "sandbox-alternative"),
                (202, "sandbox-alternative")
            ]
        );
        assert_eq!(defaults(&sandbox), [101], "the sandbox gateways take cards");
        assert!(sandbox.iter().all(|p| p["stripe"].is_null()));

        let created = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(stripe_body("Stripe EU")),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        shows_no_secret(&created);
        let record = &created.body;
        assert_eq!(record["paymentProcessorId"], 301);
        assert_eq!(record["name"], "Stripe EU");
        assert_eq!(record["kind"], "stripe");
        assert_eq!(record["default"], false);
        assert!(record["createdAt"].as_str().unwrap().ends_with('Z'));
        assert_eq!(record["stripe"]["live"], false);
        assert_eq!(record["stripe"]["secretKeyLast4"], "abcd");
        assert_eq!(record["stripe"]["publishableKey"], "pk_test_51ProcTestKey");
        let webhook_url = record["stripe"]["webhookUrl"].as_str().unwrap();
        assert_eq!(
            webhook_url,
            format!("{}/webhooks/stripe/301", server.base_url)
        );
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM stripe_accounts WHERE secret_key_sealed = $1",
                    SECRET_KEY
                )
                .await,
            0,
            "the key is stored sealed"
        );

        let path = format!("{PROCESSORS}/301");
        let changed = server
            .call(
                Method::PATCH,
                &path,
                Some(&token),
                Some(json!({"name": "Stripe Europe", "default": true})),
            )
            .await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
        shows_no_secret(&changed);
        assert_eq!(changed.body["name"], "Stripe Europe");
        assert_eq!(changed.body["default"], true);
        let listed = list(&server, &token).await;
        assert_eq!(listed.len(), 5);
        assert_eq!(defaults(&listed), [301], "one default");
        let got = server.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(got.body, changed.body);

        // A default is changed by making another processor the default.
        let undone = server
            .call(
                Method::PATCH,
                &path,
                Some(&token),
                Some(json!({"default": false})),
            )
            .await;
        assert!(
            undone.problem(400).contains_key("default"),
            "{}",
            undone.body
        );
        let back = server
            .call(
                Method::PATCH,
                &format!("{PROCESSORS}/101"),
                Some(&token),
                Some(json!({"default": true})),
            )
            .await;
        assert_eq!(back.status, StatusCode::OK, "{}", back.body);
        assert_eq!(defaults(&list(&server, &token).await), [101]);

        let removed = server.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(removed.status, StatusCode::NO_CONTENT);
        let gone = server.call(Method::GET, &path, Some(&token), None).await;
        gone.problem(404);
        assert_eq!(list(&server, &token).await.len(), 4);
    }
);

backend_matrix!(
    a_removed_default_gives_the_cards_back_to_the_sandbox_gateways,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let mut body = stripe_body("Stripe");
        body["default"] = json!(true);
        let created = server
            .call(Method::POST, PROCESSORS, Some(&token), Some(body))
            .await;
        assert_eq!(created.body["default"], true, "{}", created.body);
        let path = format!("{PROCESSORS}/301");
        let removed = server.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(removed.status, StatusCode::NO_CONTENT);
        assert_eq!(defaults(&list(&server, &token).await), [101]);
        // The next account takes the next id: an id is never given to another account.
        let again = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(stripe_body("Again")),
            )
            .await;
        assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
        assert_eq!(again.body["paymentProcessorId"], 302);
    }
);

backend_matrix!(
    keys_of_another_kind_or_mode_are_refused_on_their_fields,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let refused = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(json!({
                    "kind": "paypal",
                    "name": "",
                    "secretKey": "sk_live_51Real",
                    "publishableKey": "sk_test_51Swapped",
                    "webhookSecret": 42,
                    "default": "yes",
                })),
            )
            .await;
        let errors = refused.problem(400);
        for field in [
            "kind",
            "name",
            "secretKey",
            "publishableKey",
            "webhookSecret",
            "default",
        ] {
            assert!(errors.contains_key(field), "{field}: {}", refused.body);
        }
        let missing = server
            .call(Method::POST, PROCESSORS, Some(&token), Some(json!({})))
            .await;
        let errors = missing.problem(400);
        for field in [
            "kind",
            "name",
            "secretKey",
            "publishableKey",
            "webhookSecret",
        ] {
            assert!(errors.contains_key(field), "{field}: {}", missing.body);
        }
        assert_eq!(list(&server, &token).await.len(), 4, "nothing stored");

        // A live merchant takes live keys only.
        let live = server.another_merchant(Mode::Live).await;
        let live_token = server.token_for(&live).await;
        let test_key = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&live_token),
                Some(stripe_body("Test")),
            )
            .await;
        let errors = test_key.problem(400);
        assert!(errors.contains_key("secretKey") && errors.contains_key("publishableKey"));
        let live_body = json!({
            "kind": "stripe",
            "name": "Live",
            "secretKey": "sk_live_51LiveKey9876",
            "publishableKey": "pk_live_51LiveKey",
            "webhookSecret": WEBHOOK_SECRET,
        });
        let connected = server
            .call(Method::POST, PROCESSORS, Some(&live_token), Some(live_body))
            .await;
        assert_eq!(connected.status, StatusCode::CREATED, "{}", connected.body);
        assert_eq!(connected.body["stripe"]["live"], true);
        assert_eq!(connected.body["stripe"]["secretKeyLast4"], "9876");

        // A sandbox processor has no keys, and only the first sandbox gateway stands for them.
        let sandbox_change = server
            .call(
                Method::PATCH,
                &format!("{PROCESSORS}/102"),
                Some(&token),
                Some(json!({"name": "Mine", "secretKey": SECRET_KEY, "default": true})),
            )
            .await;
        let errors = sandbox_change.problem(400);
        for field in ["name", "secretKey", "default"] {
            assert!(
                errors.contains_key(field),
                "{field}: {}",
                sandbox_change.body
            );
        }
        let wallet = server
            .call(
                Method::PATCH,
                &format!("{PROCESSORS}/201"),
                Some(&token),
                Some(json!({"default": true})),
            )
            .await;
        assert!(wallet.problem(400).contains_key("default"));
        for (method, path) in [
            (Method::DELETE, format!("{PROCESSORS}/101")),
            (Method::GET, format!("{PROCESSORS}/999")),
            (Method::GET, format!("{PROCESSORS}/abc")),
            (Method::PATCH, format!("{PROCESSORS}/999")),
        ] {
            let body = (method == Method::PATCH).then(|| json!({"name": "x"}));
            let reply = server.call(method, &path, Some(&token), body).await;
            reply.problem(404);
        }
        // Another merchant's account is no processor of this one.
        let foreign = server
            .call(
                Method::GET,
                &format!("{PROCESSORS}/301"),
                Some(&token),
                None,
            )
            .await;
        foreign.problem(404);
    }
);

backend_matrix!(
    stripe_out_of_reach_is_a_503_and_nothing_is_stored,
    |backend| async move {
        // Nothing listens on the discard port of this host.
        let server =
            TestServer::start_with(backend, &[("RECUR_STRIPE_API_BASE", "http://127.0.0.1:9")])
                .await;
        let token = server.token().await;
        let reply = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&token),
                Some(stripe_body("Down")),
            )
            .await;
        reply.problem(503);
        assert_eq!(reply.body["type"], "urn:recur:problem:unavailable");
        shows_no_secret(&reply);
        assert_eq!(list(&server, &token).await.len(), 4, "nothing stored");
    }
);
