//! `pricePerUnit` or `quantity` given alone: accepted as the spec allows, `totalAmount` is the
//! price per period, and an update of a part keeps the other one (given or implied by the total).

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

/// A paid membership of a new customer (`email`) priced by `pricing`, paid at the test clock's
/// current time.
async fn paid(server: &TestServer, token: &str, email: &str, order: &str, pricing: Value) -> Value {
    let customer = server.create_customer(token, email).await;
    server
        .attach_card(token, &customer, "4242424242424242")
        .await;
    let mut body = server.membership_body(&customer, order);
    body["pricingInfo"] = pricing;
    let created = server.create_membership(token, body).await;
    let key = created["membershipKey"].as_str().unwrap();
    let paid = server.pay(token, key).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    paid.body
}

/// `PUT /membership` with `body` (expects 200); returns the response.
async fn update(server: &TestServer, token: &str, body: Value) -> Value {
    let reply = server
        .call(Method::PUT, MEMBERSHIP, Some(token), Some(body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The `Updates` of every `SUBSCRIPTION_UPDATED` event of an order.
async fn updates(server: &TestServer, order: &str) -> Vec<Value> {
    server
        .events(order)
        .await
        .into_iter()
        .filter(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
        .map(|e| e["Membership"]["Updates"].clone())
        .collect()
}

backend_test!(
    a_price_part_alone_is_accepted_and_the_total_is_charged,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        // 30.00 at 7.00 a unit (30/7 units), and 100.00 for three units (33.333… each).
        let per_unit = paid(
            &server,
            &token,
            "p1@example.com",
            "order-per-unit",
            json!({"currency": "EUR", "totalAmount": "30.00", "pricePerUnit": 7}),
        )
        .await;
        let quantity = paid(
            &server,
            &token,
            "p2@example.com",
            "order-quantity",
            json!({"currency": "EUR", "totalAmount": "100.00", "quantity": 3}),
        )
        .await;
        assert_eq!(
            per_unit["pricingInfo"],
            json!({"currency": "EUR", "totalAmount": "30.00", "pricePerUnit": "7.00", "quantity": null})
        );
        assert_eq!(
            quantity["pricingInfo"],
            json!({"currency": "EUR", "totalAmount": "100.00", "pricePerUnit": null, "quantity": 3})
        );
        for (record, total) in [(&per_unit, "30.00"), (&quantity, "100.00")] {
            let invoice = &record["invoices"][0];
            assert_eq!(invoice["status"], "Paid");
            assert_eq!(
                invoice["amountPaid"], total,
                "the period price is totalAmount"
            );
        }
        // A whole implied quantity names the units on the invoice; a fractional one does not.
        assert_eq!(
            per_unit["invoices"][0]["lines"][0]["description"],
            "Gold plan"
        );
        assert_eq!(
            quantity["invoices"][0]["lines"][0]["description"],
            "Gold plan × 3"
        );
        // The renewal charges the total as well.
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        for (record, total) in [(&per_unit, "30.00"), (&quantity, "100.00")] {
            let key = record["membershipKey"].as_str().unwrap();
            let renewed = server.membership(&token, key).await;
            assert_eq!(renewed["invoices"][0]["kind"], "renewal");
            assert_eq!(renewed["invoices"][0]["amountPaid"], total);
        }
        // Both parts given are still held to the total.
        let customer = server.create_customer(&token, "p3@example.com").await;
        let mut body = server.membership_body(&customer, "order-both");
        body["pricingInfo"] =
            json!({"currency": "EUR", "totalAmount": "30.00", "pricePerUnit": 7, "quantity": 4});
        let reply = server
            .call(Method::POST, MEMBERSHIP, Some(&token), Some(body))
            .await;
        assert_eq!(
            reply.problem(400)["pricingInfo.totalAmount"],
            json!(["must equal pricePerUnit multiplied by quantity"])
        );
    }
);

backend_test!(
    an_update_of_one_part_keeps_the_other,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        let per_unit = paid(
            &server,
            &token,
            "p1@example.com",
            "order-per-unit",
            json!({"currency": "EUR", "totalAmount": "30.00", "pricePerUnit": "7.00"}),
        )
        .await;
        let quantity = paid(
            &server,
            &token,
            "p2@example.com",
            "order-quantity",
            json!({"currency": "EUR", "totalAmount": "100.00", "quantity": 3}),
        )
        .await;
        // Half of the 30-day April period is left.
        server.advance(&token, "2027-04-16T00:00:00Z").await;

        // Twice the unit price for the same (implied) units: twice the total; half a period of
        // the 30.00 difference is charged.
        let key = per_unit["membershipKey"].as_str().unwrap();
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "pricePerUnit": "14.00"}),
        )
        .await;
        assert_eq!(reply["proration"]["amount"], "15.00");
        assert_eq!(
            reply["membership"]["pricingInfo"],
            json!({"currency": "EUR", "totalAmount": "60.00", "pricePerUnit": "14.00", "quantity": null})
        );
        // A quantity joins the unit price: 4 × 14.00.
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 4}),
        )
        .await;
        assert_eq!(reply["membership"]["pricingInfo"]["totalAmount"], "56.00");
        assert_eq!(reply["proration"]["amount"], "-2.00");
        assert_eq!(
            updates(&server, "order-per-unit").await,
            [json!({"PricePerUnit": "14.00"}), json!({"Quantity": 4})]
        );

        // One more unit at the implied 33.333…: 133.33 (rounded half up), half of 33.33 due.
        let key = quantity["membershipKey"].as_str().unwrap();
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 4}),
        )
        .await;
        assert_eq!(
            reply["membership"]["pricingInfo"],
            json!({"currency": "EUR", "totalAmount": "133.33", "pricePerUnit": null, "quantity": 4})
        );
        assert_eq!(reply["proration"]["amount"], "16.67");
        // The same quantity again changes nothing and says nothing.
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 4}),
        )
        .await;
        assert_eq!(reply["proration"], Value::Null);
        assert_eq!(
            updates(&server, "order-quantity").await,
            [json!({"Quantity": 4})]
        );
        // The next period is charged the new total.
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let renewed = server.membership(&token, key).await;
        assert_eq!(renewed["invoices"][0]["kind"], "renewal");
        assert_eq!(renewed["invoices"][0]["amountPaid"], "133.33");
    }
);
