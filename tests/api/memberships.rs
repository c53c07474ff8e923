//! Membership operations over HTTP: every create and update rule (pass and fail), idempotency
//! by order id (and its race), tenant isolation, cancel, and the sandbox-only helpers.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::create_raw;
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;
use recur::store::merchants::Mode;

/// Sets the JSON pointer `path` of `body` to `value`.
fn with(mut body: Value, path: &str, value: Value) -> Value {
    match body.pointer_mut(path) {
        Some(slot) => *slot = value,
        None => body[path.trim_start_matches('/')] = value,
    }
    body
}

backend_test!(
    create_returns_an_incomplete_membership,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m1@example.com").await;
        let record = server
            .create_membership(&token, server.membership_body(&customer, "order-1"))
            .await;
        let key = record["membershipKey"].as_str().unwrap();
        assert!(key.starts_with("mmbrshp_") && key.len() == 8 + 24, "{key}");
        assert_eq!(record["status"], "Incomplete");
        assert_eq!(record["customerKey"], customer.as_str());
        assert_eq!(record["pricingInfo"]["totalAmount"], "29.97");
        assert_eq!(record["pricingInfo"]["pricePerUnit"], "9.99");
        assert_eq!(record["pricingInfo"]["quantity"], 3);
        assert_eq!(record["billingCycle"]["intervalType"], "Monthly");
        assert_eq!(record["productInfo"]["orderId"], "order-1");
        assert_eq!(record["creditBalance"], "0.00");
        assert_eq!(record["currentPeriodStart"], Value::Null);
        assert_eq!(record["nextBillingDate"], Value::Null);
        assert_eq!(record["invoices"], json!([]));
        let read = server.membership(&token, key).await;
        assert_eq!(read, record);
    }
);

backend_test!(
    every_create_rule_fails_at_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = json!({
            "customerKey": "customer-1",
            "subscriptionName": "x".repeat(251),
            "endDate": "2020-01-01T00:00:00",
            "webhookUrl": "http://merchant.example/hooks",
            "metadata": 5,
            "chargeEmitterQueue": [{"transactionStatus": "Maybe"}, 7],
            "productInfo": {"description": "no order id"},
            "pricingInfo": {"currency": "EUX", "totalAmount": "-1", "pricePerUnit": 0, "quantity": 0},
            "billingCycle": {"intervalType": "Hourly", "intervalCount": 0}
        });
        let reply = create_raw(&server, &token, body).await;
        let errors = reply.problem(400);
        for path in [
            "customerKey",
            "subscriptionName",
            "endDate",
            "webhookUrl",
            "metadata",
            "chargeEmitterQueue[0].transactionStatus",
            "chargeEmitterQueue[1]",
            "productInfo.orderId",
            "pricingInfo.currency",
            "pricingInfo.quantity",
            "billingCycle.intervalType",
            "billingCycle.intervalCount",
        ] {
            assert!(errors.contains_key(path), "{path} missing in {errors:?}");
        }
    }
);

backend_test!(amount_rules, |server: TestServer| async move {
    let token = server.token().await;
    let customer = server.create_customer(&token, "m2@example.com").await;
    let base = server.membership_body(&customer, "order-amounts");
    let cases: Vec<(Value, &str)> = vec![
        (
            with(base.clone(), "/pricingInfo/totalAmount", json!("0")),
            "pricingInfo.totalAmount",
        ),
        (
            with(base.clone(), "/pricingInfo/totalAmount", json!("29.970")),
            "pricingInfo.totalAmount",
        ),
        (
            with(base.clone(), "/pricingInfo/totalAmount", json!("29.98")),
            "pricingInfo.totalAmount",
        ),
        (
            with(base.clone(), "/pricingInfo/totalAmount", json!("abc")),
            "pricingInfo.totalAmount",
        ),
        (
            with(base.clone(), "/pricingInfo/pricePerUnit", json!(-1)),
            "pricingInfo.pricePerUnit",
        ),
        (
            with(base.clone(), "/pricingInfo/pricePerUnit", json!(9.991)),
            "pricingInfo.pricePerUnit",
        ),
        (
            with(base.clone(), "/pricingInfo/quantity", json!(1.5)),
            "pricingInfo.quantity",
        ),
        (
            with(base.clone(), "/pricingInfo/currency", json!("XXX")),
            "pricingInfo.currency",
        ),
        (
            with(base.clone(), "/chargeEmitterQueue", json!([])),
            "chargeEmitterQueue",
        ),
        (json!({"customerKey": customer}), "pricingInfo"),
    ];
    for (body, path) in cases {
        let reply = create_raw(&server, &token, body.clone()).await;
        let errors = reply.problem(400);
        assert!(
            errors.contains_key(path),
            "{path} not in {errors:?} for {body}"
        );
    }
    // JPY has no decimals, BHD three; case-insensitive codes; pricePerUnit as a string.
    let jpy = with(
        with(
            base.clone(),
            "/pricingInfo",
            json!({"currency": "jpy", "totalAmount": "3000", "pricePerUnit": "1000", "quantity": 3}),
        ),
        "/productInfo/orderId",
        json!("order-jpy"),
    );
    let record = server.create_membership(&token, jpy).await;
    assert_eq!(record["pricingInfo"]["currency"], "JPY");
    assert_eq!(record["pricingInfo"]["totalAmount"], "3000");
    let bhd = with(
        with(
            base.clone(),
            "/pricingInfo",
            json!({"currency": "BHD", "totalAmount": "10.125"}),
        ),
        "/productInfo/orderId",
        json!("order-bhd"),
    );
    let record = server.create_membership(&token, bhd).await;
    assert_eq!(record["pricingInfo"]["totalAmount"], "10.125");
    assert_eq!(record["pricingInfo"]["pricePerUnit"], Value::Null);
    // A JSON number no amount can hold is named as such, not as "not a number".
    for number in [json!(5e-324), json!(3.1e300)] {
        let body = with(base.clone(), "/pricingInfo/pricePerUnit", number);
        let reply = create_raw(&server, &token, body).await;
        assert_eq!(
            reply.problem(400)["pricingInfo.pricePerUnit"],
            json!(["is too large or has too many decimal places"])
        );
    }
    // A large JSON number is written in exponent notation (`1e16`); it is a number like any other,
    // here one above the largest amount (15 digits in minor units), and said to be so.
    let exponent = with(
        base.clone(),
        "/pricingInfo",
        json!({"currency": "JPY", "totalAmount": "999999999999999", "pricePerUnit": 1e16, "quantity": 1}),
    );
    let reply = create_raw(&server, &token, exponent).await;
    assert_eq!(
        reply.problem(400)["pricingInfo.pricePerUnit"],
        json!(["must be at most 999999999999999"])
    );
    let jpy_decimals = with(
        with(
            base,
            "/pricingInfo",
            json!({"currency": "JPY", "totalAmount": "10.5"}),
        ),
        "/productInfo/orderId",
        json!("order-jpy-2"),
    );
    create_raw(&server, &token, jpy_decimals).await.problem(400);
});

backend_test!(
    optional_fields_and_defaults,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m3@example.com").await;
        let mut body = server.membership_body(&customer, "order-defaults");
        body["billingCycle"] = json!({"intervalType": "weekly"});
        body["chargeEmitterQueue"] = json!([{"transactionStatus": "rejected"}, {"transactionStatus": "SUCCESS"}, {"transactionStatus": "Rejected", "description": "Do not honor."}]);
        // Every field of endDate has its full width, as the schema's pattern says.
        body["endDate"] = json!("2099-1-1T00:00:00Z");
        let reply = create_raw(&server, &token, body.clone()).await;
        assert!(reply.problem(400).contains_key("endDate"), "{}", reply.body);
        body["endDate"] = json!("2099-01-01T00:00:00Z");
        let record = server.create_membership(&token, body).await;
        assert_eq!(
            record["billingCycle"],
            json!({"intervalType": "Weekly", "intervalCount": 1})
        );
        assert_eq!(record["endDate"], "2099-01-01T00:00:00Z");
        assert_eq!(
            record["chargeEmitterQueue"],
            json!([
                {"transactionStatus": "Rejected", "description": "Insufficient funds."},
                {"transactionStatus": "Success", "description": null},
                {"transactionStatus": "Rejected", "description": "Do not honor."}
            ])
        );
    }
);

backend_test!(
    create_is_idempotent_by_order_id_per_customer,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m4@example.com").await;
        let other = server.create_customer(&token, "m5@example.com").await;
        let first = server
            .create_membership(&token, server.membership_body(&customer, "order-dup"))
            .await;
        let mut changed = server.membership_body(&customer, "order-dup");
        changed["subscriptionName"] = json!("Another name");
        let again = create_raw(&server, &token, changed).await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(again.body["membershipKey"], first["membershipKey"]);
        assert_eq!(again.body["subscriptionName"], "Gold plan");
        // The same order id for another customer is another membership.
        let theirs = server
            .create_membership(&token, server.membership_body(&other, "order-dup"))
            .await;
        assert_ne!(theirs["membershipKey"], first["membershipKey"]);
    }
);

backend_test!(
    concurrent_creates_return_one_key,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m6@example.com").await;
        let body = server.membership_body(&customer, "order-race");
        let replies =
            futures::future::join_all((0..8).map(|_| create_raw(&server, &token, body.clone())))
                .await;
        let mut keys: Vec<String> = replies
            .iter()
            .map(|r| {
                assert!(
                    r.status == 201 || r.status == 200,
                    "{} {}",
                    r.status,
                    r.body
                );
                r.body["membershipKey"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(replies.iter().filter(|r| r.status == 201).count(), 1);
        keys.dedup();
        assert_eq!(keys.len(), 1);
    }
);

backend_test!(
    memberships_are_isolated_by_merchant,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m7@example.com").await;
        let record = server
            .create_membership(&token, server.membership_body(&customer, "order-iso"))
            .await;
        let key = record["membershipKey"].as_str().unwrap();
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        for (method, path, body) in [
            (Method::GET, format!("{MEMBERSHIP}/{key}"), None),
            (Method::POST, format!("{MEMBERSHIP}/cancel/{key}"), None),
            (
                Method::PUT,
                MEMBERSHIP.to_string(),
                Some(json!({"membershipKey": key, "name": "Mine"})),
            ),
            (
                Method::POST,
                format!("/api/subscriptions/v1/test-helpers/membership/{key}/pay"),
                None,
            ),
        ] {
            let reply = server.call(method, &path, Some(&other_token), body).await;
            reply.problem(404);
        }
        // Another merchant's customer cannot own a membership of this merchant.
        let reply = create_raw(
            &server,
            &other_token,
            server.membership_body(&customer, "x"),
        )
        .await;
        assert!(reply.problem(400).contains_key("customerKey"));
    }
);

backend_test!(update_rules, |server: TestServer| async move {
    let token = server.token().await;
    let customer = server.create_customer(&token, "m8@example.com").await;
    let record = server
        .create_membership(&token, server.membership_body(&customer, "order-upd"))
        .await;
    let key = record["membershipKey"].as_str().unwrap();
    let reply = server
        .call(
            Method::PUT,
            MEMBERSHIP,
            Some(&token),
            Some(json!({
                "membershipKey": key,
                "name": "",
                "endDate": "yesterday",
                "pricePerUnit": "-3",
                "quantity": "zero",
                "intervalType": "Hourly",
                "intervalCount": "0",
                "returnToWebsiteLink": "ftp://merchant.example",
                "metadata": []
            })),
        )
        .await;
    let errors = reply.problem(400);
    for path in [
        "name",
        "endDate",
        "pricePerUnit",
        "quantity",
        "intervalType",
        "intervalCount",
        "returnToWebsiteLink",
        "metadata",
    ] {
        assert!(errors.contains_key(path), "{path} missing in {errors:?}");
    }
    let reply = server
        .call(
            Method::PUT,
            MEMBERSHIP,
            Some(&token),
            Some(json!({"membershipKey": "abc"})),
        )
        .await;
    assert!(reply.problem(400).contains_key("membershipKey"));
    let reply = server
        .call(
            Method::PUT,
            MEMBERSHIP,
            Some(&token),
            Some(json!({"membershipKey": "mmbrshp_unknown"})),
        )
        .await;
    reply.problem(404);
    // Odd declared types are accepted in their natural JSON form and as numeric strings.
    let reply = server
        .call(
            Method::PUT,
            MEMBERSHIP,
            Some(&token),
            Some(json!({
                "membershipKey": key,
                "name": "Platinum",
                "pricePerUnit": "12.50",
                "quantity": "2",
                "intervalType": "Annually",
                "intervalCount": "2",
                "metadata": "crm-43",
                "returnToWebsiteLink": "https://merchant.example/account"
            })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let m = &reply.body["membership"];
    assert_eq!(m["subscriptionName"], "Platinum");
    assert_eq!(m["pricingInfo"]["totalAmount"], "25.00");
    assert_eq!(
        m["billingCycle"],
        json!({"intervalType": "Annually", "intervalCount": 2})
    );
    assert_eq!(m["returnToWebsiteLink"], "https://merchant.example/account");
    // Incomplete: nothing was paid at the old terms, so nothing is prorated.
    assert_eq!(reply.body["proration"], Value::Null);
    let events = server
        .count(
            "SELECT COUNT(*) FROM events WHERE action = 'SUBSCRIPTION_UPDATED' AND order_id = $1",
            "order-upd",
        )
        .await;
    assert_eq!(events, 1);
});

backend_test!(
    cancel_is_immediate_and_idempotent,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "m9@example.com").await;
        let record = server
            .create_membership(&token, server.membership_body(&customer, "order-cancel"))
            .await;
        let key = record["membershipKey"].as_str().unwrap();
        let path = format!("{MEMBERSHIP}/cancel/{key}");
        let first = server.call(Method::POST, &path, Some(&token), None).await;
        assert_eq!(first.status, 200, "{}", first.body);
        assert_eq!(first.body["status"], "Canceled");
        assert!(first.body["canceledAt"].is_string());
        let again = server.call(Method::POST, &path, Some(&token), None).await;
        assert_eq!(again.status, 200);
        assert_eq!(again.body["canceledAt"], first.body["canceledAt"]);
        let update = server
            .call(
                Method::PUT,
                MEMBERSHIP,
                Some(&token),
                Some(json!({"membershipKey": key, "name": "Back"})),
            )
            .await;
        update.problem(409);
        let pay = server.pay(&token, key).await;
        pay.problem(409);
        let events = server
        .count("SELECT COUNT(*) FROM events WHERE action = 'SUBSCRIPTION_STATUS_CHANGED' AND order_id = $1", "order-cancel")
        .await;
        assert_eq!(events, 1, "one status change, not one per cancel call");
    }
);

backend_test!(
    sandbox_helpers_are_refused_to_live_merchants,
    |server: TestServer| async move {
        let live = server.another_merchant(Mode::Live).await;
        let token = server.token_for(&live).await;
        for (method, path, body) in [
            (Method::GET, "/api/subscriptions/v1/test-clock", None),
            (
                Method::POST,
                "/api/subscriptions/v1/test-clock/advance",
                Some(json!({"to": "2030-01-01T00:00:00Z"})),
            ),
            (
                Method::POST,
                "/api/subscriptions/v1/test-helpers/payment-method",
                Some(json!({"customerKey": "cstmr_x", "cardNumber": "4242424242424242"})),
            ),
            (
                Method::POST,
                "/api/subscriptions/v1/test-helpers/membership/mmbrshp_x/pay",
                None,
            ),
        ] {
            server
                .call(method, path, Some(&token), body)
                .await
                .problem(403);
        }
    }
);

backend_test!(
    test_clock_moves_only_forward,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2031-05-01T00:00:00Z").await;
        let reply = server
            .call(
                Method::GET,
                "/api/subscriptions/v1/test-clock",
                Some(&token),
                None,
            )
            .await;
        assert_eq!(reply.body["now"], "2031-05-01T00:00:00Z");
        let back = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/test-clock/advance",
                Some(&token),
                Some(json!({"to": "2031-04-30T23:59:59Z"})),
            )
            .await;
        assert!(back.problem(400).contains_key("to"));
        let garbage = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/test-clock/advance",
                Some(&token),
                Some(json!({"to": "soon"})),
            )
            .await;
        assert!(garbage.problem(400).contains_key("to"));
        // endDate is checked against the merchant's clock.
        let customer = server.create_customer(&token, "m10@example.com").await;
        let mut body = server.membership_body(&customer, "order-clock");
        body["endDate"] = json!("2031-05-01T00:59:59");
        assert!(create_raw(&server, &token, body.clone())
            .await
            .problem(400)
            .contains_key("endDate"));
        body["endDate"] = json!("2031-05-01T01:00:00");
        let created = server.create_membership(&token, body).await;
        assert_eq!(
            created["createdAt"], "2031-05-01T00:00:00Z",
            "created at the merchant's clock"
        );
    }
);

backend_test!(attach_card_rules, |server: TestServer| async move {
    let token = server.token().await;
    let customer = server.create_customer(&token, "m11@example.com").await;
    let path = "/api/subscriptions/v1/test-helpers/payment-method";
    let reply = server
        .call(
            Method::POST,
            path,
            Some(&token),
            Some(json!({"customerKey": "cstmr_nobody", "cardNumber": "4242424242424241"})),
        )
        .await;
    let errors = reply.problem(400);
    assert!(errors.contains_key("customerKey") && errors.contains_key("cardNumber"));
    let reply = server
        .call(
            Method::POST,
            path,
            Some(&token),
            Some(json!({"customerKey": customer, "cardNumber": "4242 4242 4242 4242"})),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["brand"], "Visa");
    assert_eq!(reply.body["last4"], "4242");
    assert!(reply.body["paymentMethodId"]
        .as_str()
        .unwrap()
        .starts_with("pm_"));
    // The card number is not stored anywhere, only BIN and last four digits.
    let stored = server
        .count("SELECT COUNT(*) FROM payment_methods WHERE bin = '424242' AND last4 = '4242' AND processor_token LIKE $1", "sbx_tok_%")
        .await;
    assert_eq!(stored, 1);
});
