//! `chargeEmitterQueue` as DESIGN §4 states it: item N decides the Nth recurring attempt
//! (renewals and dunning retries); past its end, or without one, a recurring charge succeeds
//! whatever test card the customer has. Test cards still decide the first payment, pay-now and
//! proration charges, and those never consume the queue.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::harness::TestServer;
use crate::visitor::Visitor;

const DECLINE: &str = "4000000000000002";

/// An Active membership (paid on `start` with the success card) whose customer then attaches
/// `card`; `queue` becomes its `chargeEmitterQueue`. Returns the membership key.
async fn active_with_card(
    server: &TestServer,
    token: &str,
    order: &str,
    queue: Option<Value>,
    card: &str,
) -> String {
    let customer = server
        .create_customer(token, &format!("{order}@example.com"))
        .await;
    let mut body = server.membership_body(&customer, order);
    if let Some(queue) = queue {
        body["chargeEmitterQueue"] = queue;
    }
    let record = server
        .active_membership(token, "2027-03-01T00:00:00Z", body)
        .await;
    server.attach_card(token, &customer, card).await;
    record["membershipKey"].as_str().unwrap().to_string()
}

/// `(kind, status)` of every charge attempt of a membership, oldest first.
async fn attempts(server: &TestServer, key: &str) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT c.kind, c.status FROM charges c JOIN memberships m ON m.id = c.membership_id \
         WHERE m.membership_key = $1 ORDER BY c.id",
    )
    .bind(key)
    .fetch_all(server.server.state.store.pool())
    .await
    .unwrap()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(kind, status)| (kind.to_string(), status.to_string()))
        .collect()
}

backend_test!(
    renewals_without_a_queue_succeed_on_the_decline_card,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = active_with_card(&server, &token, "emit-1", None, DECLINE).await;
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(m["nextBillingDate"], "2027-07-01T00:00:00Z");
        assert_eq!(
            attempts(&server, &key).await,
            pairs(&[
                ("first", "Success"),
                ("renewal", "Success"),
                ("renewal", "Success"),
                ("renewal", "Success"),
            ])
        );
    }
);

backend_test!(
    renewals_after_the_queue_is_used_up_succeed_on_the_decline_card,
    |server: TestServer| async move {
        let token = server.token().await;
        let queue = json!([{"transactionStatus": "Rejected"}]);
        let key = active_with_card(&server, &token, "emit-2", Some(queue), DECLINE).await;
        // Item 1 rejects the renewal; the retry a day later is the second recurring attempt,
        // past the queue's end: it succeeds although the card is the decline card.
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        server.advance(&token, "2027-04-02T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(
            attempts(&server, &key).await,
            pairs(&[
                ("first", "Success"),
                ("renewal", "Rejected"),
                ("retry", "Success"),
                ("renewal", "Success"),
                ("renewal", "Success"),
            ])
        );
    }
);

backend_test!(
    a_rejected_item_declines_the_success_card,
    |server: TestServer| async move {
        let token = server.token().await;
        let queue = json!([{"transactionStatus": "Success"}, {"transactionStatus": "Rejected",
                            "description": "Do not honor."}]);
        let key =
            active_with_card(&server, &token, "emit-3", Some(queue), "4242424242424242").await;
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "PastDue", "{m}");
        let events = server.events("emit-3").await;
        let rejected = events
            .iter()
            .rev()
            .find(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
            .unwrap();
        assert_eq!(rejected["TransactionStatus"], "Rejected");
        assert_eq!(rejected["DeclineReasonText"], "Do not honor.");
    }
);

backend_test!(
    proration_with_the_decline_card_is_declined_and_leaves_the_queue,
    |server: TestServer| async move {
        let token = server.token().await;
        let queue = json!([{"transactionStatus": "Rejected"}]);
        let key = active_with_card(&server, &token, "emit-4", Some(queue), DECLINE).await;
        server.advance(&token, "2027-03-16T00:00:00Z").await;
        let reply = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(json!({"membershipKey": key, "quantity": 5})),
            )
            .await;
        reply.problem(402);
        // The proration did not consume item 1: the renewal is still the one it rejects.
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        assert_eq!(
            attempts(&server, &key).await,
            pairs(&[
                ("first", "Success"),
                ("proration", "Rejected"),
                ("renewal", "Rejected"),
            ])
        );
    }
);

backend_test!(
    the_first_payment_and_pay_now_follow_the_card_not_the_queue,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        let customer = server.create_customer(&token, "emit-5@example.com").await;
        server.attach_card(&token, &customer, DECLINE).await;
        let mut body = server.membership_body(&customer, "emit-5");
        body["chargeEmitterQueue"] = json!([{"transactionStatus": "Success"}]);
        let created = server.create_membership(&token, body).await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        // The sandbox pay helper charges the first invoice as checkout does: the card decides.
        server.pay(&token, &key).await.problem(402);
        // So does the hosted checkout page.
        let session = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/checkout/session",
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": key})),
            )
            .await;
        assert_eq!(session.status, StatusCode::CREATED, "{}", session.body);
        let url = session.body["checkoutRedirectUrl"].as_str().unwrap();
        let declined = Visitor::new().pay(url, DECLINE).await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Incomplete");
        assert_eq!(
            attempts(&server, &key).await,
            pairs(&[("first", "Rejected"), ("first", "Rejected")])
        );
    }
);
