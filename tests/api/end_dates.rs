//! `endDate` on `PUT /membership`: left out it stays, `null` removes it, and a membership without
//! one renews until canceled.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

/// `PUT /membership` with `body` (expects 200); returns the membership.
async fn update(server: &TestServer, token: &str, body: Value) -> Value {
    let reply = server
        .call(Method::PUT, MEMBERSHIP, Some(token), Some(body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["membership"].clone()
}

backend_test!(
    a_null_end_date_removes_it_and_the_membership_renews_past_it,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "e1@example.com").await;
        let mut body = server.membership_body(&customer, "order-end");
        body["endDate"] = json!("2027-03-01T00:00:00");
        let record = server
            .active_membership(&token, "2027-01-10T09:00:00Z", body)
            .await;
        let key = record["membershipKey"].as_str().unwrap().to_string();
        assert_eq!(record["endDate"], "2027-03-01T00:00:00Z");

        // Left out, endDate stays.
        let m = update(
            &server,
            &token,
            json!({"membershipKey": key, "name": "Gold"}),
        )
        .await;
        assert_eq!(m["endDate"], "2027-03-01T00:00:00Z");
        // null removes it.
        let m = update(
            &server,
            &token,
            json!({"membershipKey": key, "endDate": null}),
        )
        .await;
        assert_eq!(m["endDate"], Value::Null);
        assert_eq!(m["nextBillingDate"], "2027-02-10T09:00:00Z");
        // Removing it again changes nothing and says nothing.
        update(
            &server,
            &token,
            json!({"membershipKey": key, "endDate": null}),
        )
        .await;
        let updates: Vec<Value> = server
            .events("order-end")
            .await
            .into_iter()
            .filter(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
            .map(|e| e["Membership"]["Updates"].clone())
            .collect();
        assert_eq!(updates, [json!({"Name": "Gold"}), json!({"EndDate": null})]);

        // Past the old endDate the membership is still Active and renewed each month.
        server.advance(&token, "2027-03-15T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["currentPeriodStart"], "2027-03-10T09:00:00Z");
        assert_eq!(m["nextBillingDate"], "2027-04-10T09:00:00Z");
        assert_eq!(
            server.invoice_periods(&key).await,
            ["2027-01-10", "2027-02-10", "2027-03-10"]
        );
        assert!(m["invoices"]
            .as_array()
            .unwrap()
            .iter()
            .all(|invoice| invoice["status"] == "Paid"));
    }
);
