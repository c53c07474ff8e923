//! `POST /api/payment/hosted-page`: secret, signature, replay window, every field rule.

use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::cashier::{body, post, sign};
use crate::harness::TestServer;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

backend_test!(
    a_signed_request_opens_a_session,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        let reply = post(&server, Some(&secret), &body("order/1 ü", now(), &secret)).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let redirect = url::Url::parse(reply.body["redirectUrl"].as_str().unwrap()).unwrap();
        assert_eq!(
            format!(
                "{}{}",
                &redirect[..url::Position::BeforePath],
                redirect.path()
            ),
            format!("{}/cashier", server.base_url)
        );
        let query: std::collections::HashMap<_, _> = redirect.query_pairs().into_owned().collect();
        assert!(query["sessionToken"].starts_with("hp-") && query["sessionToken"].len() > 20);
        assert_eq!(query["m_orderId"], "order/1 ü");

        // A repeated order id returns the open session; another order gets another.
        let again = post(&server, Some(&secret), &body("order/1 ü", now(), &secret)).await;
        assert_eq!(again.body["redirectUrl"], reply.body["redirectUrl"]);
        let other = post(&server, Some(&secret), &body("order-2", now(), &secret)).await;
        assert_ne!(other.body["redirectUrl"], reply.body["redirectUrl"]);

        // The token is not stored in the clear.
        let clear: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM cashier_sessions WHERE token_sealed LIKE '%hp-%' OR token_digest LIKE 'hp-%'")
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        assert_eq!(clear, 0);
    }
);

backend_test!(
    the_merchant_secret_is_required,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        post(&server, None, &body("o", now(), &secret))
            .await
            .problem(401);
        post(&server, Some("msk_wrong"), &body("o", now(), "msk_wrong"))
            .await
            .problem(401);
        // After a rotation the old secret no longer works.
        let new_secret =
            recur::merchants::rotate_secret(&server.server.state, &server.merchant.user_name)
                .await
                .unwrap();
        post(&server, Some(&secret), &body("o", now(), &secret))
            .await
            .problem(401);
        assert_eq!(
            post(&server, Some(&new_secret), &body("o", now(), &new_secret))
                .await
                .status,
            200
        );
    }
);

backend_test!(signature_must_match, |server: TestServer| async move {
    let secret = server.merchant.merchant_secret.clone();
    let mut wrong = body("o", now(), &secret);
    wrong["signature"] = json!(sign(
        "payer@example.com",
        &now().to_string(),
        "another-secret"
    ));
    assert!(post(&server, Some(&secret), &wrong)
        .await
        .problem(400)
        .contains_key("signature"));
    let mut tampered = body("o", now(), &secret);
    tampered["billingDetails"]["email"] = json!("thief@example.com");
    assert!(post(&server, Some(&secret), &tampered)
        .await
        .problem(400)
        .contains_key("signature"));
    let mut upper = body("o", now(), &secret);
    upper["signature"] = json!(upper["signature"].as_str().unwrap().to_uppercase());
    assert_eq!(post(&server, Some(&secret), &upper).await.status, 200);
});

backend_test!(
    timestamp_must_be_within_15_minutes,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        for (offset, ok) in [
            (-16 * 60, false),
            (-14 * 60, true),
            (14 * 60, true),
            (16 * 60, false),
        ] {
            let reply = post(
                &server,
                Some(&secret),
                &body(&format!("o{offset}"), now() + offset, &secret),
            )
            .await;
            if ok {
                assert_eq!(reply.status, 200, "{offset}: {}", reply.body);
            } else {
                assert!(reply.problem(400).contains_key("timestamp"), "{offset}");
            }
        }
        let mut numeric = body("num", now(), &secret);
        numeric["timestamp"] = json!(now());
        numeric["signature"] = json!(sign("payer@example.com", &now().to_string(), &secret));
        assert_eq!(post(&server, Some(&secret), &numeric).await.status, 200);
    }
);

backend_test!(
    each_field_rule_passes_and_fails,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        let long = "d".repeat(1024);
        let too_long = "d".repeat(1025);
        // (path in body, error path, good values, bad values)
        let cases: Vec<(&str, &str, Vec<Value>, Vec<Value>)> = vec![
            (
                "billingDetails.country",
                "billingDetails.country",
                vec![json!("gb")],
                vec![json!("XX"), json!("DEU"), json!(null)],
            ),
            (
                "billingDetails.currency",
                "billingDetails.currency",
                vec![json!("usd")],
                vec![json!("ABC"), json!("EU"), json!(null)],
            ),
            (
                "billingDetails.dateOfBirth",
                "billingDetails.dateOfBirth",
                vec![json!("2000-02-29")],
                vec![
                    json!("1990-13-01"),
                    json!("10-12-1990"),
                    json!("2999-01-01"),
                ],
            ),
            (
                "billingDetails.gender",
                "billingDetails.gender",
                vec![json!("Male"), json!("female")],
                vec![json!("Other"), json!(1)],
            ),
            (
                "billingDetails.phone",
                "billingDetails.phone",
                vec![json!("+12345678")],
                vec![json!("12345"), json!("+0123456789"), json!(null)],
            ),
            (
                "billingDetails.lockedAmount",
                "billingDetails.lockedAmount",
                vec![json!("10.50"), json!(10), json!(null)],
                vec![json!("1.234"), json!(0), json!(-5), json!("ten")],
            ),
            (
                "billingDetails.firstName",
                "billingDetails.firstName",
                vec![json!("Ada Lovelace")],
                vec![json!(""), json!(null)],
            ),
            (
                "cashierDescription",
                "cashierDescription",
                vec![json!(long)],
                vec![json!(too_long)],
            ),
            (
                "webhookUrl",
                "webhookUrl",
                vec![json!(null)],
                vec![json!("http://merchant.example.com/h"), json!("/relative")],
            ),
            (
                "successRedirectUrl",
                "successRedirectUrl",
                vec![json!("http://shop.example/ok")],
                vec![json!("javascript:alert(1)")],
            ),
            (
                "disabledPspIds",
                "disabledPspIds",
                vec![json!([]), json!([1, 2])],
                vec![json!(["a"]), json!(5)],
            ),
            (
                "creditCardOnly",
                "creditCardOnly",
                vec![json!(true)],
                vec![json!("yes")],
            ),
            ("isPayOut", "isPayOut", vec![json!(true)], vec![json!(1)]),
            (
                "orderId",
                "orderId",
                vec![json!("A-1")],
                vec![json!(""), json!(null), json!(7)],
            ),
        ];
        for (n, (path, error_path, good, bad)) in cases.into_iter().enumerate() {
            let set = |value: &Value, order: String| {
                let mut b = body(&order, now(), &secret);
                let mut target = &mut b;
                let parts: Vec<&str> = path.split('.').collect();
                for part in &parts[..parts.len() - 1] {
                    target = &mut target[*part];
                }
                target[parts[parts.len() - 1]] = value.clone();
                b
            };
            for (i, value) in good.iter().enumerate() {
                let order = if path == "orderId" {
                    value.as_str().unwrap().to_string()
                } else {
                    format!("good-{n}-{i}")
                };
                let reply = post(&server, Some(&secret), &set(value, order)).await;
                assert_eq!(reply.status, 200, "{path} = {value}: {}", reply.body);
            }
            for value in &bad {
                let reply = post(&server, Some(&secret), &set(value, format!("bad-{n}"))).await;
                let errors = reply.problem(400);
                assert!(
                    errors.contains_key(error_path),
                    "{path} = {value}: {}",
                    reply.body
                );
                assert_eq!(
                    errors.len(),
                    1,
                    "only {path} fails for {value}: {}",
                    reply.body
                );
            }
        }
    }
);

backend_test!(
    every_failing_field_is_listed,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        let reply = post(
            &server,
            Some(&secret),
            &json!({"billingDetails": {"country": "XX"}, "cashierDescription": "d".repeat(2000)}),
        )
        .await;
        let errors = reply.problem(400);
        for field in [
            "timestamp",
            "signature",
            "orderId",
            "cashierDescription",
            "billingDetails.firstName",
            "billingDetails.email",
            "billingDetails.country",
            "billingDetails.phone",
            "billingDetails.currency",
        ] {
            assert!(
                errors.contains_key(field),
                "{field} missing from {}",
                reply.body
            );
        }
        assert_eq!(
            reply.body["title"],
            "One or more validation errors occurred."
        );
    }
);

backend_test!(
    a_repeated_order_must_repeat_its_values,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        let first = post(&server, Some(&secret), &body("order-r", now(), &secret)).await;
        assert_eq!(first.status, 200, "{}", first.body);
        let url = first.body["redirectUrl"].clone();

        // The same values, written differently, are the same session.
        let mut same = body("order-r", now() - 1, &secret);
        same["billingDetails"]["lockedAmount"] = json!("49.90");
        same["billingDetails"]["currency"] = json!("eur");
        same["successRedirectUrl"] = json!("https://SHOP.example.com/ok");
        same["disabledPspIds"] = json!([3, 3]);
        let again = post(&server, Some(&secret), &same).await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(again.body["redirectUrl"], url);

        // Another amount, currency, URL or mode is another order: 409 on orderId, never the old
        // session with the old values.
        let cases = [
            (
                "/billingDetails/lockedAmount",
                json!(50),
                "billingDetails.lockedAmount",
            ),
            (
                "/billingDetails/lockedAmount",
                json!(null),
                "billingDetails.lockedAmount",
            ),
            (
                "/billingDetails/currency",
                json!("USD"),
                "billingDetails.currency",
            ),
            (
                "/successRedirectUrl",
                json!("https://shop.example.com/paid"),
                "successRedirectUrl",
            ),
            ("/failedRedirectUrl", json!(null), "failedRedirectUrl"),
            (
                "/webhookUrl",
                json!("https://merchant.example.com/other"),
                "webhookUrl",
            ),
            ("/isPayOut", json!(true), "isPayOut"),
            (
                "/billingDetails/phone",
                json!("+4915100000000"),
                "billingDetails.phone",
            ),
        ];
        for (pointer, value, path) in cases {
            let mut changed = body("order-r", now(), &secret);
            *changed.pointer_mut(pointer).unwrap() = value.clone();
            let reply = post(&server, Some(&secret), &changed).await;
            let errors = reply.problem(409);
            assert_eq!(errors.len(), 1, "{}", reply.body);
            let message = errors["orderId"][0].as_str().unwrap();
            assert!(
                message.starts_with(&format!("has an open session with other values ({path})")),
                "{pointer} = {value}: {message}"
            );
        }
        let again = post(&server, Some(&secret), &body("order-r", now(), &secret)).await;
        assert_eq!(
            again.body["redirectUrl"], url,
            "the open session is unchanged"
        );

        // Once its hour is over, the order gets a new session with the new values.
        sqlx::query(
            "UPDATE cashier_sessions SET expires_at = expires_at - 3600000000 \
             WHERE order_id = $1",
        )
        .bind("order-r")
        .execute(server.server.state.store.pool())
        .await
        .unwrap();
        let mut changed = body("order-r", now(), &secret);
        changed["billingDetails"]["lockedAmount"] = json!(50);
        let reply = post(&server, Some(&secret), &changed).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_ne!(reply.body["redirectUrl"], url);
        let amounts: Vec<Option<i64>> = sqlx::query_scalar(
            "SELECT locked_amount FROM cashier_sessions WHERE order_id = $1 ORDER BY id",
        )
        .bind("order-r")
        .fetch_all(server.server.state.store.pool())
        .await
        .unwrap();
        assert_eq!(amounts, [Some(4990), Some(5000)]);
    }
);
