//! The engine end to end over HTTP, driven by the sandbox test clock: first payment, renewals on
//! the calendar, dunning, expiry, completion, and the guarantees against double charges
//! (cancellation: `cancel.rs`; proration and credit: `proration.rs`).

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, body_for, key};
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

backend_test!(first_payment_activates, |server: TestServer| async move {
    let token = server.token().await;
    let body = body_for(&server, &token, "b1@example.com", "order-b1").await;
    let record = server
        .active_membership(&token, "2027-03-10T12:00:00Z", body)
        .await;
    assert_eq!(record["currentPeriodStart"], "2027-03-10T12:00:00Z");
    assert_eq!(record["currentPeriodEnd"], "2027-04-10T12:00:00Z");
    assert_eq!(record["nextBillingDate"], "2027-04-10T12:00:00Z");
    let invoice = &record["invoices"][0];
    assert_eq!(invoice["status"], "Paid");
    assert_eq!(invoice["kind"], "first");
    assert_eq!(invoice["amountPaid"], "29.97");
    assert_eq!(invoice["lines"][0]["description"], "Gold plan × 3");
    let events = server.events("order-b1").await;
    assert_eq!(actions(&events), ["charge:Success", "status:Active"]);
    let charge = &events[0];
    assert_eq!(charge["IsSubscriptionTransaction"], true);
    assert_eq!(charge["PlanKey"], key(&record).as_str());
    assert_eq!(charge["SubscriptionInvoiceId"], invoice["invoiceKey"]);
    assert_eq!(charge["Amount"], json!(29.97));
    assert_eq!(charge["MaskedPan"], "424242******4242");
    assert_eq!(charge["CardType"], "Visa");
    assert_eq!(charge["OrderId"], "order-b1");
    assert!(
        charge["ActionId"].as_str().unwrap().len() == 36,
        "ActionId is a UUID"
    );
    let receipts = server
        .count(
            "SELECT COUNT(*) FROM emails WHERE kind = 'receipt' AND to_address = $1",
            "b1@example.com",
        )
        .await;
    assert_eq!(receipts, 1);
    // Paying again is refused: the membership is no longer Incomplete.
    server.pay(&token, &key(&record)).await.problem(409);
});

backend_test!(
    declined_first_payment_can_be_retried,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "b2@example.com", "order-b2").await;
        let customer = body["customerKey"].as_str().unwrap().to_string();
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        let record = server.create_membership(&token, body).await;
        let key = key(&record);
        // No card yet.
        server.pay(&token, &key).await.problem(409);
        server
            .attach_card(&token, &customer, "4000000000009995")
            .await;
        let declined = server.pay(&token, &key).await;
        let errors = declined.problem(402);
        assert!(errors["payment"][0]
            .as_str()
            .unwrap()
            .contains("Insufficient funds"));
        assert_eq!(
            server.membership(&token, &key).await["status"],
            "Incomplete"
        );
        server
            .attach_card(&token, &customer, "4242424242424242")
            .await;
        let paid = server.pay(&token, &key).await;
        assert_eq!(paid.status, 200, "{}", paid.body);
        assert_eq!(paid.body["status"], "Active");
        // One invoice, paid by the second attempt.
        assert_eq!(paid.body["invoices"].as_array().unwrap().len(), 1);
        assert_eq!(
            actions(&server.events("order-b2").await),
            ["charge:Rejected", "charge:Success", "status:Active"]
        );
    }
);

backend_test!(
    monthly_from_jan_31_of_a_leap_year,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "b3@example.com", "order-b3").await;
        let record = server
            .active_membership(&token, "2028-01-31T10:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2029-01-31T00:00:00Z").await;
        assert_eq!(
            server.invoice_periods(&key).await,
            [
                "2028-01-31",
                "2028-02-29",
                "2028-03-29",
                "2028-04-29",
                "2028-05-29",
                "2028-06-29",
                "2028-07-29",
                "2028-08-29",
                "2028-09-29",
                "2028-10-29",
                "2028-11-29",
                "2028-12-29",
                "2029-01-29",
            ]
        );
        let now = server.membership(&token, &key).await;
        assert_eq!(now["status"], "Active");
        assert_eq!(
            now["currentPeriodEnd"], "2029-02-28T10:00:00Z",
            "Jan 29 + 1 month, clamped"
        );
        let starts: Vec<&str> = now["invoices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &i["periodStart"].as_str().unwrap()[..10])
            .collect();
        assert_eq!(
            starts,
            [
                "2029-01-29",
                "2028-12-29",
                "2028-11-29",
                "2028-10-29",
                "2028-09-29",
                "2028-08-29",
                "2028-07-29",
                "2028-06-29",
                "2028-05-29",
                "2028-04-29",
            ],
            "the record carries the latest 10, newest first"
        );
        assert!(now["invoices"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "Paid"));
        let receipts = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'receipt' AND to_address = $1",
                "b3@example.com",
            )
            .await;
        assert_eq!(receipts, 13);
    }
);

backend_test!(
    rejected_rejected_success_goes_past_due_and_back,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "b4@example.com", "order-b4").await;
        body["chargeEmitterQueue"] = json!([
            {"transactionStatus": "Rejected"},
            {"transactionStatus": "Rejected", "description": "Do not honor."},
            {"transactionStatus": "Success"}
        ]);
        let record = server
            .active_membership(&token, "2027-03-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "PastDue");
        assert_eq!(
            m["nextBillingDate"], "2027-04-02T00:00:00Z",
            "first retry a day later"
        );
        assert_eq!(m["invoices"][0]["status"], "Open");
        server.advance(&token, "2027-04-02T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "PastDue");
        assert_eq!(
            m["nextBillingDate"], "2027-04-04T00:00:00Z",
            "second retry 3 days after the failure"
        );
        server.advance(&token, "2027-04-04T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["invoices"][0]["status"], "Paid");
        assert_eq!(m["nextBillingDate"], "2027-05-01T00:00:00Z");
        let events = server.events("order-b4").await;
        assert_eq!(
            actions(&events),
            [
                "charge:Success",
                "status:Active",
                "charge:Rejected",
                "status:PastDue",
                "charge:Rejected:retried",
                "charge:Success:retried",
                "status:Active",
            ]
        );
        assert_eq!(events[2]["DeclineReasonText"], "Insufficient funds.");
        assert_eq!(events[4]["DeclineReasonText"], "Do not honor.");
        let failed_notices = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'payment_failed' AND to_address = $1",
                "b4@example.com",
            )
            .await;
        assert_eq!(failed_notices, 1);
        // The queue is used up: later renewals succeed.
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
    }
);

backend_test!(
    exhausted_retries_leave_it_unpaid,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "b5@example.com", "order-b5").await;
        body["chargeEmitterQueue"] = json!([
            {"transactionStatus": "Rejected"}, {"transactionStatus": "Rejected"},
            {"transactionStatus": "Rejected"}, {"transactionStatus": "Rejected"}
        ]);
        let record = server
            .active_membership(&token, "2027-03-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-05T23:59:59Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        server.advance(&token, "2027-04-06T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Unpaid");
        assert_eq!(m["nextBillingDate"], Value::Null);
        // No further cycles while unpaid.
        server.advance(&token, "2027-07-01T00:00:00Z").await;
        assert_eq!(
            server.invoice_periods(&key).await,
            ["2027-03-01", "2027-04-01"]
        );
        let attempts = server
        .count("SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id WHERE m.membership_key = $1", &key)
        .await;
        assert_eq!(attempts, 5, "first payment, renewal, three retries");
    }
);

backend_test!(
    incomplete_expires_after_23_hours,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = body_for(&server, &token, "b7@example.com", "order-b7").await;
        server.advance(&token, "2027-03-01T08:00:00Z").await;
        let key = key(&server.create_membership(&token, body).await);
        server.advance(&token, "2027-03-02T06:59:59Z").await;
        assert_eq!(
            server.membership(&token, &key).await["status"],
            "Incomplete"
        );
        server.advance(&token, "2027-03-02T07:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Expired");
        assert_eq!(
            actions(&server.events("order-b7").await),
            ["status:Expired"]
        );
        server.pay(&token, &key).await.problem(409);
        server
            .call(
                Method::POST,
                &format!("{MEMBERSHIP}/cancel/{key}"),
                Some(&token),
                None,
            )
            .await
            .problem(409);
    }
);

backend_test!(
    end_date_completes_without_a_new_cycle,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "b8@example.com", "order-b8").await;
        body["endDate"] = json!("2027-08-15T00:00:00");
        let record = server
            .active_membership(&token, "2027-06-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        server.advance(&token, "2027-08-14T23:59:59Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(
            m["nextBillingDate"],
            Value::Null,
            "no cycle starts at or after endDate"
        );
        server.advance(&token, "2027-10-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Completed");
        assert_eq!(
            server.invoice_periods(&key).await,
            ["2027-06-01", "2027-07-01", "2027-08-01"]
        );
    }
);

backend_test!(
    concurrent_catch_ups_charge_each_period_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut keys = Vec::new();
        for i in 0..4 {
            let mut body = body_for(
                &server,
                &token,
                &format!("race{i}@example.com"),
                &format!("order-race-{i}"),
            )
            .await;
            body["billingCycle"] = json!({"intervalType": "Daily"});
            keys.push(key(&server
                .active_membership(&token, "2027-03-01T00:00:00Z", body)
                .await));
        }
        // Two processes on PostgreSQL; on SQLite (one process per file) two concurrent requests.
        let second = match server.server.state.store.backend() {
            recur::store::Backend::Postgres => Some(server.second_process().await),
            recur::store::Backend::Sqlite => None,
        };
        let other = second.as_ref().unwrap_or(&server);
        let advance = |s: &TestServer| {
            let token = token.clone();
            let s = s.base_url.clone();
            async move {
                reqwest::Client::new()
                    .post(format!("{s}/api/subscriptions/v1/test-clock/advance"))
                    .bearer_auth(token)
                    .json(&json!({"to": "2027-03-31T00:00:00Z"}))
                    .send()
                    .await
                    .expect("advance")
                    .status()
            }
        };
        let (a, b) = tokio::join!(advance(&server), advance(other));
        assert!(a.is_success() && b.is_success(), "{a} {b}");
        for key in &keys {
            let periods = server.invoice_periods(key).await;
            assert_eq!(periods.len(), 31, "{key}: {periods:?}");
        }
        let doubled = server
            .count(
                "SELECT COUNT(*) FROM (SELECT invoice_id FROM charges WHERE status = 'Success' \
             GROUP BY invoice_id HAVING COUNT(*) > 1) d WHERE $1 = $1",
                "",
            )
            .await;
        assert_eq!(doubled, 0, "no invoice was paid twice");
        let processor_charges = server
            .count(
                "SELECT COUNT(*) FROM sandbox_charges WHERE outcome = $1",
                "approved",
            )
            .await;
        assert_eq!(
            processor_charges,
            4 * 31,
            "the processor saw one charge per period"
        );
    }
);

backend_test!(
    a_crash_after_the_processor_answered_never_charges_twice,
    |server: TestServer| async move {
        use recur::billing::recurring;
        use recur::processor::{ChargeOutcome, ChargeRequest};
        use recur::store::{memberships, payment_methods};

        let token = server.token().await;
        let body = body_for(&server, &token, "b13@example.com", "order-b13").await;
        let record = server
            .active_membership(&token, "2027-03-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let state = &server.server.state;
        let merchant_id = server.merchant.merchant_id;
        let at: chrono::DateTime<chrono::Utc> = "2027-04-01T00:00:00Z".parse().unwrap();

        // Step 1 of the renewal commits: the period's invoice and a Pending attempt.
        let mut tx = state.store.begin().await.unwrap();
        let mut m = memberships::claim_due(&mut tx, state.store.backend(), Some(merchant_id), at)
            .await
            .unwrap()
            .expect("the renewal is due");
        let (charge, _, _) = recurring::start_renewal(&mut tx, &mut m, at).await.unwrap();
        tx.commit().await.unwrap();
        let charge = charge.expect("the card is charged");
        // Step 2: the processor takes the money, and the process dies before recording it.
        let card = payment_methods::get(state.store.pool(), merchant_id, charge.payment_method_id)
            .await
            .unwrap()
            .unwrap();
        let outcome = state
            .processor
            .charge(ChargeRequest {
                merchant_id,
                idempotency_key: &charge.idempotency_key,
                token: &card.processor_token,
                amount: charge.amount,
                currency: &charge.currency,
                gateway: None,
                directive: None,
            })
            .await
            .unwrap();
        assert!(matches!(outcome, ChargeOutcome::Approved { .. }));

        // A restarted process (on PostgreSQL, another process) finishes the attempt.
        let restarted = match state.store.backend() {
            recur::store::Backend::Postgres => Some(server.second_process().await),
            recur::store::Backend::Sqlite => None,
        };
        restarted
            .as_ref()
            .unwrap_or(&server)
            .advance(&token, "2027-04-01T00:00:00Z")
            .await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["currentPeriodStart"], "2027-04-01T00:00:00Z");
        assert_eq!(m["invoices"][0]["status"], "Paid");
        let processor_charges = server
            .count(
                "SELECT COUNT(*) FROM sandbox_charges WHERE idempotency_key = $1",
                &charge.idempotency_key,
            )
            .await;
        assert_eq!(
            processor_charges, 1,
            "asked again with the same key, charged once"
        );
        let attempts = server
        .count("SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id WHERE m.membership_key = $1", &key)
        .await;
        assert_eq!(attempts, 2, "first payment and one renewal attempt");
        assert_eq!(
            actions(&server.events("order-b13").await),
            ["charge:Success", "status:Active", "charge:Success"]
        );
    }
);
