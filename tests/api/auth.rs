//! `POST /auth`, bearer tokens and their forgeries, and the failed-login limiter.

use base64::Engine;
use reqwest::Method;
use serde_json::json;

use crate::backend_test;
use crate::fixtures::AUTH;
use crate::harness::{Backend, TestServer};

const JWT_KEY: [u8; 32] = [42; 32];

fn keys_setting() -> String {
    format!(
        "test:{}",
        base64::engine::general_purpose::STANDARD.encode(JWT_KEY)
    )
}

/// Signs claims with an independent JWT implementation.
fn forge(kid: &str, key: &[u8], claims: serde_json::Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some(kid.to_string());
    jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key),
    )
    .unwrap()
}

async fn get_customer_with(server: &TestServer, token: &str) -> crate::harness::Reply {
    server
        .call(
            Method::GET,
            "/api/subscriptions/v1/customer/cstmr_000000000000000000000000",
            Some(token),
            None,
        )
        .await
}

backend_test!(
    login_issues_a_bearer_token,
    |server: TestServer| async move {
        let reply = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/auth",
            None,
            Some(json!({"userName": server.merchant.user_name, "password": server.merchant.password})),
        )
        .await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body["tokenType"], "Bearer");
        assert_eq!(reply.body["expiresIn"], 900);
        let token = reply.body["accessToken"].as_str().unwrap();
        assert_eq!(token.split('.').count(), 3);
        // The token works: an unknown customer is a 404, not a 401.
        assert_eq!(get_customer_with(&server, token).await.status, 404);
    }
);

backend_test!(wrong_credentials_are_401, |server: TestServer| async move {
    for body in [
        json!({"userName": server.merchant.user_name, "password": "wrong"}),
        json!({"userName": "nobody", "password": server.merchant.password}),
    ] {
        let reply = server
            .call(Method::POST, "/api/subscriptions/v1/auth", None, Some(body))
            .await;
        reply.problem(401);
    }
    let reply = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/auth",
            None,
            Some(json!({})),
        )
        .await;
    let errors = reply.problem(400);
    assert!(errors.contains_key("userName") && errors.contains_key("password"));
});

backend_test!(
    failed_logins_are_rate_limited,
    |server: TestServer| async move {
        let wrong = json!({"userName": server.merchant.user_name, "password": "wrong"});
        for _ in 0..5 {
            let reply = server
                .call(
                    Method::POST,
                    "/api/subscriptions/v1/auth",
                    None,
                    Some(wrong.clone()),
                )
                .await;
            assert_eq!(reply.status, 401);
        }
        // Even the right password is refused while the user name is locked from this address.
        let right =
            json!({"userName": server.merchant.user_name, "password": server.merchant.password});
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/auth",
                None,
                Some(right),
            )
            .await;
        reply.problem(429);
        let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!(retry_after > 0 && retry_after <= 900);
        // Another merchant's login from the same address is still allowed (per-pair limit < per-address).
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        server.token_for(&other).await;
    }
);

backend_test!(
    missing_and_malformed_tokens_are_401,
    |server: TestServer| async move {
        for header in [
            None,
            Some("Bearer"),
            Some("Bearer not-a-jwt"),
            Some("Basic dXNlcjpwYXNz"),
        ] {
            let mut request = server.client.get(format!(
                "{}/api/subscriptions/v1/customer/cstmr_x",
                server.base_url
            ));
            if let Some(value) = header {
                request = request.header("authorization", value);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "{header:?}");
            assert_eq!(
                response.headers()["www-authenticate"],
                "Bearer error=\"invalid_token\""
            );
        }
    }
);

mod forged_tokens {
    use super::*;

    async fn check(backend: Backend) {
        let server = TestServer::start_with(backend, &[("RECUR_JWT_KEYS", &keys_setting())]).await;
        let now = chrono::Utc::now().timestamp();
        let id = server.merchant.merchant_id.to_string();
        let valid = json!({"sub": id, "iss": "recur", "iat": now, "exp": now + 600});
        // Control: the independent signer with the right key is accepted.
        assert_eq!(
            get_customer_with(&server, &forge("test", &JWT_KEY, valid.clone()))
                .await
                .status,
            404
        );

        let expired = json!({"sub": id, "iss": "recur", "iat": now - 1000, "exp": now - 10});
        let wrong_issuer = json!({"sub": id, "iss": "evil", "iat": now, "exp": now + 600});
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let alg_none = format!(
            "{}.{}.",
            b64.encode(r#"{"alg":"none","typ":"JWT","kid":"test"}"#),
            b64.encode(valid.to_string())
        );
        let genuine = forge("test", &JWT_KEY, valid.clone());
        let mut parts: Vec<String> = genuine.split('.').map(String::from).collect();
        parts[1] = b64.encode(
            json!({"sub": "999", "iss": "recur", "iat": now, "exp": now + 600}).to_string(),
        );
        let tampered = parts.join(".");
        for (what, token) in [
            ("expired", forge("test", &JWT_KEY, expired)),
            ("wrong key", forge("test", &[7; 32], valid.clone())),
            ("unknown kid", forge("other", &JWT_KEY, valid.clone())),
            ("wrong issuer", forge("test", &JWT_KEY, wrong_issuer)),
            ("alg none", alg_none),
            ("tampered payload", tampered),
        ] {
            let reply = get_customer_with(&server, &token).await;
            assert_eq!(reply.status, 401, "{what}");
            reply.problem(401);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        check(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        check(Backend::Postgres).await;
    }
}

/// A login from the loopback address `127.0.0.<host>` (Linux routes all of 127/8 to the
/// server's 127.0.0.1), so a test can log in from several client addresses.
async fn login_from(server: &TestServer, host: u8, password: &str) -> crate::harness::Reply {
    let client = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, host]))
        .build()
        .unwrap();
    let response = client
        .post(format!("{}{AUTH}", server.base_url))
        .json(&json!({"userName": server.merchant.user_name, "password": password}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(serde_json::Value::Null);
    crate::harness::Reply {
        status,
        headers,
        body,
    }
}

backend_test!(
    a_burst_of_wrong_logins_evaluates_at_most_the_limit,
    |server: TestServer| async move {
        let wrong = json!({"userName": server.merchant.user_name, "password": "wrong"});
        let replies = futures::future::join_all(
            (0..30).map(|_| server.call(Method::POST, AUTH, None, Some(wrong.clone()))),
        )
        .await;
        let mut evaluated = 0;
        for reply in &replies {
            if reply.status == 401 {
                evaluated += 1;
                continue;
            }
            reply.problem(429);
            let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
            assert!(retry_after > 0 && retry_after <= 900, "{retry_after}");
        }
        assert_eq!(evaluated, 5, "wrong passwords evaluated out of 30");
    }
);

backend_test!(
    failures_from_other_addresses_do_not_lock_out_a_known_address,
    |server: TestServer| async move {
        let password = server.merchant.password.clone();
        // The merchant's integration logs in from 127.0.0.1.
        assert_eq!(login_from(&server, 1, &password).await.status, 200);
        // Someone who knows the user name guesses from 20 addresses, 5 times each: the per-user
        // ceiling (100 in 15 minutes) is reached, and each address is locked for the user name.
        for host in 2..22 {
            let guesses = (0..5).map(|_| login_from(&server, host, "guess"));
            for reply in futures::future::join_all(guesses).await {
                reply.problem(401);
            }
        }
        assert_eq!(login_from(&server, 2, &password).await.status, 429);
        // A new address waits, even with the right password.
        let fresh = login_from(&server, 22, &password).await;
        fresh.problem(429);
        assert!(fresh.header("retry-after").is_some());
        // The merchant's own address still logs in.
        assert_eq!(login_from(&server, 1, &password).await.status, 200);
    }
);

backend_test!(
    tokens_of_merchants_that_do_not_exist_are_401,
    |server: TestServer| async move {
        let state = &server.server.state;
        let ghost = state.tokens.issue(999_999, state.clock.now()).unwrap();
        let token = server.token().await;
        let customer = server.create_customer(&token, "ada@example.com").await;
        let membership = server
            .create_membership(&token, server.membership_body(&customer, "order-1"))
            .await;
        let membership = membership["membershipKey"].as_str().unwrap().to_string();
        let v1 = "/api/subscriptions/v1";
        let calls = [
            (
                Method::POST,
                format!("{v1}/customer"),
                Some(server.customer_body("bob@example.com")),
            ),
            (
                Method::PUT,
                format!("{v1}/customer/phone"),
                Some(json!({"customerKey": customer, "phone": "+4915112345679"})),
            ),
            (Method::GET, format!("{v1}/customer/{customer}"), None),
            (
                Method::POST,
                format!("{v1}/membership"),
                Some(server.membership_body(&customer, "order-2")),
            ),
            (
                Method::PUT,
                format!("{v1}/membership"),
                Some(json!({"membershipKey": membership, "quantity": 2})),
            ),
            (Method::GET, format!("{v1}/membership/{membership}"), None),
            (
                Method::GET,
                format!("{v1}/membership/{membership}/events"),
                None,
            ),
            (Method::POST, format!("{v1}/events/evt_0/resend"), None),
            (
                Method::POST,
                format!("{v1}/membership/cancel/{membership}"),
                None,
            ),
            (
                Method::POST,
                format!("{v1}/test-helpers/payment-method"),
                Some(json!({"customerKey": customer, "cardNumber": "4242424242424242"})),
            ),
            (
                Method::POST,
                format!("{v1}/test-helpers/membership/{membership}/pay"),
                None,
            ),
            (
                Method::POST,
                format!("{v1}/checkout/session"),
                Some(json!({"customerKey": customer, "membershipKey": membership})),
            ),
            (
                Method::POST,
                format!("{v1}/portal/session"),
                Some(json!({"customerKey": customer})),
            ),
            (Method::GET, format!("{v1}/test-clock"), None),
            (
                Method::POST,
                format!("{v1}/test-clock/advance"),
                Some(json!({"to": "2031-01-01T00:00:00Z"})),
            ),
        ];
        for (method, path, body) in calls {
            for idempotency_key in [None, Some("ghost-1")] {
                let mut request = server
                    .client
                    .request(method.clone(), format!("{}{path}", server.base_url))
                    .bearer_auth(&ghost);
                if let Some(body) = &body {
                    request = request.json(body);
                }
                if let Some(key) = idempotency_key {
                    request = request.header("idempotency-key", key);
                }
                let response = request.send().await.unwrap();
                let what = format!("{method} {path} {idempotency_key:?}");
                assert_eq!(response.status(), 401, "{what}");
                assert_eq!(
                    response.headers()["www-authenticate"],
                    "Bearer error=\"invalid_token\"",
                    "{what}"
                );
                assert_eq!(
                    response.headers()["content-type"],
                    "application/problem+json",
                    "{what}"
                );
            }
        }
        // Nothing was written for the merchant that does not exist.
        let idempotency_rows: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM idempotency_keys WHERE merchant_id = 999999")
                .fetch_one(state.store.pool())
                .await
                .unwrap();
        assert_eq!(idempotency_rows, 0);
        // The real merchant's token still works on the same paths.
        assert_eq!(get_customer_with(&server, &token).await.status, 404);
    }
);

backend_test!(
    a_token_is_accepted_once_its_merchant_exists,
    |server: TestServer| async move {
        let state = &server.server.state;
        let next_id = server.merchant.merchant_id + 1;
        let early = state.tokens.issue(next_id, state.clock.now()).unwrap();
        get_customer_with(&server, &early).await.problem(401);
        let created = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        assert_eq!(created.merchant_id, next_id);
        // The refusal was not remembered: an unknown customer is now a 404.
        assert_eq!(get_customer_with(&server, &early).await.status, 404);
    }
);
