//! What usage billing refuses over HTTP (DESIGN §19, §2 errors), on both databases: each rule a
//! problem+json naming exactly the failing fields, and nothing of a refused request stored.
//! Meters and metered prices here; memberships and events by customer in
//! `usage_membership_refusals.rs`.

use recur::store::merchants::Mode;
use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{product, send};
use crate::fixtures::usage::{
    carrying, fields, meter, meter_usage, metered_price, named, post_events, recorded, usage,
};
use crate::harness::TestServer;

/// `PATCH /meters/{id}` with `body`.
async fn patch_meter(server: &TestServer, token: &str, id: &str, body: Value) -> Value {
    let reply = send(
        server,
        Method::PATCH,
        &format!("/meters/{id}"),
        token,
        Some(body),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The meter `id` as `GET /meters/{id}` shows it.
async fn read_meter(server: &TestServer, token: &str, id: &str) -> Value {
    let reply = send(server, Method::GET, &format!("/meters/{id}"), token, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The prices of `product` (`GET /prices?productId=`).
async fn prices_of(server: &TestServer, token: &str, product: &str) -> Vec<Value> {
    let path = format!("/prices?productId={product}");
    let reply = send(server, Method::GET, &path, token, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["data"].as_array().expect("data").clone()
}

backend_test!(
    a_meter_code_is_unique_per_merchant_and_its_terms_never_change,
    |server: TestServer| async move {
        let token = server.token().await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;
        // The same code again, whatever else differs: 409 on code, and no second meter.
        let again = send(
            &server,
            Method::POST,
            "/meters",
            &token,
            Some(
                json!({"code": "calls", "name": "Other", "aggregation": "sum",
                "property": "n"}),
            ),
        )
        .await;
        assert_eq!(named(&again, 409), fields(&["code"]), "{}", again.body);
        let listed = send(&server, Method::GET, "/meters", &token, None).await;
        assert_eq!(listed.body["data"].as_array().unwrap().len(), 1);
        // Codes are case-sensitive; another merchant's code is theirs.
        meter(
            &server,
            &token,
            json!({"code": "Calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let their_token = server.token_for(&other).await;
        meter(
            &server,
            &their_token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;

        // PATCH refuses each fixed term by name, all of them at once too, and changes nothing.
        let path = format!("/meters/{calls}");
        for (body, expected) in [
            (json!({"code": "calls2"}), vec!["code"]),
            (json!({"aggregation": "sum"}), vec!["aggregation"]),
            (json!({"property": "gb"}), vec!["property"]),
            (json!({"property": null}), vec!["property"]),
            (
                json!({"name": "Renamed", "code": "x", "aggregation": "max", "property": "n"}),
                vec!["code", "aggregation", "property"],
            ),
            (json!({"name": ""}), vec!["name"]),
            (json!({"active": "no"}), vec!["active"]),
        ] {
            let reply = send(&server, Method::PATCH, &path, &token, Some(body.clone())).await;
            assert_eq!(
                named(&reply, 400),
                fields(&expected),
                "{body}: {}",
                reply.body
            );
        }
        let unchanged = read_meter(&server, &token, &calls).await;
        assert_eq!(unchanged["code"], "calls");
        assert_eq!(unchanged["name"], "Calls");
        assert_eq!(unchanged["aggregation"], "count");
        assert_eq!(unchanged["property"], Value::Null);
        assert_eq!(unchanged["active"], true);

        // Its name and active do change.
        let renamed = patch_meter(&server, &token, &calls, json!({"name": "API calls"})).await;
        assert_eq!(renamed["name"], "API calls");
        assert_eq!(renamed["code"], "calls");
        let archived = patch_meter(&server, &token, &calls, json!({"active": false})).await;
        assert_eq!(archived["active"], false);
        assert_eq!(read_meter(&server, &token, &calls).await["active"], false);
        let restored = patch_meter(
            &server,
            &token,
            &calls,
            json!({"active": true, "name": "Calls"}),
        )
        .await;
        assert_eq!(
            (&restored["active"], &restored["name"]),
            (&json!(true), &json!("Calls"))
        );
        // Another merchant's meter is not found.
        let theirs = send(
            &server,
            Method::PATCH,
            &path,
            &their_token,
            Some(json!({"name": "x"})),
        )
        .await;
        assert_eq!(theirs.status, 404, "{}", theirs.body);
    }
);

backend_test!(
    property_is_required_for_all_but_count_and_refused_for_count,
    |server: TestServer| async move {
        let token = server.token().await;
        for aggregation in ["sum", "max", "unique_count", "latest"] {
            for property in [None, Some(Value::Null), Some(json!(""))] {
                let mut body = json!({"code": format!("{aggregation}-x"), "name": "M",
                    "aggregation": aggregation});
                if let Some(property) = property {
                    body["property"] = property;
                }
                let reply =
                    send(&server, Method::POST, "/meters", &token, Some(body.clone())).await;
                assert_eq!(named(&reply, 400), fields(&["property"]), "{body}");
            }
            let created = send(
                &server,
                Method::POST,
                "/meters",
                &token,
                Some(
                    json!({"code": aggregation, "name": "M", "aggregation": aggregation,
                    "property": "value"}),
                ),
            )
            .await;
            assert_eq!(created.status, 201, "{}", created.body);
            assert_eq!(created.body["property"], "value");
        }
        let counted = send(
            &server,
            Method::POST,
            "/meters",
            &token,
            Some(json!({"code": "count", "name": "M", "aggregation": "count",
                "property": "value"})),
        )
        .await;
        assert_eq!(
            named(&counted, 400),
            fields(&["property"]),
            "{}",
            counted.body
        );
        // Every failing field at once, and nothing stored.
        let all = send(
            &server,
            Method::POST,
            "/meters",
            &token,
            Some(json!({"code": "-bad", "name": "", "aggregation": "median",
                "property": "n"})),
        )
        .await;
        assert_eq!(named(&all, 400), fields(&["code", "name", "aggregation"]));
        let listed = send(&server, Method::GET, "/meters", &token, None).await;
        assert_eq!(
            listed.body["data"].as_array().unwrap().len(),
            4,
            "{}",
            listed.body
        );
    }
);

backend_test!(
    an_archived_meter_takes_no_events_and_no_new_prices,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;
        let price = metered_price(&server, &token, &calls, json!({"unitAmount": "0.01"})).await;
        let customer = server.create_customer(&token, "archived@example.com").await;
        let key = carrying(&server, &token, &customer, "archived-1", &[&price]).await;
        server.advance(&token, "2030-01-05T00:00:00Z").await;
        let event = |id: &str| {
            json!([{"transactionId": id, "membershipKey": key, "code": "calls",
                "timestamp": "2030-01-02T00:00:00"}])
        };
        assert_eq!(recorded(&server, &token, event("before")).await, (1, 0));

        patch_meter(&server, &token, &calls, json!({"active": false})).await;
        let refused = post_events(&server, &token, event("while-archived")).await;
        assert_eq!(
            named(&refused, 400),
            fields(&["events[0].code"]),
            "{}",
            refused.body
        );
        // A retry of an event taken before still answers, as a duplicate.
        assert_eq!(recorded(&server, &token, event("before")).await, (0, 1));
        let by_customer = post_events(
            &server,
            &token,
            json!([{"transactionId": "by-customer", "customerKey": customer, "code": "calls",
                "timestamp": "2030-01-02T00:00:00"}]),
        )
        .await;
        assert_eq!(
            named(&by_customer, 400),
            fields(&["events[0].code"]),
            "{}",
            by_customer.body
        );
        assert_eq!(
            meter_usage(&usage(&server, &token, &key).await, "calls")["quantity"],
            "1"
        );
        // No new metered price bills it, and no new membership carries the one it has.
        let product_id = product(&server, &token, "Archived usage").await;
        let new_price = send(
            &server,
            Method::POST,
            "/prices",
            &token,
            Some(
                json!({"productId": product_id, "currency": "EUR", "intervalType": "Monthly",
                "meterId": calls, "unitAmount": "0.02"}),
            ),
        )
        .await;
        assert_eq!(
            named(&new_price, 400),
            fields(&["meterId"]),
            "{}",
            new_price.body
        );
        assert!(prices_of(&server, &token, &product_id).await.is_empty());
        let mut body = server.membership_body(&customer, "archived-2");
        body["meteredPriceIds"] = json!([price]);
        let membership = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(body),
            )
            .await;
        assert_eq!(named(&membership, 400), fields(&["meteredPriceIds[0]"]));

        // Restored, it takes both again; the event refused before is new then.
        patch_meter(&server, &token, &calls, json!({"active": true})).await;
        assert_eq!(
            recorded(&server, &token, event("while-archived")).await,
            (1, 0)
        );
        assert_eq!(
            meter_usage(&usage(&server, &token, &key).await, "calls")["quantity"],
            "2"
        );
        metered_price(&server, &token, &calls, json!({"unitAmount": "0.02"})).await;
    }
);

backend_test!(
    bad_metered_terms_are_refused_naming_each_field,
    |server: TestServer| async move {
        let token = server.token().await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;
        let product_id = product(&server, &token, "Tiered").await;
        let tier = |up_to: Value, unit: &str| json!({"upTo": up_to, "unitAmount": unit});
        let good = json!([tier(json!(10), "1"), tier(Value::Null, "0.5")]);
        let cases = [
            (
                json!({"tiersMode": "graduated", "tiers": []}),
                vec!["tiers"],
            ),
            (
                json!({"tiersMode": "volume", "tiers": [tier(json!(10), "1"),
                    tier(json!(10), "0.5"), tier(Value::Null, "0.1")]}),
                vec!["tiers[1].upTo"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": [tier(json!(10), "1"),
                    tier(json!(5), "0.5"), tier(Value::Null, "0.1")]}),
                vec!["tiers[1].upTo"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": [tier(json!(0), "1"),
                    tier(Value::Null, "0.5")]}),
                vec!["tiers[0].upTo"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": [tier(json!(10), "1"),
                    tier(json!(20), "0.5")]}),
                vec!["tiers[1].upTo"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": [tier(Value::Null, "1"),
                    tier(Value::Null, "0.5")]}),
                vec!["tiers[0].upTo"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": good, "unitAmount": "1"}),
                vec!["unitAmount"],
            ),
            (
                json!({"tiersMode": "graduated", "tiers": good, "packageSize": 10}),
                vec!["packageSize"],
            ),
            (json!({"tiers": good}), vec!["tiersMode"]),
            (
                json!({"tiers": good, "tiersMode": "stairs"}),
                vec!["tiersMode"],
            ),
            (json!({"tiersMode": "volume"}), vec!["tiers"]),
            (
                json!({"tiersMode": "graduated", "tiers": [{"upTo": 10},
                    {"upTo": null, "unitAmount": "-1", "flatAmount": "x"}]}),
                vec![
                    "tiers[0].unitAmount",
                    "tiers[1].unitAmount",
                    "tiers[1].flatAmount",
                ],
            ),
            (
                json!({"packageSize": 0, "unitAmount": "1"}),
                vec!["packageSize"],
            ),
            (
                json!({"packageSize": -5, "unitAmount": "1"}),
                vec!["packageSize"],
            ),
            (json!({"packageSize": 100}), vec!["unitAmount"]),
            (json!({}), vec!["unitAmount"]),
            (json!({"unitAmount": "0.0000000000001"}), vec!["unitAmount"]),
        ];
        for (pricing, expected) in cases {
            let mut body = json!({"productId": product_id, "currency": "EUR",
                "intervalType": "Monthly", "meterId": calls});
            for (field, value) in pricing.as_object().unwrap() {
                body[field] = value.clone();
            }
            let reply = send(&server, Method::POST, "/prices", &token, Some(body)).await;
            assert_eq!(
                named(&reply, 400),
                fields(&expected),
                "{pricing}: {}",
                reply.body
            );
        }
        // The metered terms without meterId are refused on a fixed price, by name.
        let fixed = json!({"productId": product_id, "currency": "EUR", "unitAmount": "10.00",
            "intervalType": "Monthly", "tiers": good, "tiersMode": "graduated",
            "packageSize": 10});
        let reply = send(&server, Method::POST, "/prices", &token, Some(fixed)).await;
        assert_eq!(
            named(&reply, 400),
            fields(&["tiers", "tiersMode", "packageSize"]),
            "{}",
            reply.body
        );
        assert!(prices_of(&server, &token, &product_id).await.is_empty());
        // The same terms made right are taken; a tier's upTo may be a decimal.
        for pricing in [
            json!({"tiersMode": "graduated", "tiers": good}),
            json!({"tiersMode": "volume", "tiers": [tier(json!("0.5"), "1"),
                tier(Value::Null, "0.5")]}),
            json!({"packageSize": 1, "unitAmount": "1"}),
        ] {
            metered_price(&server, &token, &calls, pricing).await;
        }
    }
);
