//! `meteredPriceIds` on `PUT /membership` (DESIGN §19): the metered prices change at once and
//! without proration. A new meter counts from then on, a kept meter's period is billed at its
//! new price, a meter whose usage of the period is not billed yet cannot be dropped, a dropped
//! meter takes no more events, and a membership with metered prices keeps its billing cycle.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::usage::{
    count_events, invoice, meter, metered_price, post_events, recorded, usage,
};
use crate::fixtures::MEMBERSHIP;
use crate::harness::{Reply, TestServer};

async fn update(server: &TestServer, token: &str, body: Value) -> Reply {
    server
        .call(Method::PUT, MEMBERSHIP, Some(token), Some(body))
        .await
}

backend_test!(
    metered_prices_change_at_once_and_a_meter_with_usage_stays,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
        )
        .await;
        let seats = meter(
            &server,
            &token,
            json!({"code": "seats", "name": "Seats", "aggregation": "max", "property": "n"}),
        )
        .await;
        let per_call = metered_price(&server, &token, &calls, json!({"unitAmount": "0.10"})).await;
        let cheaper = metered_price(&server, &token, &calls, json!({"unitAmount": "0.05"})).await;
        let per_seat = metered_price(&server, &token, &seats, json!({"unitAmount": "2"})).await;
        let customer = server.create_customer(&token, "updates@example.com").await;
        let body = server.membership_body(&customer, "updates-1");
        let m = server
            .active_membership(&token, "2030-01-01T00:00:00Z", body)
            .await;
        let key = m["membershipKey"].as_str().unwrap().to_string();
        assert_eq!(m["meteredPriceIds"], json!([]));
        server.advance(&token, "2030-01-05T00:00:00Z").await;

        // Added: the meter counts from now on.
        let added = update(
            &server,
            &token,
            json!({"membershipKey": key, "meteredPriceIds": [per_call, per_seat]}),
        )
        .await;
        assert_eq!(added.status, 200, "{}", added.body);
        assert_eq!(
            added.body["membership"]["meteredPriceIds"],
            json!([per_call, per_seat])
        );
        assert!(added.body["proration"].is_null());
        let events = count_events("call", 40, &key, "calls", "2030-01-05T00:00:00");
        assert_eq!(recorded(&server, &token, events).await, (40, 0));

        // A meter with usage this period is not dropped; a refused update changes nothing.
        let drop_used = update(
            &server,
            &token,
            json!({"membershipKey": key, "meteredPriceIds": [per_seat]}),
        )
        .await;
        assert_eq!(drop_used.status, 400, "{}", drop_used.body);
        let errors = drop_used.body["errors"]["meteredPriceIds"].to_string();
        assert!(errors.contains("calls"), "{errors}");
        // A kept meter's new price prices the whole period; the unused meter is dropped.
        let repriced = update(
            &server,
            &token,
            json!({"membershipKey": key, "meteredPriceIds": [cheaper]}),
        )
        .await;
        assert_eq!(repriced.status, 200, "{}", repriced.body);
        assert_eq!(
            repriced.body["membership"]["meteredPriceIds"],
            json!([cheaper])
        );
        let so_far = usage(&server, &token, &key).await;
        assert_eq!(so_far["meters"].as_array().unwrap().len(), 1, "{so_far}");
        assert_eq!(so_far["meters"][0]["quantity"], "40");
        assert_eq!(so_far["meters"][0]["amount"], "2.00");
        // The dropped meter takes no more events.
        let dropped = post_events(
            &server,
            &token,
            json!([{"transactionId": "seat-1", "membershipKey": key, "code": "seats",
                "properties": {"n": 3}}]),
        )
        .await;
        assert_eq!(dropped.status, 400, "{}", dropped.body);

        // Metered prices keep the cycle; they must share the membership's currency.
        let cycle = update(
            &server,
            &token,
            json!({"membershipKey": key, "intervalType": "Weekly"}),
        )
        .await;
        assert_eq!(cycle.status, 400, "{}", cycle.body);
        assert!(
            cycle.body["errors"]["intervalType"].is_array(),
            "{}",
            cycle.body
        );

        server.advance(&token, "2030-02-01T00:00:01Z").await;
        let renewed = server.membership(&token, &key).await;
        let renewal_key = renewed["invoices"][0]["invoiceKey"].as_str().unwrap();
        let renewal = invoice(&server, &token, renewal_key).await;
        let lines = renewal["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 2, "{renewal}");
        assert_eq!(lines[1]["meterCode"], "calls");
        assert_eq!(lines[1]["quantity"], "40");
        assert_eq!(lines[1]["amount"], "2.00");

        // `[]` removes them all once the period's usage is billed.
        let none = update(
            &server,
            &token,
            json!({"membershipKey": key, "meteredPriceIds": []}),
        )
        .await;
        assert_eq!(none.status, 200, "{}", none.body);
        assert_eq!(none.body["membership"]["meteredPriceIds"], json!([]));
    }
);
