//! Final invoices (DESIGN §19): a membership that ends, canceled or completed at its `endDate`,
//! bills its last period's usage in arrears on an invoice of kind `final`, with its coupon and
//! taxes; the usage is then closed to new events, and the charge's answer changes no status (a
//! declined one leaves the invoice Open for a pay-now checkout).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::usage::{
    calls_with_coupon_and_tax, count_events, invoice, metered_membership, post_events, recorded,
};
use crate::fixtures::{MEMBERSHIP, SESSIONS};
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// `POST …/membership/cancel/{key}` (expects 200): the membership record.
async fn cancel(server: &TestServer, token: &str, key: &str) -> Value {
    let path = format!("{MEMBERSHIP}/cancel/{key}");
    let reply = server.call(Method::POST, &path, Some(token), None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// The membership's invoices of kind `final`, as invoice records.
async fn final_invoices(server: &TestServer, token: &str, key: &str) -> Vec<Value> {
    let m = server.membership(token, key).await;
    let mut finals = Vec::new();
    for listed in m["invoices"].as_array().expect("invoices") {
        let record = invoice(server, token, listed["invoiceKey"].as_str().unwrap()).await;
        if record["kind"] == "final" {
            finals.push(record);
        }
    }
    finals
}

backend_test!(
    a_cancel_bills_the_usage_so_far_on_a_final_invoice,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = calls_with_coupon_and_tax(&server, &token).await;
        server.advance(&token, "2030-01-10T00:00:00Z").await;

        let canceled = cancel(&server, &token, &key).await;
        assert_eq!(canceled["status"], "Canceled", "{canceled}");
        let finals = final_invoices(&server, &token, &key).await;
        assert_eq!(finals.len(), 1, "{canceled}");
        let last = &finals[0];
        assert_eq!(last["periodStart"], "2030-01-01T00:00:00Z");
        assert_eq!(last["periodEnd"], "2030-01-10T00:00:00Z");
        let lines = last["lines"].as_array().unwrap();
        assert_eq!(
            lines.len(),
            1,
            "only usage: the fixed price was billed ahead"
        );
        assert_eq!(lines[0]["meterCode"], "calls");
        assert_eq!(lines[0]["quantity"], "250");
        assert_eq!(lines[0]["amount"], "25.00");
        // 25.00 less 10 %, plus 10 % tax on 22.50.
        assert_eq!(last["discount"], "2.50");
        assert_eq!(last["taxes"][0]["amount"], "2.25");
        assert_eq!(last["total"], "24.75");
        assert_eq!(last["status"], "Paid", "{last}");
        assert_eq!(last["amountPaid"], "24.75");
        assert!(last["number"].is_string(), "finalized when charged");

        // The period is closed to new events; a repeat of one taken is still a duplicate.
        let late = post_events(
            &server,
            &token,
            json!([{"transactionId": "late-1", "membershipKey": key, "code": "calls",
                "timestamp": "2030-01-09T00:00:00"}]),
        )
        .await;
        assert_eq!(late.status, 400, "{}", late.body);
        let repeat = json!([{"transactionId": "call-1", "membershipKey": key,
            "code": "calls", "timestamp": "2030-01-04T00:00:00"}]);
        assert_eq!(recorded(&server, &token, repeat).await, (0, 1));

        // A repeated cancel bills nothing again, and no cycle follows.
        cancel(&server, &token, &key).await;
        server.advance(&token, "2030-03-01T00:00:00Z").await;
        assert_eq!(final_invoices(&server, &token, &key).await.len(), 1);
        assert_eq!(
            server.invoice_periods(&key).await,
            ["2030-01-01", "2030-01-01"],
            "the first period and its final usage"
        );
        let receipts = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'receipt' AND to_address = $1",
                "events@example.com",
            )
            .await;
        assert_eq!(receipts, 2, "the first payment's and the final invoice's");
    }
);

backend_test!(
    completion_bills_the_last_period_and_a_declined_charge_stays_payable,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, customer) = metered_membership(
            &server,
            &token,
            json!({"code": "calls", "name": "Calls", "aggregation": "count"}),
            json!({"unitAmount": "0.10"}),
            json!({"endDate": "2030-03-01T00:00:00"}),
        )
        .await;
        let january = count_events("jan", 10, &key, "calls", "2030-01-04T00:00:00");
        assert_eq!(recorded(&server, &token, january).await, (10, 0));
        server.advance(&token, "2030-02-12T00:00:00Z").await;
        let february = count_events("feb", 30, &key, "calls", "2030-02-10T00:00:00");
        assert_eq!(recorded(&server, &token, february).await, (30, 0));
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;

        server.advance(&token, "2030-03-01T00:00:01Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Completed", "{m}");
        let finals = final_invoices(&server, &token, &key).await;
        assert_eq!(finals.len(), 1, "{m}");
        let last = &finals[0];
        assert_eq!(last["periodStart"], "2030-02-01T00:00:00Z");
        assert_eq!(last["periodEnd"], "2030-03-01T00:00:00Z");
        assert_eq!(last["lines"][0]["quantity"], "30");
        assert_eq!(last["total"], "3.00");
        assert_eq!(last["status"], "Open", "the card declined: {last}");
        let failed = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'payment_failed' AND to_address = $1",
                "events@example.com",
            )
            .await;
        assert_eq!(failed, 1, "the customer is told, with a pay-now link");

        // A checkout session for the Completed membership collects it; it stays Completed.
        let session = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": key})),
            )
            .await;
        assert_eq!(session.status, StatusCode::CREATED, "{}", session.body);
        let url = session.body["checkoutRedirectUrl"].as_str().unwrap();
        let visitor = Visitor::new();
        let page = visitor.get(url).await;
        assert!(page.text.contains("3.00"), "{}", page.text);
        let paid = visitor.pay(url, "5555 5555 5555 4444").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Completed", "{m}");
        let last = &final_invoices(&server, &token, &key).await[0];
        assert_eq!(last["status"], "Paid", "{last}");
        assert_eq!(last["amountPaid"], "3.00");
    }
);

backend_test!(
    a_membership_without_usage_has_no_final_invoice,
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
        cancel(&server, &token, &key).await;
        assert!(final_invoices(&server, &token, &key).await.is_empty());
        assert_eq!(server.invoice_periods(&key).await.len(), 1);
    }
);
