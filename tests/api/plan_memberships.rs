//! Memberships made from the catalog (DESIGN §15): `priceId` + `quantity` in place of
//! `pricingInfo` and `billingCycle`, the price's trial, and switching to another price now
//! (prorated) or at the next period.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{errors, price_with, product, send};
use crate::fixtures::memberships::{key, update};
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

/// A create body for `customer` from the catalog price `price`.
fn plan_body(customer: &str, order: &str, price: &str) -> Value {
    json!({
        "customerKey": customer,
        "subscriptionName": "Team plan",
        "webhookUrl": "https://merchant.example/hooks",
        "productInfo": {"orderId": order},
        "priceId": price,
        "quantity": 3
    })
}

backend_test!(
    a_membership_from_a_price_bills_its_terms_and_starts_its_trial,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-02-01T10:00:00Z").await;
        let team = product(&server, &token, "Team").await;
        let monthly = price_with(&server, &token, &team, json!({"trialDays": 7})).await;
        let customer = server.create_customer(&token, "c1@example.com").await;
        server
            .attach_card(&token, &customer, "4242424242424242")
            .await;
        let created = server
            .create_membership(&token, plan_body(&customer, "order-c1", &monthly))
            .await;
        assert_eq!(created["priceId"], monthly.as_str());
        assert_eq!(
            created["pricingInfo"],
            json!({"currency": "EUR", "totalAmount": "30.00", "pricePerUnit": "10.00", "quantity": 3})
        );
        assert_eq!(
            created["billingCycle"],
            json!({"intervalType": "Monthly", "intervalCount": 1})
        );
        assert_eq!(created["trialDays"], 7, "the price's trial");
        let started = server.pay(&token, &key(&created)).await;
        assert_eq!(started.body["status"], "Trialing");
        assert_eq!(started.body["trialEnd"], "2027-02-08T10:00:00Z");
        server.advance(&token, "2027-02-08T10:00:00Z").await;
        let m = server.membership(&token, &key(&created)).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["invoices"][0]["amountPaid"], "30.00");
        assert_eq!(m["invoices"][0]["lines"][0]["description"], "Team plan × 3");

        // trialDays on the membership wins over the price's; without one the price's applies.
        let mut body = plan_body(&customer, "order-c1b", &monthly);
        body["trialDays"] = json!(30);
        body.as_object_mut().unwrap().remove("quantity");
        let own = server.create_membership(&token, body).await;
        assert_eq!(own["trialDays"], 30);
        assert_eq!(own["pricingInfo"]["quantity"], 1);
        assert_eq!(own["pricingInfo"]["totalAmount"], "10.00");
    }
);

backend_test!(
    switching_price_now_prorates_and_next_period_waits,
    |server: TestServer| async move {
        let token = server.token().await;
        let team = product(&server, &token, "Team").await;
        let basic = price_with(&server, &token, &team, json!({})).await;
        let pro = price_with(&server, &token, &team, json!({"unitAmount": "20.00"})).await;
        let yearly = price_with(
            &server,
            &token,
            &team,
            json!({"unitAmount": "100.00", "intervalType": "Annually"}),
        )
        .await;
        let customer = server.create_customer(&token, "c2@example.com").await;
        let record = server
            .active_membership(
                &token,
                "2027-04-01T00:00:00Z",
                plan_body(&customer, "order-c2", &basic),
            )
            .await;
        let key = key(&record);
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        // Now: half of (60.00 − 30.00) is charged.
        let up = update(
            &server,
            &token,
            json!({"membershipKey": key, "priceId": pro}),
        )
        .await;
        assert_eq!(up.status, 200, "{}", up.body);
        assert_eq!(up.body["proration"]["amount"], "15.00");
        assert_eq!(up.body["membership"]["priceId"], pro.as_str());
        assert_eq!(up.body["membership"]["pricingInfo"]["totalAmount"], "60.00");
        let events = server.events("order-c2").await;
        let updated = events.last().unwrap();
        assert_eq!(updated["Membership"]["Updates"]["PriceId"], pro.as_str());
        assert_eq!(updated["Membership"]["Updates"]["PricePerUnit"], "20.00");
        // Next period: a yearly price from the renewal on, nothing charged now.
        let later = update(
            &server,
            &token,
            json!({"membershipKey": key, "priceId": yearly, "quantity": 1, "effective": "nextPeriod"}),
        )
        .await;
        assert_eq!(later.status, 200, "{}", later.body);
        assert_eq!(later.body["proration"], Value::Null);
        let pending = &later.body["membership"]["pendingUpdate"];
        assert_eq!(pending["priceId"], yearly.as_str());
        assert_eq!(pending["billingCycle"]["intervalType"], "Annually");
        assert_eq!(pending["pricingInfo"]["totalAmount"], "100.00");
        assert_eq!(later.body["membership"]["priceId"], pro.as_str());
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["priceId"], yearly.as_str());
        assert_eq!(m["billingCycle"]["intervalType"], "Annually");
        assert_eq!(m["currentPeriodEnd"], "2028-05-01T00:00:00Z");
        assert_eq!(m["invoices"][0]["amountPaid"], "100.00");
    }
);

backend_test!(catalog_refusals, |server: TestServer| async move {
    let token = server.token().await;
    let team = product(&server, &token, "Team").await;
    let basic = price_with(&server, &token, &team, json!({})).await;
    let usd = price_with(&server, &token, &team, json!({"currency": "USD"})).await;
    let customer = server.create_customer(&token, "c3@example.com").await;
    let post = |body: Value| server.call(Method::POST, MEMBERSHIP, Some(&token), Some(body));

    let mut both = plan_body(&customer, "order-c3", &basic);
    both["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "10.00"});
    assert!(errors(&post(both).await)["priceId"].is_array());
    let unknown = plan_body(&customer, "order-c3", "price_unknown");
    assert!(errors(&post(unknown).await)["priceId"].is_array());
    let mut zero = plan_body(&customer, "order-c3", &basic);
    zero["quantity"] = json!(0);
    assert!(errors(&post(zero).await)["quantity"].is_array());
    let mut inline = server.membership_body(&customer, "order-c3");
    inline["quantity"] = json!(2);
    assert!(errors(&post(inline).await)["quantity"].is_array());
    // Neither a price nor pricingInfo: pricingInfo and billingCycle are required.
    let mut neither = plan_body(&customer, "order-c3", &basic);
    neither.as_object_mut().unwrap().remove("priceId");
    neither.as_object_mut().unwrap().remove("quantity");
    let reply = errors(&post(neither).await);
    assert!(reply["pricingInfo"].is_array() && reply["billingCycle"].is_array());
    // An archived price sells nothing new.
    let archived = price_with(&server, &token, &team, json!({})).await;
    let patched = send(
        &server,
        Method::PATCH,
        &format!("/prices/{archived}"),
        &token,
        Some(json!({"active": false})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let body = plan_body(&customer, "order-c3", &archived);
    assert!(errors(&post(body).await)["priceId"].is_array());
    // Another merchant's price is unknown here.
    let other = server
        .another_merchant(recur::store::merchants::Mode::Sandbox)
        .await;
    let other_token = server.token_for(&other).await;
    let theirs_product = product(&server, &other_token, "Theirs").await;
    let theirs = price_with(&server, &other_token, &theirs_product, json!({})).await;
    assert!(errors(&post(plan_body(&customer, "order-c3", &theirs)).await)["priceId"].is_array());

    // Updates: a price of another currency, inline fields on a catalog membership.
    let created = server
        .create_membership(&token, plan_body(&customer, "order-c3", &basic))
        .await;
    let key = key(&created);
    let reply = update(
        &server,
        &token,
        json!({"membershipKey": key, "priceId": usd}),
    )
    .await;
    assert!(errors(&reply)["priceId"].is_array());
    let reply = update(
        &server,
        &token,
        json!({"membershipKey": key, "pricePerUnit": "12.00"}),
    )
    .await;
    assert!(errors(&reply)["pricePerUnit"].is_array());
    let reply = update(
        &server,
        &token,
        json!({"membershipKey": key, "priceId": basic, "intervalType": "Weekly"}),
    )
    .await;
    assert!(errors(&reply)["intervalType"].is_array());
    // Quantity alone keeps the price.
    let reply = update(
        &server,
        &token,
        json!({"membershipKey": key, "quantity": 5}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["membership"]["priceId"], basic.as_str());
    assert_eq!(
        reply.body["membership"]["pricingInfo"]["totalAmount"],
        "50.00"
    );
});
