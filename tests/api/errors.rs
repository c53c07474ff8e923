//! Transport-level failures are problem documents too: malformed JSON, wrong content type,
//! oversized body, unknown route, wrong method.

use reqwest::Method;

use crate::backend_test;
use crate::harness::TestServer;

const CUSTOMER: &str = "/api/subscriptions/v1/customer";

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
