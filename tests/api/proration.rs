//! Proration and credit over HTTP on the sandbox test clock: price, quantity and interval
//! changes mid-period, rounding in currencies with 0 and 3 decimals, credit that pays whole
//! cycles, a new interval type without a count, and a declined proration charge that changes
//! nothing.

use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, body_for, key, update};
use crate::harness::TestServer;

backend_test!(
    proration_rounds_half_up_in_jpy_and_bhd,
    |server: TestServer| async move {
        let token = server.token().await;
        for (currency, price, up, cent, email, year) in [
            ("JPY", "1000", "1001", "1", "b9@example.com", 2027),
            ("BHD", "10.000", "10.001", "0.001", "b10@example.com", 2028),
        ] {
            let order = format!("order-{currency}");
            let mut body = body_for(&server, &token, email, &order).await;
            body["pricingInfo"] = json!({"currency": currency, "totalAmount": price, "pricePerUnit": price, "quantity": 1});
            let start = format!("{year}-04-01T00:00:00Z");
            let record = server.active_membership(&token, &start, body).await;
            let key = key(&record);
            // Half of the 30-day April period is left.
            server
                .advance(&token, &format!("{year}-04-16T00:00:00Z"))
                .await;
            let up_reply = update(
                &server,
                &token,
                json!({"membershipKey": key, "pricePerUnit": up}),
            )
            .await;
            assert_eq!(up_reply.status, 200, "{}", up_reply.body);
            assert_eq!(
                up_reply.body["proration"]["amount"], cent,
                "{currency}: half a minor unit rounds up"
            );
            assert!(up_reply.body["proration"]["transactionId"].is_i64());
            assert_eq!(
                up_reply.body["membership"]["pricingInfo"]["pricePerUnit"],
                up
            );
            let down = update(
                &server,
                &token,
                json!({"membershipKey": key, "pricePerUnit": price}),
            )
            .await;
            assert_eq!(down.status, 200, "{}", down.body);
            assert_eq!(
                down.body["proration"]["amount"],
                format!("-{cent}"),
                "{currency}: and down, away from zero"
            );
            assert_eq!(down.body["proration"]["transactionId"], Value::Null);
            assert_eq!(down.body["membership"]["creditBalance"], cent);
            let events = server.events(&order).await;
            let updates: Vec<&Value> = events
                .iter()
                .filter(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
                .map(|e| &e["Membership"]["Updates"])
                .collect();
            assert_eq!(
                updates,
                [
                    &json!({"PricePerUnit": up}),
                    &json!({"PricePerUnit": price})
                ]
            );
            if currency == "JPY" {
                // Three seats: the difference for half a period, credit first, the rest charged.
                let reply = update(
                    &server,
                    &token,
                    json!({"membershipKey": key, "quantity": 3}),
                )
                .await;
                assert_eq!(reply.status, 200, "{}", reply.body);
                assert_eq!(reply.body["proration"]["amount"], "1000");
                let invoice = &reply.body["membership"]["invoices"][0];
                assert_eq!(invoice["kind"], "proration");
                assert_eq!(invoice["creditApplied"], "1");
                assert_eq!(invoice["amountPaid"], "999");
                assert_eq!(reply.body["membership"]["creditBalance"], "0");
                assert_eq!(
                    reply.body["membership"]["pricingInfo"]["totalAmount"],
                    "3000"
                );
            }
        }
    }
);

backend_test!(
    interval_change_credit_covers_whole_cycles,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "b11@example.com", "order-b11").await;
        body["pricingInfo"] = json!({"currency": "USD", "totalAmount": "100.00"});
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "intervalType": "Weekly", "pricePerUnit": "10.00"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // Half of 100.00 unused, less a full new week of 10.00: 40.00 of credit, nothing charged.
        assert_eq!(reply.body["proration"]["amount"], "-40.00");
        let m = &reply.body["membership"];
        assert_eq!(m["creditBalance"], "40.00");
        assert_eq!(m["currentPeriodStart"], "2027-04-16T00:00:00Z");
        assert_eq!(m["currentPeriodEnd"], "2027-04-23T00:00:00Z");
        server.advance(&token, "2027-05-14T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["creditBalance"], "0.00");
        for invoice in m["invoices"].as_array().unwrap().iter().take(4) {
            assert_eq!(invoice["status"], "Paid");
            assert_eq!(invoice["creditApplied"], "10.00");
            assert_eq!(invoice["amountPaid"], "0.00");
            assert_eq!(invoice["lines"][1]["description"], "Credit applied");
        }
        let charges = server
        .count("SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id WHERE m.membership_key = $1", &key)
        .await;
        assert_eq!(
            charges, 1,
            "credit paid four weeks without touching the card"
        );
        server.advance(&token, "2027-05-21T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "10.00");
    }
);

backend_test!(
    an_interval_type_without_a_count_means_a_count_of_one,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "b12@example.com", "order-b12").await;
        body["pricingInfo"] = json!({"currency": "USD", "totalAmount": "30.00"});
        body["billingCycle"] = json!({"intervalType": "Monthly", "intervalCount": 3});
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        // Neither given: the cycle stays Monthly × 3.
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "metadata": "x"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let cycle = &reply.body["membership"]["billingCycle"];
        assert_eq!(
            *cycle,
            json!({"intervalType": "Monthly", "intervalCount": 3})
        );
        // DESIGN §4: intervalType alone means a count of 1 (the spec's default), not the
        // membership's 3, so the new cycle bills every week, not every three weeks.
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "intervalType": "Weekly"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let m = &reply.body["membership"];
        assert_eq!(
            m["billingCycle"],
            json!({"intervalType": "Weekly", "intervalCount": 1})
        );
        assert_eq!(m["currentPeriodStart"], "2027-04-16T00:00:00Z");
        assert_eq!(m["currentPeriodEnd"], "2027-04-23T00:00:00Z");
        let events = server.events("order-b12").await;
        let updated = events
            .iter()
            .find(|e| e["Membership"]["Updates"]["IntervalType"] == "Weekly")
            .expect("the update's event");
        assert_eq!(updated["Membership"]["Updates"]["IntervalCount"], 1);
    }
);

backend_test!(
    declined_proration_changes_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "b12@example.com", "order-b12").await;
        let customer = body["customerKey"].as_str().unwrap().to_string();
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 5, "name": "Bigger"}),
        )
        .await;
        reply.problem(402);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["pricingInfo"]["totalAmount"], "29.97");
        assert_eq!(m["subscriptionName"], "Gold plan");
        assert_eq!(
            m["invoices"][0]["status"], "Void",
            "the proration invoice is voided"
        );
        let actions = actions(&server.events("order-b12").await);
        assert_eq!(actions.last().map(String::as_str), Some("charge:Rejected"));
        assert!(!actions.iter().any(|a| a == "SUBSCRIPTION_UPDATED"));
    }
);
