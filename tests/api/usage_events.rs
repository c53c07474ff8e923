//! Usage events (DESIGN §19): a request is taken whole or refused whole, naming each failing
//! `events[i].field`; a transaction id counts once whatever runs at once, on two instances too;
//! the upcoming invoice is what the renewal then makes, and writes nothing.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::usage::{
    calls_with_coupon_and_tax, count_events, invoice, meter_usage, metered_membership, post_events,
    recorded, usage,
};
use crate::harness::TestServer;

backend_test!(
    a_request_with_a_bad_event_stores_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, customer) = metered_membership(
            &server,
            &token,
            json!({"code": "storage", "name": "Storage", "aggregation": "sum", "property": "gb"}),
            json!({"unitAmount": "1"}),
            json!({}),
        )
        .await;
        let good = json!({"transactionId": "good", "membershipKey": key, "code": "storage",
            "properties": {"gb": 2}});
        let events = json!([
            good,
            {"transactionId": "t1", "membershipKey": key, "code": "nope", "properties": {"gb": 1}},
            {"transactionId": "t2", "membershipKey": key, "code": "storage"},
            {"transactionId": "t3", "membershipKey": key, "code": "storage",
                "properties": {"gb": "abc"}},
            {"transactionId": "t4", "membershipKey": key, "code": "storage",
                "timestamp": "2030-01-05T00:06:00", "properties": {"gb": 1}},
            {"transactionId": "t5", "membershipKey": "mmbrshp_unknown", "code": "storage",
                "properties": {"gb": 1}},
            {"membershipKey": key, "code": "storage", "properties": {"gb": 1}},
            {"transactionId": "t7", "membershipKey": key, "customerKey": customer,
                "code": "storage", "properties": {"gb": 1}},
            {"transactionId": "t8", "membershipKey": key, "code": "storage",
                "timestamp": "2029-12-31T23:59:59", "properties": {"gb": 1}},
            {"transactionId": "t9", "membershipKey": key, "code": "storage",
                "properties": {"gb": -1}}
        ]);
        let refused = post_events(&server, &token, events).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        let fields: HashSet<&str> = refused.body["errors"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let expected: HashSet<&str> = [
            "events[1].code",
            "events[2].properties.gb",
            "events[3].properties.gb",
            "events[4].timestamp",
            "events[5].membershipKey",
            "events[6].transactionId",
            "events[7].customerKey",
            "events[8].timestamp",
            "events[9].properties.gb",
        ]
        .into_iter()
        .collect();
        assert_eq!(fields, expected, "{}", refused.body);
        // Nothing of it was stored: the good event is new when sent alone.
        assert_eq!(
            meter_usage(&usage(&server, &token, &key).await, "storage")["quantity"],
            "0"
        );
        assert_eq!(recorded(&server, &token, json!([good])).await, (1, 0));
        assert_eq!(
            meter_usage(&usage(&server, &token, &key).await, "storage")["quantity"],
            "2"
        );

        for bad in [json!([]), json!("x"), Value::Null] {
            let reply = post_events(&server, &token, bad).await;
            assert_eq!(reply.status, 400, "{}", reply.body);
            assert!(reply.body["errors"]["events"].is_array(), "{}", reply.body);
        }
        let too_many = count_events("many", 1001, &key, "storage", "2030-01-04T00:00:00");
        let reply = post_events(&server, &token, too_many).await;
        assert_eq!(reply.status, 400);
        assert!(reply.body["errors"]["events"].is_array(), "{}", reply.body);
    }
);

backend_test!(
    concurrent_duplicates_on_two_instances_count_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, _) = metered_membership(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
            json!({"unitAmount": "0.01"}),
            json!({}),
        )
        .await;
        let second = server.second_process().await;
        let at = "2030-01-04T00:00:00";
        // Four requests at once, two per instance: 400 shared ids in different orders, and 100
        // ids of each request's own.
        let batch = |own: &str, reversed: bool| {
            let mut events = count_events("shared", 400, &key, "calls", at)
                .as_array()
                .unwrap()
                .clone();
            if reversed {
                events.reverse();
            }
            events.extend(
                count_events(own, 100, &key, "calls", at)
                    .as_array()
                    .unwrap()
                    .clone(),
            );
            Value::Array(events)
        };
        let (a, b, c, d) = tokio::join!(
            recorded(&server, &token, batch("a", false)),
            recorded(&second, &token, batch("b", true)),
            recorded(&server, &token, batch("c", true)),
            recorded(&second, &token, batch("d", false)),
        );
        let accepted = a.0 + b.0 + c.0 + d.0;
        let duplicates = a.1 + b.1 + c.1 + d.1;
        assert_eq!(accepted, 800, "{a:?} {b:?} {c:?} {d:?}");
        assert_eq!(duplicates, 1200);
        let so_far = usage(&server, &token, &key).await;
        assert_eq!(meter_usage(&so_far, "calls")["quantity"], "800");
        assert_eq!(meter_usage(&so_far, "calls")["amount"], "8.00");
    }
);

backend_test!(
    the_upcoming_invoice_is_the_renewal_to_come_and_writes_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = calls_with_coupon_and_tax(&server, &token).await;
        let invoices_before = server.membership(&token, &key).await["invoices"]
            .as_array()
            .unwrap()
            .len();
        let path = format!("/api/subscriptions/v1/membership/{key}/upcoming-invoice");
        let reply = server
            .call(reqwest::Method::GET, &path, Some(&token), None)
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let upcoming = reply.body;
        assert_eq!(upcoming["number"], Value::Null);
        assert_eq!(upcoming["status"], "Draft");
        assert_eq!(upcoming["invoiceKey"], "");
        assert_eq!(upcoming["periodStart"], "2030-02-01T00:00:00Z");
        assert_eq!(upcoming["lines"][1]["quantity"], "250");
        assert_eq!(upcoming["lines"][1]["amount"], "25.00");
        // 29.97 + 25.00, less 10 % of both.
        assert_eq!(upcoming["subtotal"], "54.97");
        assert_eq!(upcoming["discount"], "5.50");
        assert_eq!(upcoming["taxes"][0]["amount"], "4.95");
        let again = server
            .call(reqwest::Method::GET, &path, Some(&token), None)
            .await;
        assert_eq!(again.body, upcoming, "reading it changed it");
        let after = server.membership(&token, &key).await;
        assert_eq!(after["invoices"].as_array().unwrap().len(), invoices_before);

        server.advance(&token, "2030-02-01T00:00:01Z").await;
        let renewed = server.membership(&token, &key).await;
        let renewal_key = renewed["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let renewal = invoice(&server, &token, &renewal_key).await;
        for field in [
            "lines",
            "subtotal",
            "discount",
            "taxes",
            "total",
            "periodStart",
        ] {
            assert_eq!(renewal[field], upcoming[field], "{field}");
        }
    }
);
