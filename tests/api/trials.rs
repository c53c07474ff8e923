//! Free trials (DESIGN §15): the checkout saves the card without charging, the membership is
//! Trialing, the customer is told three days before the end, and the first charge at the end
//! starts the usual lifecycle (Active when paid, PastDue and dunning when declined).

use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, body_for, key};
use crate::harness::TestServer;

/// A membership of `email` with a 14-day trial, created and its trial started at test-clock
/// time `start` (the pay helper saves the card as the checkout does). Returns its record.
async fn trialing(
    server: &TestServer,
    token: &str,
    email: &str,
    order: &str,
    extra: Value,
) -> Value {
    server.advance(token, "2027-01-10T09:00:00Z").await;
    let mut body = body_for(server, token, email, order).await;
    body["trialDays"] = json!(14);
    for (field, value) in extra.as_object().into_iter().flatten() {
        body[field] = value.clone();
    }
    let customer = body["customerKey"].as_str().unwrap().to_string();
    server
        .attach_card(token, &customer, "4242424242424242")
        .await;
    let created = server.create_membership(token, body).await;
    assert_eq!(created["status"], "Incomplete");
    assert_eq!(created["trialDays"], 14);
    assert_eq!(created["trialEnd"], Value::Null);
    let started = server.pay(token, &key(&created)).await;
    assert_eq!(started.status, 200, "{}", started.body);
    started.body
}

async fn emails(server: &TestServer, kind: &str, to: &str) -> i64 {
    server
        .count(
            &format!("SELECT COUNT(*) FROM emails WHERE kind = '{kind}' AND to_address = $1"),
            to,
        )
        .await
}

backend_test!(
    a_trial_saves_the_card_warns_three_days_ahead_and_charges_at_its_end,
    |server: TestServer| async move {
        let token = server.token().await;
        let record = trialing(&server, &token, "t1@example.com", "order-t1", json!({})).await;
        let key = key(&record);
        assert_eq!(record["status"], "Trialing");
        assert_eq!(record["trialEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(record["currentPeriodStart"], "2027-01-10T09:00:00Z");
        assert_eq!(record["currentPeriodEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(record["nextBillingDate"], "2027-01-24T09:00:00Z");
        assert_eq!(
            record["invoices"],
            json!([]),
            "nothing was invoiced or charged"
        );
        assert_eq!(
            actions(&server.events("order-t1").await),
            ["status:Trialing"]
        );

        // Three days before the end: the webhook and the e-mail, once.
        server.advance(&token, "2027-01-21T08:59:59Z").await;
        assert_eq!(emails(&server, "trial_will_end", "t1@example.com").await, 0);
        server.advance(&token, "2027-01-21T09:00:00Z").await;
        let events = server.events("order-t1").await;
        assert_eq!(
            actions(&events),
            ["status:Trialing", "SUBSCRIPTION_TRIAL_WILL_END"]
        );
        let notice = &events[1];
        assert_eq!(notice["TrialEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(notice["Membership"]["Status"], "Trialing");
        assert_eq!(notice["Membership"]["TrialEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(emails(&server, "trial_will_end", "t1@example.com").await, 1);
        let text: String = sqlx::query_scalar(
            "SELECT text_body FROM emails WHERE kind = 'trial_will_end' AND to_address = $1",
        )
        .bind("t1@example.com")
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        assert!(text.contains("2027-01-24"), "{text}");
        assert!(text.contains("29.97"), "names the first charge: {text}");

        // The end: the first charge, a renewal invoice for the first paid period.
        server.advance(&token, "2027-01-24T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["trialEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(m["currentPeriodStart"], "2027-01-24T09:00:00Z");
        assert_eq!(m["currentPeriodEnd"], "2027-02-24T09:00:00Z");
        let invoice = &m["invoices"][0];
        assert_eq!(invoice["kind"], "renewal");
        assert_eq!(invoice["status"], "Paid");
        assert_eq!(invoice["amountPaid"], "29.97");
        assert_eq!(
            actions(&server.events("order-t1").await),
            [
                "status:Trialing",
                "SUBSCRIPTION_TRIAL_WILL_END",
                "charge:Success",
                "status:Active"
            ]
        );
        assert_eq!(emails(&server, "trial_will_end", "t1@example.com").await, 1);
        assert_eq!(emails(&server, "receipt", "t1@example.com").await, 1);
    }
);

backend_test!(
    a_declined_first_charge_after_a_trial_starts_dunning,
    |server: TestServer| async move {
        let token = server.token().await;
        let queue = json!({"chargeEmitterQueue": [{"transactionStatus": "Rejected"}]});
        let record = trialing(&server, &token, "t2@example.com", "order-t2", queue).await;
        let key = key(&record);
        server.advance(&token, "2027-01-24T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "PastDue");
        assert_eq!(m["invoices"][0]["status"], "Open");
        assert_eq!(
            m["nextBillingDate"], "2027-01-25T09:00:00Z",
            "the first retry"
        );
        assert_eq!(emails(&server, "payment_failed", "t2@example.com").await, 1);
        // The retry a day later succeeds (the queue had one rejection).
        server.advance(&token, "2027-01-25T09:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
    }
);

backend_test!(
    a_trial_can_be_canceled_without_any_charge,
    |server: TestServer| async move {
        let token = server.token().await;
        let record = trialing(&server, &token, "t3@example.com", "order-t3", json!({})).await;
        let key = key(&record);
        let canceled = server
            .call(
                reqwest::Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(canceled.body["status"], "Canceled");
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Canceled");
        assert_eq!(m["invoices"], json!([]));
        assert_eq!(
            actions(&server.events("order-t3").await),
            ["status:Trialing", "status:Canceled"]
        );
    }
);

backend_test!(
    a_card_the_issuer_refuses_starts_no_trial,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "t5@example.com", "order-t5").await;
        body["trialDays"] = json!(14);
        let customer = body["customerKey"].as_str().unwrap().to_string();
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        let created = server.create_membership(&token, body).await;
        let refused = server.pay(&token, &key(&created)).await;
        let reason = refused.problem(402)["payment"][0]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.contains("declined"), "{reason}");
        let m = server.membership(&token, &key(&created)).await;
        assert_eq!(m["status"], "Incomplete");
        assert_eq!(m["trialEnd"], Value::Null);
        assert_eq!(
            actions(&server.events("order-t5").await),
            Vec::<String>::new()
        );
    }
);

backend_test!(trial_days_are_checked, |server: TestServer| async move {
    let token = server.token().await;
    let mut body = body_for(&server, &token, "t4@example.com", "order-t4").await;
    for bad in [json!(0), json!(731), json!("14"), json!(1.5)] {
        body["trialDays"] = bad.clone();
        let reply = server
            .call(
                reqwest::Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(body.clone()),
            )
            .await;
        assert!(
            reply.problem(400).contains_key("trialDays"),
            "{bad}: {}",
            reply.body
        );
    }
});

backend_test!(
    a_trial_that_reaches_its_end_date_first_completes_without_a_charge,
    |server: TestServer| async move {
        let token = server.token().await;
        let extra = json!({"endDate": "2027-01-20T00:00:00"});
        let record = trialing(&server, &token, "t7@example.com", "order-t7", extra).await;
        let key = key(&record);
        assert_eq!(record["status"], "Trialing");
        server.advance(&token, "2027-01-20T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Completed");
        assert_eq!(m["invoices"], json!([]));
        server.advance(&token, "2027-02-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["invoices"], json!([]));
        assert_eq!(
            actions(&server.events("order-t7").await),
            ["status:Trialing", "status:Completed"]
        );
    }
);
