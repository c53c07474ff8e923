//! Card fingerprints (`CreditCardDigest`) are keyed per merchant: one card has the same
//! fingerprint at one merchant and a different one at every other, in the database and in the
//! notifications, so it cannot be linked across merchants.

use recur::merchants::MerchantCredentials;
use recur::store::merchants::Mode;
use serde_json::json;

use crate::backend_test;
use crate::harness::TestServer;

const CARD: &str = "4242424242424242";

/// Two customers of `merchant` pay a membership each with [`CARD`]; returns the payment methods'
/// stored fingerprints and the `CreditCardDigest` of each charge's notification.
async fn pay_twice(
    server: &TestServer,
    merchant: &MerchantCredentials,
    tag: &str,
) -> (Vec<String>, Vec<String>) {
    let token = server.token_for(merchant).await;
    let mut digests = Vec::new();
    for i in 0..2 {
        let mut customer = server.customer_body(&format!("{tag}-{i}@example.com"));
        customer["processorKey"] = json!(merchant.processor_key);
        let reply = server
            .call(
                reqwest::Method::POST,
                "/api/subscriptions/v1/customer",
                Some(&token),
                Some(customer),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let customer_key = reply.body["customerKey"].as_str().unwrap();
        let order = format!("{tag}-order-{i}");
        let body = server.membership_body(customer_key, &order);
        server
            .active_membership(&token, "2027-05-01T00:00:00Z", body)
            .await;
        let notification = server
            .events(&order)
            .await
            .into_iter()
            .find(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
            .expect("the charge is notified");
        digests.push(
            notification["CreditCardDigest"]
                .as_str()
                .expect("a card digest")
                .to_string(),
        );
    }
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT fingerprint FROM payment_methods WHERE merchant_id = $1")
            .bind(merchant.merchant_id)
            .fetch_all(server.server.state.store.pool())
            .await
            .unwrap();
    (stored, digests)
}

backend_test!(
    one_card_has_a_different_fingerprint_at_each_merchant,
    |server: TestServer| async move {
        let other = server.another_merchant(Mode::Sandbox).await;
        let (stored_a, digests_a) = pay_twice(&server, &server.merchant, "fp-a").await;
        let (stored_b, digests_b) = pay_twice(&server, &other, "fp-b").await;
        for (stored, digests) in [(&stored_a, &digests_a), (&stored_b, &digests_b)] {
            assert_eq!(stored.len(), 2);
            // Within one merchant: the same card, the same fingerprint, as before.
            assert_eq!(stored[0], stored[1]);
            assert_eq!(digests, stored);
            assert!(!stored[0].contains(CARD));
        }
        assert_ne!(stored_a[0], stored_b[0], "not linkable across merchants");
    }
);
