//! Usage billing end to end (DESIGN §19): meters and metered prices, a membership carrying them
//! beside its fixed price, events taken once per transaction id, the usage so far, and the
//! renewal invoice billing the ended period's usage in arrears (a resume's too: a pause ends the
//! period, and takes no usage).

use serde_json::json;

use crate::backend_test;
use crate::fixtures::usage::{
    count_events, invoice, meter, meter_usage, metered_membership, metered_price, post_events,
    recorded, usage,
};
use crate::harness::TestServer;

backend_test!(
    a_renewal_bills_the_ended_periods_usage_in_arrears,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "api_calls", "name": "API calls", "aggregation": "count"}),
        )
        .await;
        let storage = meter(
            &server,
            &token,
            json!({"code": "storage", "name": "Storage GB", "aggregation": "sum",
                "property": "gb"}),
        )
        .await;
        let per_call = metered_price(&server, &token, &calls, json!({"unitAmount": "0.004"})).await;
        let per_gb = metered_price(
            &server,
            &token,
            &storage,
            json!({"tiersMode": "graduated", "tiers": [
                {"upTo": 10, "unitAmount": "0"},
                {"upTo": null, "unitAmount": "0.50"}]}),
        )
        .await;
        let customer = server.create_customer(&token, "usage@example.com").await;
        let mut body = server.membership_body(&customer, "usage-1");
        body["meteredPriceIds"] = json!([per_call, per_gb]);
        let m = server
            .active_membership(&token, "2030-01-01T00:00:00Z", body)
            .await;
        let key = m["membershipKey"].as_str().unwrap().to_string();
        assert_eq!(m["meteredPriceIds"], json!([per_call, per_gb]));
        server.advance(&token, "2030-01-20T00:00:00Z").await;

        // 1,000 calls (each alone would round to 0.00) and 15.75 GB; a retry counts nothing.
        let calls_events = count_events("call", 1000, &key, "api_calls", "2030-01-10T00:00:00");
        assert_eq!(
            recorded(&server, &token, calls_events.clone()).await,
            (1000, 0)
        );
        let again: Vec<_> = calls_events.as_array().unwrap()[..10].to_vec();
        assert_eq!(recorded(&server, &token, json!(again)).await, (0, 10));
        let gb = json!([
            {"transactionId": "gb-1", "membershipKey": key, "code": "storage",
                "timestamp": "2030-01-11T00:00:00", "properties": {"gb": 12.5}},
            {"transactionId": "gb-2", "customerKey": customer, "code": "storage",
                "properties": {"gb": "3.25"}},
            {"transactionId": "gb-2", "customerKey": customer, "code": "storage",
                "properties": {"gb": "3.25"}}
        ]);
        assert_eq!(recorded(&server, &token, gb).await, (2, 1));
        let so_far = usage(&server, &token, &key).await;
        assert_eq!(so_far["periodStart"], "2030-01-01T00:00:00Z");
        assert_eq!(so_far["currency"], "EUR");
        assert_eq!(meter_usage(&so_far, "api_calls")["quantity"], "1000");
        assert_eq!(meter_usage(&so_far, "api_calls")["amount"], "4.00");
        assert_eq!(meter_usage(&so_far, "storage")["quantity"], "15.75");
        // (15.75 − 10) × 0.50 = 2.875, rounded half up once.
        assert_eq!(meter_usage(&so_far, "storage")["amount"], "2.88");

        // The renewal bills February in advance and January's usage in arrears.
        server.advance(&token, "2030-02-01T00:00:01Z").await;
        let renewed = server.membership(&token, &key).await;
        let renewal = renewed["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let record = invoice(&server, &token, &renewal).await;
        let lines = record["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 3, "{record}");
        assert_eq!(lines[0]["amount"], "29.97");
        assert!(lines[0].get("meterCode").is_none());
        assert_eq!(lines[1]["meterCode"], "api_calls");
        assert_eq!(lines[1]["quantity"], "1000");
        assert_eq!(lines[1]["amount"], "4.00");
        assert_eq!(lines[2]["meterCode"], "storage");
        assert_eq!(lines[2]["quantity"], "15.75");
        assert_eq!(lines[2]["amount"], "2.88");
        assert_eq!(record["subtotal"], "36.85");
        assert_eq!(record["status"], "Paid", "{record}");

        // January is invoiced: a new event in it is refused, a repeat of one taken is not.
        let late = post_events(
            &server,
            &token,
            json!([{"transactionId": "late-1", "membershipKey": key, "code": "api_calls",
                "timestamp": "2030-01-20T00:00:00"}]),
        )
        .await;
        assert_eq!(late.status, 400, "{}", late.body);
        assert!(
            late.body["errors"]["events[0].timestamp"].is_array(),
            "{}",
            late.body
        );
        let repeat = json!([{"transactionId": "call-5", "membershipKey": key,
            "code": "api_calls", "timestamp": "2030-01-10T00:00:00"}]);
        assert_eq!(recorded(&server, &token, repeat).await, (0, 1));
        let february = usage(&server, &token, &key).await;
        assert_eq!(february["periodStart"], "2030-02-01T00:00:00Z");
        assert_eq!(meter_usage(&february, "api_calls")["quantity"], "0");
        assert_eq!(meter_usage(&february, "storage")["amount"], "0.00");
    }
);

backend_test!(
    a_resume_bills_the_usage_before_the_pause_and_a_pause_takes_none,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, _) = metered_membership(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
            json!({"unitAmount": "0.10"}),
            json!({}),
        )
        .await;
        let before = count_events("call", 20, &key, "calls", "2030-01-04T00:00:00");
        assert_eq!(recorded(&server, &token, before).await, (20, 0));
        server.advance(&token, "2030-01-10T00:00:00Z").await;
        let path = format!("/api/subscriptions/v1/membership/{key}/pause");
        let paused = server
            .call(reqwest::Method::POST, &path, Some(&token), Some(json!({})))
            .await;
        assert_eq!(paused.status, 200, "{}", paused.body);
        server.advance(&token, "2030-01-12T00:00:00Z").await;
        let during = post_events(
            &server,
            &token,
            json!([{"transactionId": "paused-1", "membershipKey": key, "code": "calls"}]),
        )
        .await;
        assert_eq!(during.status, 400, "{}", during.body);
        let refusal = during.body["errors"]["events[0].timestamp"].to_string();
        assert!(refusal.contains("pause"), "{refusal}");

        server.advance(&token, "2030-01-20T00:00:00Z").await;
        let path = format!("/api/subscriptions/v1/membership/{key}/resume");
        let resumed = server
            .call(reqwest::Method::POST, &path, Some(&token), None)
            .await;
        assert_eq!(resumed.status, 200, "{}", resumed.body);
        let resume_key = resumed.body["invoices"][0]["invoiceKey"].as_str().unwrap();
        let record = invoice(&server, &token, resume_key).await;
        assert_eq!(record["periodStart"], "2030-01-20T00:00:00Z", "{record}");
        let lines = record["lines"].as_array().unwrap();
        let used = lines.iter().find(|l| l["meterCode"] == "calls");
        let used = used.unwrap_or_else(|| panic!("no usage line: {record}"));
        assert_eq!(used["quantity"], "20");
        assert_eq!(used["amount"], "2.00");
    }
);
