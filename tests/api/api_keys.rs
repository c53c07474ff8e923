//! API keys (DESIGN §11): created with a secret shown once and stored only as a keyed digest,
//! listed without secrets, accepted wherever an access token is and in place of
//! `X-Merchant-Secret`, a `read` key held to GET, revocation refused at once (and within a
//! second in another process), 404 for another merchant's key, the 100-key cap, `lastUsedAt`.

use std::time::{Duration, Instant};

use recur::store::api_keys;
use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::cashier::{card, open_order, pay, session_body, visitor};
use crate::fixtures::webhooks::server_with;
use crate::harness::{Backend, Reply, TestServer};
use crate::receivers::WebhookReceiver;

const KEYS: &str = "/api/subscriptions/v1/api-keys";

async fn create_key(server: &TestServer, auth: &str, body: Value) -> Reply {
    server
        .call(Method::POST, KEYS, Some(auth), Some(body))
        .await
}

/// Creates a key with `scope`; returns (id, secret).
async fn new_key(server: &TestServer, auth: &str, scope: &str) -> (String, String) {
    let reply = create_key(server, auth, json!({"name": "test key", "scope": scope})).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let field = |name: &str| reply.body[name].as_str().unwrap().to_string();
    (field("apiKeyId"), field("secret"))
}

async fn list(server: &TestServer, auth: &str) -> Reply {
    server.call(Method::GET, KEYS, Some(auth), None).await
}

/// The listed keys (the `data` of a 200).
async fn live_keys(server: &TestServer, auth: &str) -> Vec<Value> {
    let reply = list(server, auth).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["data"].as_array().unwrap().clone()
}

async fn revoke(server: &TestServer, auth: &str, key_id: &str) -> Reply {
    server
        .call(
            Method::DELETE,
            &format!("{KEYS}/{key_id}"),
            Some(auth),
            None,
        )
        .await
}

async fn get_customer(server: &TestServer, auth: &str, customer: &str) -> Reply {
    server
        .call(
            Method::GET,
            &format!("/api/subscriptions/v1/customer/{customer}"),
            Some(auth),
            None,
        )
        .await
}

async fn post_customer(server: &TestServer, auth: &str, email: &str) -> Reply {
    server
        .call(
            Method::POST,
            "/api/subscriptions/v1/customer",
            Some(auth),
            Some(server.customer_body(email)),
        )
        .await
}

fn is_base62(text: &str, len: usize) -> bool {
    text.len() == len && text.chars().all(|c| c.is_ascii_alphanumeric())
}

backend_test!(
    a_key_is_created_with_its_secret_once_and_listed_without_it,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = create_key(
            &server,
            &token,
            json!({"name": "Reporting", "scope": "read"}),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let created = &reply.body;
        let id = created["apiKeyId"].as_str().unwrap();
        let secret = created["secret"].as_str().unwrap();
        assert!(is_base62(id.strip_prefix("ak_").unwrap(), 24), "{id}");
        let random = secret.strip_prefix("rk_").unwrap();
        assert!(random.len() >= 32 && is_base62(random, random.len()));
        assert_eq!(created["name"], "Reporting");
        assert_eq!(created["scope"], "read");
        assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));

        let (second, _) = new_key(&server, &token, "write").await;
        let listed = list(&server, &token).await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
        assert_eq!(listed.body["hasMore"], false);
        assert_eq!(listed.body["nextCursor"], Value::Null);
        let data = listed.body["data"].as_array().unwrap();
        // Newest first, every field but the secret.
        assert_eq!(data.len(), 2);
        assert_eq!(data[0]["apiKeyId"], second.as_str());
        assert_eq!(data[1]["apiKeyId"], id);
        assert_eq!(data[1]["name"], "Reporting");
        assert_eq!(data[1]["scope"], "read");
        assert_eq!(data[1]["createdAt"], created["createdAt"]);
        assert_eq!(data[1]["lastUsedAt"], Value::Null);
        assert!(!listed.body.to_string().contains(secret));
        assert!(data.iter().all(|key| key.get("secret").is_none()));
    }
);

backend_test!(
    a_write_key_works_wherever_a_token_does,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, key) = new_key(&server, &token, "write").await;
        let created = post_customer(&server, &key, "write-key@example.com").await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        let customer = created.body["customerKey"].as_str().unwrap();
        assert_eq!(
            get_customer(&server, &key, customer).await.status,
            StatusCode::OK
        );
        // The same merchant's idempotency keys, whichever credential is sent.
        let send = |auth: String| {
            server
                .client
                .post(format!("{}/api/subscriptions/v1/customer", server.base_url))
                .bearer_auth(auth)
                .header("idempotency-key", "same-for-both")
                .json(&server.customer_body("idem@example.com"))
                .send()
        };
        let first = send(key.clone()).await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let again = send(token.clone()).await.unwrap();
        assert_eq!(again.status(), StatusCode::CREATED);
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        // A write key manages keys too.
        let (other, _) = new_key(&server, &key, "read").await;
        assert_eq!(list(&server, &key).await.status, StatusCode::OK);
        assert_eq!(
            revoke(&server, &key, &other).await.status,
            StatusCode::NO_CONTENT
        );
    }
);

backend_test!(
    a_read_key_reads_and_is_refused_everything_else,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "read@example.com").await;
        let (_, key) = new_key(&server, &token, "read").await;
        let read = get_customer(&server, &key, &customer).await;
        assert_eq!(read.status, StatusCode::OK, "{}", read.body);
        assert_eq!(read.body["customerKey"], customer.as_str());

        post_customer(&server, &key, "refused@example.com")
            .await
            .problem(403);
        let put = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/customer/phone",
                Some(&key),
                Some(json!({"customerKey": customer, "phone": "+4915199999999"})),
            )
            .await;
        put.problem(403);
        // Nothing was written.
        let after = get_customer(&server, &key, &customer).await;
        assert_eq!(after.body["phone"], read.body["phone"]);
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM customers WHERE email = $1",
                    "refused@example.com"
                )
                .await,
            0
        );

        // Managing keys takes a token or a write key: listing, creating and revoking alike.
        let (victim, _) = new_key(&server, &token, "write").await;
        list(&server, &key).await.problem(403);
        create_key(&server, &key, json!({"name": "x", "scope": "write"}))
            .await
            .problem(403);
        revoke(&server, &key, &victim).await.problem(403);
        assert_eq!(live_keys(&server, &token).await.len(), 2);
    }
);

backend_test!(
    a_revoked_key_is_refused_at_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "revoke@example.com").await;
        let (id, key) = new_key(&server, &token, "write").await;
        // Used, so remembered by the process.
        assert_eq!(
            get_customer(&server, &key, &customer).await.status,
            StatusCode::OK
        );
        assert_eq!(
            revoke(&server, &token, &id).await.status,
            StatusCode::NO_CONTENT
        );
        let refused = get_customer(&server, &key, &customer).await;
        refused.problem(401);
        assert_eq!(
            refused.header("www-authenticate"),
            Some("Bearer error=\"invalid_token\"")
        );
        post_customer(&server, &key, "after@example.com")
            .await
            .problem(401);
        // Gone from the list; revoking it again, or an unknown id, is a 404.
        assert!(live_keys(&server, &token).await.is_empty());
        revoke(&server, &token, &id).await.problem(404);
        revoke(&server, &token, "ak_unknown").await.problem(404);
        // An unknown secret is a 401 like any bad token.
        get_customer(&server, "rk_neverissued", &customer)
            .await
            .problem(401);
    }
);

backend_test!(
    another_merchants_key_is_not_found,
    |server: TestServer| async move {
        let token = server.token().await;
        let (id, key) = new_key(&server, &token, "write").await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        revoke(&server, &other_token, &id).await.problem(404);
        assert!(live_keys(&server, &other_token).await.is_empty());
        // Still live for its own merchant, and it acts for that merchant only.
        let customer = server.create_customer(&token, "mine@example.com").await;
        assert_eq!(
            get_customer(&server, &key, &customer).await.status,
            StatusCode::OK
        );
        let (_, other_key) = new_key(&server, &other_token, "read").await;
        get_customer(&server, &other_key, &customer)
            .await
            .problem(404);
    }
);

backend_test!(
    bad_names_and_scopes_are_400_on_the_field,
    |server: TestServer| async move {
        let token = server.token().await;
        let long = "n".repeat(101);
        for (body, field) in [
            (json!({"scope": "read"}), "name"),
            (json!({"name": "", "scope": "read"}), "name"),
            (json!({"name": "   ", "scope": "read"}), "name"),
            (json!({"name": long, "scope": "read"}), "name"),
            (json!({"name": 5, "scope": "read"}), "name"),
            (json!({"name": "k"}), "scope"),
            (json!({"name": "k", "scope": "admin"}), "scope"),
            (json!({"name": "k", "scope": "READ"}), "scope"),
            (json!({"name": "k", "scope": null}), "scope"),
        ] {
            let reply = create_key(&server, &token, body.clone()).await;
            let errors = reply.problem(400);
            assert!(errors.contains_key(field), "{body}: {}", reply.body);
        }
        let both = create_key(&server, &token, json!({})).await;
        let errors = both.problem(400);
        assert!(errors.contains_key("name") && errors.contains_key("scope"));
        let hundred = create_key(
            &server,
            &token,
            json!({"name": "é".repeat(100), "scope": "read"}),
        )
        .await;
        assert_eq!(hundred.status, StatusCode::CREATED, "{}", hundred.body);
        assert_eq!(live_keys(&server, &token).await.len(), 1);
    }
);

backend_test!(
    a_merchant_holds_at_most_a_hundred_live_keys,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut first = None;
        for _ in 0..100 {
            let (id, _) = new_key(&server, &token, "read").await;
            first.get_or_insert(id);
        }
        create_key(
            &server,
            &token,
            json!({"name": "one more", "scope": "read"}),
        )
        .await
        .problem(409);
        assert_eq!(live_keys(&server, &token).await.len(), 100);
        revoke(&server, &token, &first.unwrap()).await;
        new_key(&server, &token, "read").await;
    }
);

backend_matrix!(
    keys_stand_in_for_the_merchant_secret,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        let (write_id, write) = new_key(&server, &token, "write").await;
        let (_, read) = new_key(&server, &token, "read").await;

        // A hosted-page session opened with a key: the body is still signed with the merchant
        // secret.
        let body = session_body(&server, "hp-key-1", &receiver.url, json!({}));
        let session = |auth: String| {
            let body = body.clone();
            let server = &server;
            async move {
                server
                    .call(
                        Method::POST,
                        "/api/payment/hosted-page",
                        Some(&auth),
                        Some(body),
                    )
                    .await
            }
        };
        let opened = session(write.clone()).await;
        assert_eq!(opened.status, StatusCode::OK, "{}", opened.body);
        session(read.clone()).await.problem(403);
        let mut forged = body.clone();
        forged["signature"] = json!(format!("{:064}", 0));
        let reply = server
            .call(
                Method::POST,
                "/api/payment/hosted-page",
                Some(&write),
                Some(forged),
            )
            .await;
        assert!(reply.problem(400).contains_key("signature"));

        // Refunds: a write key refunds, a read key is refused, a revoked key is unknown.
        let url = open_order(&server, "hp-key-2", &receiver.url, json!({})).await;
        pay(&visitor(), &url, card("4242424242424242", "101")).await;
        let refund = |auth: String| {
            let server = &server;
            async move {
                server
                    .call(
                        Method::POST,
                        "/api/payment/refund",
                        Some(&auth),
                        Some(json!({"orderId": "hp-key-2", "amount": "1.00"})),
                    )
                    .await
            }
        };
        refund(read.clone()).await.problem(403);
        let refunded = refund(write.clone()).await;
        assert_eq!(refunded.status, StatusCode::CREATED, "{}", refunded.body);
        assert_eq!(refunded.body["transactionStatus"], "Success");
        assert_eq!(
            revoke(&server, &token, &write_id).await.status,
            StatusCode::NO_CONTENT
        );
        refund(write.clone()).await.problem(401);
        // An access token is not a merchant secret.
        refund(token.clone()).await.problem(401);
        let resync = server
            .call(
                Method::POST,
                "/api/webhook-resync?merchantOrderId=hp-key-2",
                Some(&read),
                None,
            )
            .await;
        resync.problem(403);
    }
);

backend_test!(
    the_secret_is_never_stored,
    |server: TestServer| async move {
        let token = server.token().await;
        let create = || {
            server
                .client
                .post(format!("{}{KEYS}", server.base_url))
                .bearer_auth(&token)
                .header("idempotency-key", "key-creation")
                .json(&json!({"name": "stored?", "scope": "write"}))
                .send()
        };
        let first = create().await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let first: Value = first.json().await.unwrap();
        let secret = first["secret"].as_str().unwrap().to_string();
        // A replay finds the same key, but its secret was shown once.
        let replay = create().await.unwrap();
        assert_eq!(replay.status(), StatusCode::CREATED);
        assert_eq!(replay.headers()["idempotent-replayed"], "true");
        let replay: Value = replay.json().await.unwrap();
        assert_eq!(replay["apiKeyId"], first["apiKeyId"]);
        assert_eq!(replay["secret"], Value::Null);

        let pool = server.server.state.store.pool();
        let rows: Vec<(i64, i64, String, String, String, String, i64)> = sqlx::query_as(
            "SELECT id, merchant_id, key_id, name, scope, secret_digest, created_at FROM api_keys",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        assert_eq!(rows.len(), 1);
        let row = format!("{:?}", rows[0]);
        assert!(!row.contains(&secret), "{row}");
        assert!(!row.contains(secret.trim_start_matches("rk_")), "{row}");
        assert_eq!(rows[0].5.len(), 64, "a hex HMAC-SHA256 digest");
        let remembered: Vec<Vec<u8>> =
            sqlx::query_scalar("SELECT response_body FROM idempotency_keys")
                .fetch_all(pool)
                .await
                .unwrap();
        assert!(!remembered.is_empty());
        for body in remembered {
            assert!(!String::from_utf8_lossy(&body).contains(&secret));
        }
    }
);

backend_test!(
    last_used_at_is_set_by_a_use,
    |server: TestServer| async move {
        let token = server.token().await;
        let (id, key) = new_key(&server, &token, "read").await;
        let (idle, _) = new_key(&server, &token, "read").await;
        let customer = server.create_customer(&token, "used@example.com").await;
        let before = live_keys(&server, &token).await;
        assert!(before.iter().all(|k| k["lastUsedAt"].is_null()));
        assert_eq!(
            get_customer(&server, &key, &customer).await.status,
            StatusCode::OK
        );
        // The use shows at once in the process that served it (the row follows, off the
        // request path, at most once a minute).
        let data = live_keys(&server, &token).await;
        let used = data.iter().find(|k| k["apiKeyId"] == id.as_str()).unwrap();
        let unused = data
            .iter()
            .find(|k| k["apiKeyId"] == idle.as_str())
            .unwrap();
        let last = used["lastUsedAt"].as_str().expect("lastUsedAt is set");
        assert!(last >= used["createdAt"].as_str().unwrap(), "{last}");
        assert!(unused["lastUsedAt"].is_null());

        // The row keeps one use a minute, whichever process records it.
        let store = &server.server.state.store;
        let merchant = server.merchant.merchant_id;
        let stored = || async {
            let micros: Option<i64> =
                sqlx::query_scalar("SELECT last_used_at FROM api_keys WHERE key_id = $1")
                    .bind(&idle)
                    .fetch_one(store.pool())
                    .await
                    .unwrap();
            micros.and_then(chrono::DateTime::from_timestamp_micros)
        };
        let t = chrono::Utc::now() + chrono::Duration::days(1);
        for (at, recorded) in [(0, 0), (59, 0), (60, 60), (61, 60), (200, 200)] {
            let at = t + chrono::Duration::seconds(at);
            api_keys::record_use(store, merchant, &idle, at)
                .await
                .unwrap();
            let expected = t + chrono::Duration::seconds(recorded);
            assert_eq!(
                stored().await.map(|d| d.timestamp()),
                Some(expected.timestamp())
            );
        }
        // Another merchant's use of the id changes nothing.
        api_keys::record_use(store, merchant + 1, &idle, t + chrono::Duration::days(1))
            .await
            .unwrap();
        assert_eq!(
            stored().await.map(|d| d.timestamp()),
            Some((t + chrono::Duration::seconds(200)).timestamp())
        );
    }
);

/// A revocation made by one process reaches another on the same PostgreSQL database within the
/// second its remembered keys live, plus one lookup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_refuses_a_revoked_key_within_a_second() {
    let first = TestServer::start(Backend::Postgres).await;
    let second = first.second_process().await;
    let token = first.token().await;
    let customer = first.create_customer(&token, "two@example.com").await;
    let (id, key) = new_key(&first, &token, "read").await;
    // The second process remembers the key.
    assert_eq!(
        get_customer(&second, &key, &customer).await.status,
        StatusCode::OK
    );
    assert_eq!(
        revoke(&first, &token, &id).await.status,
        StatusCode::NO_CONTENT
    );
    let revoked = Instant::now();
    while get_customer(&second, &key, &customer).await.status == StatusCode::OK {
        assert!(
            revoked.elapsed() < Duration::from_secs(3),
            "still accepted after {:?}",
            revoked.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
