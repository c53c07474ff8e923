//! Transport-level failures are problem documents too: malformed JSON, wrong content type,
//! oversized body, unknown route, wrong method, text holding U+0000.

use reqwest::Method;
use serde_json::json;

use crate::backend_test;
use crate::fixtures::CUSTOMER;
use crate::harness::TestServer;

backend_test!(
    malformed_and_misshapen_json_is_400,
    |server: TestServer| async move {
        let token = server.token().await;
        for body in [
            &b"{bad"[..],
            b"",
            b"[1,2]",
            b"\"text\"",
            b"{\"email\": \"a@b.co\"",
        ] {
            let reply = server
                .call_raw(
                    Method::POST,
                    CUSTOMER,
                    Some(&token),
                    "application/json",
                    body.to_vec(),
                )
                .await;
            let errors = reply.problem(400);
            assert!(errors.contains_key("$"), "{}", reply.body);
        }
    }
);

backend_test!(wrong_content_type_is_415, |server: TestServer| async move {
    let token = server.token().await;
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
    ] {
        let reply = server
            .call_raw(
                Method::POST,
                CUSTOMER,
                Some(&token),
                content_type,
                b"{}".to_vec(),
            )
            .await;
        reply.problem(415);
    }
    // A charset parameter is fine.
    let reply = server
        .call_raw(
            Method::POST,
            CUSTOMER,
            Some(&token),
            "application/json; charset=utf-8",
            b"{}".to_vec(),
        )
        .await;
    reply.problem(400);
});

backend_test!(oversized_body_is_413, |server: TestServer| async move {
    let token = server.token().await;
    let mut body = b"{\"address1\": \"".to_vec();
    body.extend(std::iter::repeat_n(b'x', 300 * 1024));
    body.extend(b"\"}");
    let reply = server
        .call_raw(
            Method::POST,
            CUSTOMER,
            Some(&token),
            "application/json",
            body,
        )
        .await;
    reply.problem(413);
});

backend_test!(
    unknown_route_and_wrong_method,
    |server: TestServer| async move {
        let token = server.token().await;
        server
            .call(
                Method::GET,
                "/api/subscriptions/v1/nothing-here",
                Some(&token),
                None,
            )
            .await
            .problem(404);
        server.call(Method::GET, "/", None, None).await.problem(404);
        let reply = server
            .call(Method::DELETE, CUSTOMER, Some(&token), None)
            .await;
        reply.problem(405);
        assert_eq!(reply.header("allow"), Some("POST"));
    }
);

backend_test!(
    auth_is_checked_before_the_body,
    |server: TestServer| async move {
        let reply = server
            .call_raw(
                Method::POST,
                CUSTOMER,
                None,
                "application/json",
                b"{bad".to_vec(),
            )
            .await;
        reply.problem(401);
    }
);

backend_test!(
    nul_characters_are_refused_wherever_text_enters,
    |server: TestServer| async move {
        // PostgreSQL cannot store U+0000 and SQLite can: both must refuse it the same way, by
        // naming the field, before any statement runs.
        let token = server.token().await;
        let nul_message = |reply: &crate::harness::Reply, field: &str| {
            let errors = reply.problem(400);
            assert_eq!(
                errors[field],
                json!(["must not contain the character U+0000"]),
                "{}",
                reply.body
            );
        };
        let login = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/auth",
                None,
                Some(json!({"userName": "demo\u{0}", "password": "secret"})),
            )
            .await;
        nul_message(&login, "userName");

        let mut customer = server.customer_body("nul@example.com");
        customer["lastName"] = json!("Nul\u{0}");
        let reply = server
            .call(Method::POST, CUSTOMER, Some(&token), Some(customer))
            .await;
        nul_message(&reply, "lastName");

        let customer_key = server.create_customer(&token, "nul@example.com").await;
        let mut membership = server.membership_body(&customer_key, "nul-order");
        membership["productInfo"]["orderId"] = json!("nul\u{0}order");
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(membership),
            )
            .await;
        nul_message(&reply, "productInfo.orderId");

        // A key holding it names nothing; a query parameter or form field holding it is named.
        let reply = server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{customer_key}%00"),
                Some(&token),
                None,
            )
            .await;
        reply.problem(404);
        let reply = server
            .call(Method::GET, "/cashier?sessionToken=hp-%00", None, None)
            .await;
        nul_message(&reply, "sessionToken");
        let reply = server
            .call_raw(
                Method::POST,
                "/checkout/ck-unknown",
                None,
                "application/x-www-form-urlencoded",
                b"csrfToken=x&holder=Jane%00Doe".to_vec(),
            )
            .await;
        nul_message(&reply, "holder");
    }
);
