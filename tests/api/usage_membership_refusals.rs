//! What a membership's metered prices and events by customer refuse over HTTP (DESIGN §19), on
//! both databases: a metered price is never a membership's `priceId`; `meteredPriceIds` must fit
//! the membership (currency, interval, one price per meter, metered, at most 20); an event by
//! `customerKey` needs exactly one membership of the customer billing its meter. Nothing of a
//! refused request is stored.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{price, product, send};
use crate::fixtures::usage::{
    carrying, fields, meter, meter_usage, metered_price, named, post_events, recorded, usage,
};
use crate::fixtures::MEMBERSHIP;
use crate::harness::{Reply, TestServer};

/// `POST /membership` with `body`.
async fn post_membership(server: &TestServer, token: &str, body: Value) -> Reply {
    server
        .call(Method::POST, MEMBERSHIP, Some(token), Some(body))
        .await
}

/// A metered price of `meter` priced 0.01 per unit, in `currency` every `interval`.
async fn price_in(
    server: &TestServer,
    token: &str,
    meter: &str,
    currency: &str,
    interval: &str,
) -> String {
    let product = product(server, token, "Usage").await;
    let body = json!({"productId": product, "currency": currency, "intervalType": interval,
        "meterId": meter, "unitAmount": "0.01"});
    let reply = send(server, Method::POST, "/prices", token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["priceId"].as_str().unwrap().to_string()
}

/// A count meter `code`; returns its id.
async fn count_meter(server: &TestServer, token: &str, code: &str) -> String {
    meter(
        server,
        token,
        json!({"code": code, "name": code, "aggregation": "count"}),
    )
    .await
}

backend_test!(
    metered_prices_that_do_not_fit_the_membership_are_refused,
    |server: TestServer| async move {
        let token = server.token().await;
        let calls = count_meter(&server, &token, "calls").await;
        let storage = count_meter(&server, &token, "storage").await;
        let per_call = metered_price(&server, &token, &calls, json!({"unitAmount": "0.01"})).await;
        let per_call_too =
            metered_price(&server, &token, &calls, json!({"unitAmount": "0.02"})).await;
        let per_file = metered_price(&server, &token, &storage, json!({"unitAmount": "1"})).await;
        let in_usd = price_in(&server, &token, &storage, "USD", "Monthly").await;
        let yearly = price_in(&server, &token, &storage, "EUR", "Annually").await;
        let fixed_product = product(&server, &token, "Seats").await;
        let fixed = price(&server, &token, &fixed_product, "9.99").await;
        let customer = server.create_customer(&token, "fit@example.com").await;

        // A metered price is no membership's priceId.
        let by_price = post_membership(
            &server,
            &token,
            json!({"customerKey": customer, "subscriptionName": "Usage only",
                "webhookUrl": "https://merchant.example/hooks",
                "productInfo": {"orderId": "fit-1", "description": "Usage"},
                "priceId": per_call}),
        )
        .await;
        assert_eq!(
            named(&by_price, 400),
            fields(&["priceId"]),
            "{}",
            by_price.body
        );

        let too_many: Vec<&str> = vec![per_call.as_str(); 21];
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!([in_usd]), vec!["meteredPriceIds[0]"]),
            (json!([per_call, yearly]), vec!["meteredPriceIds[1]"]),
            (
                json!([per_call, per_file, per_call_too]),
                vec!["meteredPriceIds[2]"],
            ),
            (json!([per_call, per_call]), vec!["meteredPriceIds[1]"]),
            (json!([fixed]), vec!["meteredPriceIds[0]"]),
            (
                json!(["price_doesnotexist000000000", "nope", null]),
                vec![
                    "meteredPriceIds[0]",
                    "meteredPriceIds[1]",
                    "meteredPriceIds[2]",
                ],
            ),
            (json!(too_many), vec!["meteredPriceIds"]),
            (json!(per_call), vec!["meteredPriceIds"]),
        ];
        for (ids, expected) in cases {
            let mut body = server.membership_body(&customer, "fit-1");
            body["meteredPriceIds"] = ids.clone();
            let reply = post_membership(&server, &token, body).await;
            assert_eq!(
                named(&reply, 400),
                fields(&expected),
                "{ids}: {}",
                reply.body
            );
        }
        // Nothing was stored: the order is new, and takes the prices that fit.
        let mut body = server.membership_body(&customer, "fit-1");
        body["meteredPriceIds"] = json!([per_call, per_file]);
        let created = post_membership(&server, &token, body).await;
        assert_eq!(created.status, 201, "{}", created.body);
        assert_eq!(created.body["meteredPriceIds"], json!([per_call, per_file]));
    }
);

backend_test!(
    a_membership_carries_at_most_twenty_metered_prices,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut prices = Vec::new();
        for i in 0..21 {
            let meter = count_meter(&server, &token, &format!("m{i}")).await;
            prices.push(metered_price(&server, &token, &meter, json!({"unitAmount": "1"})).await);
        }
        let customer = server.create_customer(&token, "twenty@example.com").await;
        let mut body = server.membership_body(&customer, "twenty-1");
        body["meteredPriceIds"] = json!(prices);
        let refused = post_membership(&server, &token, body.clone()).await;
        assert_eq!(
            named(&refused, 400),
            fields(&["meteredPriceIds"]),
            "{}",
            refused.body
        );
        body["meteredPriceIds"] = json!(prices[..20]);
        let created = post_membership(&server, &token, body).await;
        assert_eq!(created.status, 201, "{}", created.body);
        assert_eq!(created.body["meteredPriceIds"], json!(prices[..20]));
    }
);

backend_test!(
    an_event_by_customer_needs_exactly_one_membership_billing_its_meter,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let calls = count_meter(&server, &token, "calls").await;
        let storage = meter(
            &server,
            &token,
            json!({"code": "storage", "name": "Storage", "aggregation": "sum",
                "property": "gb"}),
        )
        .await;
        let per_call = metered_price(&server, &token, &calls, json!({"unitAmount": "0.01"})).await;
        let per_call_too =
            metered_price(&server, &token, &calls, json!({"unitAmount": "0.02"})).await;
        let per_gb = metered_price(&server, &token, &storage, json!({"unitAmount": "1"})).await;
        // Two memberships billing calls, one of them storage too; another customer with a
        // membership without metered prices.
        let both = server.create_customer(&token, "both@example.com").await;
        let first = carrying(&server, &token, &both, "both-1", &[&per_call]).await;
        let second = carrying(&server, &token, &both, "both-2", &[&per_call_too, &per_gb]).await;
        let plain = server.create_customer(&token, "plain@example.com").await;
        server
            .active_membership(
                &token,
                "2030-01-01T00:00:00Z",
                server.membership_body(&plain, "plain-1"),
            )
            .await;
        server.advance(&token, "2030-01-05T00:00:00Z").await;
        let event = |id: &str, customer: &str, code: &str| {
            json!({"transactionId": id, "customerKey": customer, "code": code,
                "properties": {"gb": 2}})
        };
        let quantities = |usage: &Value| -> Vec<Value> {
            ["calls", "storage"]
                .iter()
                .filter(|code| {
                    usage["meters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|m| m["meterCode"] == **code)
                })
                .map(|code| meter_usage(usage, code)["quantity"].clone())
                .collect()
        };
        let before = (
            quantities(&usage(&server, &token, &first).await),
            quantities(&usage(&server, &token, &second).await),
        );
        assert_eq!(before, (vec![json!("0")], vec![json!("0"), json!("0")]));

        // Several memberships billing calls, none (the plain customer's), an unknown customer:
        // each refused, and the good event beside them is not stored.
        let refused = post_events(
            &server,
            &token,
            json!([
                event("good", &both, "storage"),
                event("several", &both, "calls"),
                event("none", &plain, "calls"),
                event("unknown", "cstmr_doesnotexist0000000000", "storage")
            ]),
        )
        .await;
        assert_eq!(
            named(&refused, 400),
            fields(&[
                "events[1].customerKey",
                "events[2].customerKey",
                "events[3].customerKey"
            ]),
            "{}",
            refused.body
        );
        let after = (
            quantities(&usage(&server, &token, &first).await),
            quantities(&usage(&server, &token, &second).await),
        );
        assert_eq!(after, before, "a refused request stored nothing");

        // Exactly one: counted on that membership alone.
        assert_eq!(
            recorded(&server, &token, json!([event("good", &both, "storage")])).await,
            (1, 0)
        );
        let second_usage = usage(&server, &token, &second).await;
        assert_eq!(meter_usage(&second_usage, "storage")["quantity"], "2");
        assert_eq!(meter_usage(&second_usage, "calls")["quantity"], "0");
        let first_usage = usage(&server, &token, &first).await;
        assert_eq!(meter_usage(&first_usage, "calls")["quantity"], "0");

        // By membership key, each of the two billing calls takes its events.
        let direct = json!([
            {"transactionId": "direct-1", "membershipKey": first, "code": "calls"},
            {"transactionId": "direct-2", "membershipKey": second, "code": "calls"}
        ]);
        assert_eq!(recorded(&server, &token, direct).await, (2, 0));
        assert_eq!(
            meter_usage(&usage(&server, &token, &first).await, "calls")["quantity"],
            "1"
        );
        assert_eq!(
            meter_usage(&usage(&server, &token, &second).await, "calls")["quantity"],
            "1"
        );
    }
);
