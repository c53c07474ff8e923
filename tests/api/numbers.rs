//! Invoice numbers (DESIGN §9): `{prefix}-{YYYY}-{NNNNNN}` given when an invoice's first
//! payment is attempted, sequential without gaps per merchant and year of the merchant's clock,
//! under the prefix of the merchant's settings; concurrent finalizations, in one process and in
//! two on PostgreSQL, hand out a gap-free set.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::invoices::assert_gap_free;
use crate::harness::TestServer;

/// The numbers of a membership's invoices, newest first (`null` while not finalized).
async fn numbers(server: &TestServer, token: &str, key: &str) -> Vec<Value> {
    server.membership(token, key).await["invoices"]
        .as_array()
        .expect("invoices")
        .iter()
        .map(|invoice| invoice["number"].clone())
        .collect()
}

/// An Active membership of a new customer `order`, paid at test-clock time `start`.
async fn active(server: &TestServer, token: &str, order: &str, start: &str) -> String {
    let customer = server
        .create_customer(token, &format!("{order}@example.com"))
        .await;
    let record = server
        .active_membership(token, start, server.membership_body(&customer, order))
        .await;
    record["membershipKey"].as_str().expect("key").to_string()
}

/// `count` Incomplete memberships whose customers have a card, ready to be paid.
async fn unpaid(server: &TestServer, token: &str, prefix: &str, count: usize) -> Vec<String> {
    let mut keys = Vec::new();
    for i in 0..count {
        let order = format!("{prefix}-{i}");
        let customer = server
            .create_customer(token, &format!("{order}@example.com"))
            .await;
        server
            .attach_card(token, &customer, "4242424242424242")
            .await;
        let record = server
            .create_membership(token, server.membership_body(&customer, &order))
            .await;
        keys.push(record["membershipKey"].as_str().expect("key").to_string());
    }
    keys
}

/// Every invoice number of the merchant, read through the API.
async fn all_numbers(server: &TestServer, token: &str, keys: &[String]) -> Vec<String> {
    let mut all = Vec::new();
    for key in keys {
        for number in numbers(server, token, key).await {
            all.push(
                number
                    .as_str()
                    .expect("every invoice is numbered")
                    .to_string(),
            );
        }
    }
    all
}

backend_test!(
    numbers_follow_each_other_take_the_prefix_and_restart_each_year,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-12-01T00:00:00Z").await;
        let [first, second] = unpaid(&server, &token, "numbered", 2)
            .await
            .try_into()
            .unwrap();
        // Not yet attempted: not finalized, no number.
        let before = server.membership(&token, &first).await;
        for invoice in before["invoices"].as_array().unwrap() {
            assert_eq!(invoice["number"], Value::Null, "{invoice}");
        }

        assert_eq!(server.pay(&token, &first).await.status, StatusCode::OK);
        assert_eq!(
            numbers(&server, &token, &first).await,
            [json!("INV-2027-000001")]
        );
        let paid = server.membership(&token, &first).await["invoices"][0].clone();
        let record = server
            .call(
                Method::GET,
                &format!(
                    "/api/subscriptions/v1/invoice/{}",
                    paid["invoiceKey"].as_str().unwrap()
                ),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(record.body["number"], "INV-2027-000001", "{}", record.body);
        // The membership webhooks' invoices carry it too.
        let events = server.events("numbered-0").await;
        let last = events.last().expect("events");
        assert_eq!(
            last["Membership"]["Invoices"][0]["Number"], "INV-2027-000001",
            "{last}"
        );

        // The prefix is the settings' when the invoice is finalized; the sequence goes on.
        let put = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&token),
                Some(json!({"invoicePrefix": "acme-eu"})),
            )
            .await;
        assert_eq!(put.status, StatusCode::OK, "{}", put.body);
        assert_eq!(server.pay(&token, &second).await.status, StatusCode::OK);
        assert_eq!(
            numbers(&server, &token, &second).await,
            [json!("ACME-EU-2027-000002")]
        );
        assert_eq!(
            numbers(&server, &token, &first).await,
            [json!("INV-2027-000001")]
        );

        // The renewals of 1 January are the first numbers of 2028 (the merchant's clock).
        server.advance(&token, "2028-01-02T00:00:00Z").await;
        let mut renewals = Vec::new();
        for key in [&first, &second] {
            let newest = numbers(&server, &token, key).await[0].clone();
            renewals.push(newest.as_str().expect("renewal numbered").to_string());
        }
        assert_gap_free(&renewals, "ACME-EU");
        assert!(
            renewals.iter().all(|n| n.starts_with("ACME-EU-2028-")),
            "{renewals:?}"
        );

        // Later in the year the sequence goes on.
        let third = active(&server, &token, "numbered-3", "2028-01-10T00:00:00Z").await;
        assert_eq!(
            numbers(&server, &token, &third).await,
            [json!("ACME-EU-2028-000003")]
        );
    }
);

backend_test!(
    concurrent_payments_in_one_or_two_processes_take_every_number_once,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let keys = unpaid(&server, &token, "parallel", 12).await;
        // Two processes on PostgreSQL; on SQLite (one process per file) one.
        let second = match server.server.state.store.backend() {
            recur::store::Backend::Postgres => Some(server.second_process().await),
            recur::store::Backend::Sqlite => None,
        };
        let other = second.as_ref().unwrap_or(&server);
        let replies = futures::future::join_all(keys.iter().enumerate().map(|(i, key)| {
            let target = if i % 2 == 0 { &server } else { other };
            target.pay(&token, key)
        }))
        .await;
        for reply in &replies {
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        }
        let all = all_numbers(&server, &token, &keys).await;
        assert_eq!(all.len(), keys.len());
        assert_gap_free(&all, "INV");
        assert!(all.iter().all(|n| n.starts_with("INV-2027-")), "{all:?}");
    }
);
