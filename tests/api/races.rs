//! Money under concurrency: every path that charges a membership's card, fired in parallel,
//! charges once. The mechanism is one charge in flight per membership (a partial unique index
//! on `charges`, checked under the membership's row lock); these tests pin it per path.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::MEMBERSHIP;
use crate::harness::{Reply, TestServer};

/// Requests fired at once in each race.
const RACERS: usize = 8;

/// An Active Monthly membership of EUR 9.99 × 3 started on 2027-04-01, its customer paying with
/// the success card; returns (membership key, customer key).
async fn active(server: &TestServer, token: &str, tag: &str) -> (String, String) {
    let customer = server
        .create_customer(token, &format!("{tag}@example.com"))
        .await;
    let body = server.membership_body(&customer, &format!("order-{tag}"));
    let record = server
        .active_membership(token, "2027-04-01T00:00:00Z", body)
        .await;
    let key = record["membershipKey"].as_str().unwrap().to_string();
    (key, customer)
}

/// Charges the processor approved for the membership, of every kind.
async fn approved_charges(server: &TestServer, key: &str, kind: &str) -> i64 {
    server
        .count(
            &format!(
                "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
                 WHERE m.membership_key = $1 AND c.status = 'Success' AND c.kind = '{kind}'"
            ),
            key,
        )
        .await
}

/// Every reply is a success or a 409 problem; returns the successes.
fn successes_or_conflicts(replies: &[Reply]) -> Vec<&Reply> {
    let mut ok = Vec::new();
    for reply in replies {
        if reply.status == StatusCode::CONFLICT {
            reply.problem(409);
        } else {
            assert!(
                reply.status.is_success(),
                "{}: {}",
                reply.status,
                reply.body
            );
            ok.push(reply);
        }
    }
    ok
}

backend_test!(
    parallel_identical_updates_charge_the_proration_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, _) = active(&server, &token, "race-put").await;
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let replies = join_all((0..RACERS).map(|_| {
            server.call(
                Method::PUT,
                MEMBERSHIP,
                Some(&token),
                Some(json!({"membershipKey": key, "quantity": 5})),
            )
        }))
        .await;
        let ok = successes_or_conflicts(&replies);
        assert!(!ok.is_empty(), "one update went through");
        let charged: Vec<&Value> = ok
            .iter()
            .map(|r| &r.body["proration"])
            .filter(|p| !p["transactionId"].is_null())
            .collect();
        assert_eq!(
            charged.len(),
            1,
            "one reply reports the charge: {charged:?}"
        );
        assert_eq!(approved_charges(&server, &key, "proration").await, 1);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["pricingInfo"]["quantity"], 5);
        assert_eq!(m["creditBalance"], "0.00", "no surplus parked as credit");
    }
);

backend_test!(
    parallel_first_payments_charge_once,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        let customer = server
            .create_customer(&token, "race-first@example.com")
            .await;
        server
            .attach_card(&token, &customer, "4242424242424242")
            .await;
        let created = server
            .create_membership(
                &token,
                server.membership_body(&customer, "order-race-first"),
            )
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let replies = join_all((0..RACERS).map(|_| server.pay(&token, &key))).await;
        let ok = successes_or_conflicts(&replies);
        assert!(!ok.is_empty(), "one payment went through");
        assert_eq!(approved_charges(&server, &key, "first").await, 1);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["creditBalance"], "0.00");
    }
);

backend_test!(
    an_update_racing_a_renewal_never_turns_money_into_credit,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, _) = active(&server, &token, "race-renew").await;
        // The renewal of 2027-05-01 runs inside the advance while updates arrive.
        let advance = server.call(
            Method::POST,
            "/api/subscriptions/v1/test-clock/advance",
            Some(&token),
            Some(json!({"to": "2027-05-01T00:00:00Z"})),
        );
        let updates = join_all((0..RACERS).map(|_| {
            server.call(
                Method::PUT,
                MEMBERSHIP,
                Some(&token),
                Some(json!({"membershipKey": key, "quantity": 5})),
            )
        }));
        let (advanced, replies) = tokio::join!(advance, updates);
        assert_eq!(advanced.status, StatusCode::OK, "{}", advanced.body);
        // Each update went through or met the renewal's charge in flight (409).
        let applied = !successes_or_conflicts(&replies).is_empty();
        assert_eq!(approved_charges(&server, &key, "renewal").await, 1);
        assert!(approved_charges(&server, &key, "proration").await <= 1);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["pricingInfo"]["quantity"], if applied { 5 } else { 3 });
        assert_eq!(
            m["creditBalance"], "0.00",
            "a charge whose change was overtaken is never parked as credit"
        );
    }
);

backend_test!(
    a_test_clock_advance_is_bounded,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-01-01T00:00:00Z").await;
        let advance = |to: &'static str| {
            server.call(
                Method::POST,
                "/api/subscriptions/v1/test-clock/advance",
                Some(&token),
                Some(json!({ "to": to })),
            )
        };
        // 1,827 days (five years) is the most one advance may move the clock.
        let too_far = advance("2032-01-02T00:00:01Z").await;
        assert!(too_far.problem(400).contains_key("to"), "{}", too_far.body);
        let far = advance("9999-12-31T00:00:00Z").await;
        assert!(far.problem(400).contains_key("to"), "{}", far.body);
        assert_eq!(advance("2032-01-02T00:00:00Z").await.status, StatusCode::OK);
    }
);
