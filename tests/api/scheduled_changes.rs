//! Changes at the next period (DESIGN §15): `"effective": "nextPeriod"` stores the new terms as
//! `pendingUpdate`, without proration; the renewal applies them (and reports them with
//! `SUBSCRIPTION_UPDATED`); the pending change can be dropped.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, body_for, key, update};
use crate::harness::TestServer;

backend_test!(
    a_downgrade_at_renewal_applies_then_without_proration,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "s1@example.com", "order-s1").await;
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 1, "name": "Gold (1 seat)", "effective": "nextPeriod"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["proration"], Value::Null);
        let m = &reply.body["membership"];
        assert_eq!(
            m["subscriptionName"], "Gold (1 seat)",
            "other fields apply at once"
        );
        assert_eq!(m["pricingInfo"]["quantity"], 3);
        assert_eq!(m["pricingInfo"]["totalAmount"], "29.97");
        let pending = &m["pendingUpdate"];
        assert_eq!(pending["pricingInfo"]["quantity"], 1);
        assert_eq!(pending["pricingInfo"]["totalAmount"], "9.99");
        assert_eq!(pending["billingCycle"]["intervalType"], "Monthly");
        assert_eq!(pending["effectiveAt"], "2027-05-01T00:00:00Z");
        let events = server.events("order-s1").await;
        let last = events.last().unwrap();
        assert_eq!(last["Action"], "SUBSCRIPTION_UPDATED");
        assert_eq!(
            last["Membership"]["Updates"],
            json!({"Name": "Gold (1 seat)"})
        );

        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["pendingUpdate"], Value::Null);
        assert_eq!(m["pricingInfo"]["quantity"], 1);
        assert_eq!(m["pricingInfo"]["totalAmount"], "9.99");
        assert_eq!(m["invoices"][0]["amountPaid"], "9.99");
        assert_eq!(m["invoices"][0]["lines"][0]["description"], "Gold (1 seat)");
        let events = server.events("order-s1").await;
        let applied = events
            .iter()
            .rev()
            .find(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
            .unwrap();
        assert_eq!(applied["Membership"]["Updates"], json!({"Quantity": 1}));
        assert_eq!(
            actions(&events),
            [
                "charge:Success",
                "status:Active",
                "SUBSCRIPTION_UPDATED",
                "SUBSCRIPTION_UPDATED",
                "charge:Success"
            ]
        );
        // Later renewals keep the new terms.
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "9.99");
    }
);

backend_test!(
    a_pending_change_is_dropped_replaced_or_overridden,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "s2@example.com", "order-s2").await;
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let schedule = |body: Value| update(&server, &token, body);
        let reply = schedule(
            json!({"membershipKey": key, "intervalType": "annually", "effective": "NEXTPERIOD"}),
        )
        .await;
        assert_eq!(
            reply.body["membership"]["pendingUpdate"]["billingCycle"]["intervalType"],
            "Annually"
        );
        let dropped = server
            .call(
                Method::DELETE,
                &format!("/api/subscriptions/v1/membership/{key}/pending-update"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(dropped.status, 200, "{}", dropped.body);
        assert_eq!(dropped.body["pendingUpdate"], Value::Null);
        // Scheduling the terms it already has schedules nothing.
        let same =
            schedule(json!({"membershipKey": key, "quantity": 3, "effective": "nextPeriod"})).await;
        assert_eq!(same.body["membership"]["pendingUpdate"], Value::Null);
        // A change now replaces a scheduled one.
        schedule(json!({"membershipKey": key, "quantity": 1, "effective": "nextPeriod"})).await;
        let now = schedule(json!({"membershipKey": key, "quantity": 4})).await;
        assert_eq!(now.status, 200, "{}", now.body);
        assert!(now.body["proration"].is_object());
        assert_eq!(now.body["membership"]["pendingUpdate"], Value::Null);
        assert_eq!(now.body["membership"]["pricingInfo"]["quantity"], 4);
        let bad =
            schedule(json!({"membershipKey": key, "quantity": 2, "effective": "later"})).await;
        assert!(bad.problem(400).contains_key("effective"));
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "39.96");
    }
);
