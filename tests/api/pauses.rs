//! Pausing and resuming (DESIGN §15): a Paused membership is never charged nor dunned; the
//! unused part of its paid period becomes credit; a resume, at once or at `resumeAt`, starts a
//! new period charged minus that credit; its `endDate` and a cancel end it as any other.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, active, body_for, key};
use crate::harness::{Reply, TestServer};

async fn pause(server: &TestServer, token: &str, key: &str, body: Option<Value>) -> Reply {
    server
        .call(
            Method::POST,
            &format!("/api/subscriptions/v1/membership/{key}/pause"),
            Some(token),
            body,
        )
        .await
}

async fn resume(server: &TestServer, token: &str, key: &str) -> Reply {
    server
        .call(
            Method::POST,
            &format!("/api/subscriptions/v1/membership/{key}/resume"),
            Some(token),
            None,
        )
        .await
}

backend_test!(
    a_pause_credits_the_unused_time_and_resumes_at_its_date,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = active(&server, &token, "p1@example.com", "order-p1").await;
        server.advance(&token, "2027-04-11T00:00:00Z").await;
        let paused = pause(
            &server,
            &token,
            &key,
            Some(json!({"resumeAt": "2027-06-15T00:00:00"})),
        )
        .await;
        assert_eq!(paused.status, 200, "{}", paused.body);
        let m = &paused.body;
        assert_eq!(m["status"], "Paused");
        assert_eq!(m["resumeAt"], "2027-06-15T00:00:00Z");
        assert_eq!(m["nextBillingDate"], "2027-06-15T00:00:00Z");
        assert_eq!(m["currentPeriodEnd"], "2027-04-11T00:00:00Z");
        // 20 of 30 days unused: 20.00 credited, by a credit note on the period's invoice (no
        // invoice of its own).
        assert_eq!(m["creditBalance"], "20.00");
        let invoices = m["invoices"].as_array().unwrap();
        assert_eq!(invoices.len(), 1);
        let credit = &invoices[0]["creditNotes"][0];
        assert_eq!(credit["kind"], "credit");
        assert_eq!(credit["amount"], "20.00");

        // Nothing is charged while Paused, whatever the clock passes.
        server.advance(&token, "2027-06-14T23:59:59Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Paused");
        assert_eq!(m["invoices"].as_array().unwrap().len(), 1);

        // At resumeAt: a new period from then, charged minus the credit.
        server.advance(&token, "2027-06-15T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["resumeAt"], Value::Null);
        assert_eq!(m["currentPeriodStart"], "2027-06-15T00:00:00Z");
        assert_eq!(m["currentPeriodEnd"], "2027-07-15T00:00:00Z");
        let renewal = &m["invoices"][0];
        assert_eq!(renewal["kind"], "renewal");
        assert_eq!(renewal["creditApplied"], "20.00");
        assert_eq!(renewal["amountPaid"], "10.00");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(
            actions(&server.events("order-p1").await),
            [
                "charge:Success",
                "status:Active",
                "status:Paused",
                "status:Active",
                "charge:Success"
            ]
        );
    }
);

backend_test!(
    a_resume_now_charges_at_once_and_a_decline_starts_dunning,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "p2@example.com", "order-p2").await;
        body["chargeEmitterQueue"] = json!([{"transactionStatus": "Rejected"}]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        // Paused a second before the period ends: nothing worth a cent is left to credit.
        server.advance(&token, "2027-04-30T23:59:59Z").await;
        let paused = pause(&server, &token, &key, None).await;
        assert_eq!(paused.status, 200, "{}", paused.body);
        assert_eq!(paused.body["creditBalance"], "0.00");
        assert_eq!(paused.body["invoices"].as_array().unwrap().len(), 1);
        assert_eq!(paused.body["resumeAt"], Value::Null);
        assert_eq!(paused.body["nextBillingDate"], Value::Null);

        // Pausing again sets (or clears) the resume date; other statuses refuse.
        let again = pause(
            &server,
            &token,
            &key,
            Some(json!({"resumeAt": "2027-09-01T00:00:00Z"})),
        )
        .await;
        assert_eq!(again.body["resumeAt"], "2027-09-01T00:00:00Z");

        server.advance(&token, "2027-05-20T00:00:00Z").await;
        let resumed = resume(&server, &token, &key).await;
        assert_eq!(resumed.status, 200, "{}", resumed.body);
        // The first recurring attempt is the queue's rejection: PastDue, retries scheduled.
        assert_eq!(resumed.body["status"], "PastDue");
        assert_eq!(resumed.body["currentPeriodStart"], "2027-05-20T00:00:00Z");
        assert_eq!(resumed.body["nextBillingDate"], "2027-05-21T00:00:00Z");
        let again = resume(&server, &token, &key).await;
        again.problem(409);
        let refused = pause(&server, &token, &key, None).await;
        refused.problem(409);
    }
);

backend_test!(pause_refusals, |server: TestServer| async move {
    let token = server.token().await;
    let key = active(&server, &token, "p3@example.com", "order-p3").await;
    for bad in [
        json!({"resumeAt": "2027-03-01T00:00:00"}),
        json!({"resumeAt": "soon"}),
        json!({"resumeAt": 5}),
    ] {
        let reply = pause(&server, &token, &key, Some(bad.clone())).await;
        assert!(reply.problem(400).contains_key("resumeAt"), "{bad}");
    }
    pause(&server, &token, "mmbrshp_unknown", None)
        .await
        .problem(404);
    resume(&server, &token, &key).await.problem(409);
    let other = server
        .another_merchant(recur::store::merchants::Mode::Sandbox)
        .await;
    let other_token = server.token_for(&other).await;
    pause(&server, &other_token, &key, None).await.problem(404);
    resume(&server, &other_token, &key).await.problem(404);
});

backend_test!(
    a_paused_membership_ends_at_its_end_date_or_when_canceled,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut body = body_for(&server, &token, "p4@example.com", "order-p4").await;
        body["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "30.00"});
        body["endDate"] = json!("2027-06-01T00:00:00");
        let ending = key(&server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await);
        let canceled = active(&server, &token, "p5@example.com", "order-p5").await;
        server.advance(&token, "2027-04-11T00:00:00Z").await;
        for key in [&ending, &canceled] {
            let paused = pause(&server, &token, key, None).await;
            assert_eq!(paused.body["status"], "Paused", "{}", paused.body);
        }

        let reply = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{canceled}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["status"], "Canceled");

        // Paused with no resumeAt: its endDate still ends it, with nothing charged.
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let m = server.membership(&token, &ending).await;
        assert_eq!(m["status"], "Completed");
        assert_eq!(
            m["invoices"].as_array().unwrap().len(),
            1,
            "the first (the credit is a credit note on it)"
        );
        assert_eq!(
            server.membership(&token, &canceled).await["status"],
            "Canceled"
        );
        assert_eq!(
            actions(&server.events("order-p4").await),
            [
                "charge:Success",
                "status:Active",
                "status:Paused",
                "status:Completed"
            ]
        );
        assert_eq!(
            actions(&server.events("order-p5").await),
            [
                "charge:Success",
                "status:Active",
                "status:Paused",
                "status:Canceled"
            ]
        );
    }
);
