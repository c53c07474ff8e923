//! Customer operations: every validation rule (pass and fail), idempotency by e-mail, the
//! concurrent-create race, tenant isolation, phone updates.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::CUSTOMER;
use crate::harness::TestServer;

/// Sends the base customer body with `field` set to `value` and returns the reply.
async fn create_with(
    server: &TestServer,
    token: &str,
    email: &str,
    field: &str,
    value: Value,
) -> crate::harness::Reply {
    let mut body = server.customer_body(email);
    body[field] = value;
    server
        .call(Method::POST, CUSTOMER, Some(token), Some(body))
        .await
}

backend_test!(
    create_then_get_returns_the_full_record,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = server
            .call(
                Method::POST,
                CUSTOMER,
                Some(&token),
                Some(server.customer_body("ada@example.com")),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let key = reply.body["customerKey"].as_str().unwrap().to_string();
        let random = key.strip_prefix("cstmr_").expect("prefix");
        assert_eq!(random.len(), 24);
        assert!(random.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!(reply.body["createdAt"].as_str().unwrap().ends_with('Z'));

        let got = server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(got.status, 200);
        for (field, expected) in [
            ("customerKey", json!(key)),
            ("processorKey", json!(server.merchant.processor_key)),
            ("firstName", json!("Ada")),
            ("lastName", json!("Lovelace")),
            ("email", json!("ada@example.com")),
            ("phone", json!("+4915112345678")),
            ("countryCode", json!("DE")),
            ("address1", json!("Main Street 1")),
            ("address2", Value::Null),
            ("city", json!("Berlin")),
            ("state", Value::Null),
            ("zipCode", json!("10115")),
            (
                "taxIds",
                json!([{"type": "eu_vat", "value": "DE123456789"}]),
            ),
        ] {
            assert_eq!(got.body[field], expected, "{field}");
        }
        assert_eq!(got.body["createdAt"], reply.body["createdAt"]);
    }
);

backend_test!(
    create_is_idempotent_by_email_case_insensitively,
    |server: TestServer| async move {
        let token = server.token().await;
        let first = server.create_customer(&token, "Grace@Example.com").await;
        let mut again = server.customer_body("grace@EXAMPLE.COM");
        again["firstName"] = json!("Different");
        let reply = server
            .call(Method::POST, CUSTOMER, Some(&token), Some(again))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["customerKey"], first.as_str());
        assert_eq!(
            reply.body["firstName"], "Ada",
            "the existing record is returned unchanged"
        );
        // A different e-mail is a different customer.
        let other = server.create_customer(&token, "grace2@example.com").await;
        assert_ne!(other, first);
    }
);

backend_test!(
    concurrent_identical_creates_return_one_key,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = server.customer_body("race@example.com");
        let requests =
            (0..12).map(|_| server.call(Method::POST, CUSTOMER, Some(&token), Some(body.clone())));
        let replies = futures::future::join_all(requests).await;
        let mut keys: Vec<&str> = replies
            .iter()
            .map(|r| r.body["customerKey"].as_str().unwrap())
            .collect();
        let created = replies.iter().filter(|r| r.status == 201).count();
        assert!(replies.iter().all(|r| r.status == 201 || r.status == 200));
        assert_eq!(created, 1, "exactly one create wins");
        keys.dedup();
        assert_eq!(keys.len(), 1, "every racer gets the same key");
    }
);

backend_test!(
    each_field_rule_passes_and_fails,
    |server: TestServer| async move {
        let token = server.token().await;
        let cases: Vec<(&str, Vec<Value>, Vec<Value>)> = vec![
            (
                "processorKey",
                vec![json!(server.merchant.processor_key.to_uppercase())],
                vec![
                    json!(""),
                    json!("not-a-guid"),
                    json!(server.merchant.processor_key.replace('-', "")),
                    json!(format!("{{{}}}", server.merchant.processor_key)),
                    json!("6f9619ff-8b86-d011-b42d-00c04fc964ff"),
                    json!(5),
                ],
            ),
            (
                "firstName",
                vec![
                    json!("José"),
                    json!("Mary Ann"),
                    json!("Jean-Luc"),
                    json!("Zoë"),
                    json!("Zoe\u{308}"),
                    json!("สมศักดิ์"),
                ],
                vec![
                    json!(""),
                    json!("R2D2"),
                    json!("Ⅷ"),
                    json!("\u{308}Zoe"),
                    json!("Ann  Lee"),
                    json!("Ann--Lee"),
                    json!(" Ann"),
                    json!("Ann-"),
                    json!("O'Brien"),
                    json!(true),
                ],
            ),
            (
                "lastName",
                vec![json!("Ødegård"), json!("van der Berg")],
                vec![json!("Smith3"), json!("Smith_Jones"), json!(null)],
            ),
            (
                "email",
                vec![json!("first.last+tag@sub.example.co.uk")],
                vec![
                    json!("plain"),
                    json!("a@b"),
                    json!("@example.com"),
                    json!("a b@example.com"),
                    json!("a@example.c"),
                ],
            ),
            (
                "phone",
                vec![json!("+12345678"), json!("+123456789012345")],
                vec![
                    json!("12345678"),
                    json!("+1234567"),
                    json!("+1234567890123456"),
                    json!("+0123456789"),
                    json!("+1 2345678"),
                    json!("+1-2345678"),
                    json!(4915112345678u64),
                ],
            ),
            (
                "countryCode",
                vec![json!("us"), json!("Gb")],
                vec![
                    json!(""),
                    json!("D"),
                    json!("DEU"),
                    json!("XX"),
                    json!("1A"),
                ],
            ),
            (
                "taxIds",
                vec![
                    json!([]),
                    json!([{"type": "x", "value": "y"}, {"type": "", "value": ""}]),
                ],
                vec![
                    json!("DE123"),
                    json!([1]),
                    json!([{"type": "x"}]),
                    json!([{"type": 1, "value": "y"}]),
                ],
            ),
            (
                "address1",
                vec![json!("anything at all ✓"), json!(null)],
                vec![json!(12)],
            ),
            ("zipCode", vec![json!("SW1A 1AA")], vec![json!(["x"])]),
        ];
        for (n, (field, good, bad)) in cases.into_iter().enumerate() {
            for (i, value) in good.into_iter().enumerate() {
                let email = format!("good{n}-{i}@example.com");
                let reply = create_with(&server, &token, &email, field, value.clone()).await;
                assert_eq!(reply.status, 201, "{field} = {value}: {}", reply.body);
            }
            for value in bad {
                let reply =
                    create_with(&server, &token, "bad@example.com", field, value.clone()).await;
                let errors = reply.problem(400);
                assert!(
                    errors
                        .keys()
                        .any(|k| k == field || k.starts_with(&format!("{field}["))),
                    "{field} = {value} should fail: {}",
                    reply.body
                );
                assert_eq!(errors.len(), 1, "only {field} fails: {}", reply.body);
            }
        }
    }
);

backend_test!(
    every_failing_field_is_listed_at_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = server
            .call(
                Method::POST,
                CUSTOMER,
                Some(&token),
                Some(json!({"firstName": "A1", "taxIds": [{}]})),
            )
            .await;
        let errors = reply.problem(400);
        let mut fields: Vec<&str> = errors.keys().map(String::as_str).collect();
        fields.sort();
        assert_eq!(
            fields,
            [
                "countryCode",
                "email",
                "firstName",
                "lastName",
                "phone",
                "processorKey",
                "taxIds[0].type",
                "taxIds[0].value"
            ]
        );
        assert!(errors["email"][0].as_str().unwrap().contains("required"));
    }
);

backend_test!(
    customers_are_isolated_between_merchants,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = server.create_customer(&token, "tenant@example.com").await;
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{key}"),
                Some(&other_token),
                None,
            )
            .await
            .problem(404);
        let phone = json!({"customerKey": key, "phone": "+4915199999999"});
        server
            .call(
                Method::PUT,
                &format!("{CUSTOMER}/phone"),
                Some(&other_token),
                Some(phone),
            )
            .await
            .problem(404);
        // The other merchant cannot use this merchant's processor key…
        let mut body = server.customer_body("tenant@example.com");
        let reply = server
            .call(
                Method::POST,
                CUSTOMER,
                Some(&other_token),
                Some(body.clone()),
            )
            .await;
        assert!(reply.problem(400).contains_key("processorKey"));
        // …and the same e-mail under its own key is its own, distinct customer.
        body["processorKey"] = json!(other.processor_key);
        let reply = server
            .call(Method::POST, CUSTOMER, Some(&other_token), Some(body))
            .await;
        assert_eq!(reply.status, 201);
        assert_ne!(reply.body["customerKey"], key.as_str());
        // The original is unchanged.
        let mine = server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(mine.body["phone"], "+4915112345678");
    }
);

backend_test!(unknown_customer_is_404, |server: TestServer| async move {
    let token = server.token().await;
    for key in ["cstmr_doesnotexist000000000000", "nonsense"] {
        server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{key}"),
                Some(&token),
                None,
            )
            .await
            .problem(404);
    }
});

backend_test!(
    update_phone_validates_and_updates,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = server.create_customer(&token, "phone@example.com").await;
        let path = format!("{CUSTOMER}/phone");
        let reply = server
            .call(
                Method::PUT,
                &path,
                Some(&token),
                Some(json!({"customerKey": key, "phone": "+14155550123"})),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["phone"], "+14155550123");
        assert_eq!(reply.body["customerKey"], key.as_str());
        let got = server
            .call(
                Method::GET,
                &format!("{CUSTOMER}/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(got.body["phone"], "+14155550123");

        for (body, fields) in [
            (json!({"customerKey": key, "phone": "0123"}), vec!["phone"]),
            (
                json!({"customerKey": key, "phone": "+0123456789"}),
                vec!["phone"],
            ),
            (
                json!({"customerKey": "abc", "phone": "+14155550123"}),
                vec!["customerKey"],
            ),
            (json!({}), vec!["customerKey", "phone"]),
        ] {
            let reply = server
                .call(Method::PUT, &path, Some(&token), Some(body))
                .await;
            let errors = reply.problem(400);
            let keys: Vec<&str> = errors.keys().map(String::as_str).collect();
            assert_eq!(keys, fields);
        }
        let unknown =
            json!({"customerKey": "cstmr_000000000000000000000000", "phone": "+14155550123"});
        server
            .call(Method::PUT, &path, Some(&token), Some(unknown))
            .await
            .problem(404);
    }
);

backend_test!(
    an_email_with_a_display_name_is_refused,
    |server: TestServer| async move {
        // The address part would pass, but the whole text would be stored as the address and as
        // its uniqueness key: what is checked must be what is stored.
        let token = server.token().await;
        let body = server.customer_body("Ada Lovelace <ada@example.com>");
        let reply = server
            .call(Method::POST, CUSTOMER, Some(&token), Some(body))
            .await;
        assert_eq!(
            reply.problem(400)["email"],
            json!(["must be a valid e-mail address (name@domain.tld)"])
        );
    }
);
