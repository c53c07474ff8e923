//! Coupons on memberships (DESIGN §15): redeemed by `couponCode` on create and update, their
//! discount on the period invoices they cover (before taxes, never below zero), and the
//! redemption counted once per membership and given back when the update is declined.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{coupon, errors, redeemed, send};
use crate::fixtures::memberships::{body_for, key, update};
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

backend_test!(
    a_repeating_coupon_discounts_its_periods_before_taxes,
    |server: TestServer| async move {
        let token = server.token().await;
        coupon(
            &server,
            &token,
            json!({"code": "THREE", "percentOff": "20", "duration": "repeating", "durationInCycles": 2}),
        )
        .await;
        let vat = send(
            &server,
            Method::POST,
            "/tax-rates",
            &token,
            Some(json!({"name": "VAT", "percentage": "19", "inclusive": false})),
        )
        .await;
        let mut body = body_for(&server, &token, "k1@example.com", "order-k1").await;
        body["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "50.00"});
        body["couponCode"] = json!("three");
        body["taxRateIds"] = json!([vat.body["taxRateId"]]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let first = &record["invoices"][0];
        assert_eq!(first["subtotal"], "50.00");
        assert_eq!(first["discount"], "10.00");
        assert_eq!(first["coupon"]["code"], "THREE");
        assert_eq!(first["coupon"]["percentOff"], "20");
        assert_eq!(first["taxes"][0]["amount"], "7.60");
        assert_eq!(first["total"], "47.60");
        assert_eq!(first["amountPaid"], "47.60");
        assert_eq!(record["discount"]["cyclesLeft"], 1);
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "47.60");
        assert_eq!(m["discount"], Value::Null, "its two periods are used");
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["discount"], "0.00");
        assert_eq!(m["invoices"][0]["coupon"], Value::Null);
        assert_eq!(m["invoices"][0]["amountPaid"], "59.50");
        assert_eq!(redeemed(&server, "THREE").await, 1);
        // The invoice page and the receipt e-mail show the discount line.
        let receipt: String = sqlx::query_scalar(
            "SELECT text_body FROM emails WHERE kind = 'receipt' AND to_address = $1 ORDER BY id",
        )
        .bind("k1@example.com")
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        assert!(receipt.contains("Discount (THREE)"), "{receipt}");
    }
);

backend_test!(
    an_amount_off_never_takes_a_total_below_zero,
    |server: TestServer| async move {
        let token = server.token().await;
        coupon(
            &server,
            &token,
            json!({"code": "BIG", "amountOff": "100.00", "currency": "EUR", "duration": "forever"}),
        )
        .await;
        let mut body = body_for(&server, &token, "k2@example.com", "order-k2").await;
        body["couponCode"] = json!("BIG");
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let first = &record["invoices"][0];
        assert_eq!(first["discount"], "29.97");
        assert_eq!(first["total"], "0.00");
        assert_eq!(first["amountPaid"], "0.00");
        assert_eq!(record["status"], "Active");
        assert_eq!(record["discount"]["cyclesLeft"], Value::Null);
        assert_eq!(record["creditBalance"], "0.00");
    }
);

backend_test!(
    coupon_codes_are_checked_and_counted_once,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        coupon(
            &server,
            &token,
            json!({"code": "ONE", "percentOff": "10", "duration": "once", "maxRedemptions": 1}),
        )
        .await;
        coupon(
            &server,
            &token,
            json!({"code": "DOLLARS", "amountOff": "5", "currency": "USD", "duration": "once"}),
        )
        .await;
        coupon(
            &server,
            &token,
            json!({"code": "SOON", "percentOff": "10", "duration": "once", "expiresAt": "2027-04-02T00:00:00Z"}),
        )
        .await;
        let post = |body: Value| server.call(Method::POST, MEMBERSHIP, Some(&token), Some(body));
        let mut body = body_for(&server, &token, "k3@example.com", "order-k3").await;
        for (code, message) in [
            ("NOPE", "does not match a coupon of this merchant"),
            ("DOLLARS", "is for another currency"),
            ("bad code!", "must be 1 to 40 letters, digits, '-' or '_'"),
        ] {
            body["couponCode"] = json!(code);
            let reply = post(body.clone()).await;
            assert_eq!(errors(&reply)["couponCode"][0], message, "{code}");
        }
        body["couponCode"] = json!("one");
        let created = post(body.clone()).await;
        assert_eq!(created.status, 201, "{}", created.body);
        assert_eq!(created.body["discount"]["code"], "ONE");
        // The same order again answers the existing membership and redeems nothing.
        let again = post(body.clone()).await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(redeemed(&server, "ONE").await, 1);
        // The limit is reached: another membership is refused, counting nothing.
        let mut other = body_for(&server, &token, "k4@example.com", "order-k4").await;
        other["couponCode"] = json!("ONE");
        let reply = post(other.clone()).await;
        assert_eq!(
            errors(&reply)["couponCode"][0],
            "has reached its redemption limit"
        );
        server.advance(&token, "2027-04-02T00:00:00Z").await;
        other["couponCode"] = json!("SOON");
        let reply = post(other).await;
        assert_eq!(errors(&reply)["couponCode"][0], "has expired");
        assert_eq!(redeemed(&server, "SOON").await, 0);
    }
);

backend_test!(
    an_update_gives_or_removes_a_coupon_and_a_declined_one_counts_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        coupon(
            &server,
            &token,
            json!({"code": "LOYAL", "percentOff": "50", "duration": "forever"}),
        )
        .await;
        let body = body_for(&server, &token, "k5@example.com", "order-k5").await;
        let customer = body["customerKey"].as_str().unwrap().to_string();
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let given = update(
            &server,
            &token,
            json!({"membershipKey": key, "couponCode": "loyal"}),
        )
        .await;
        assert_eq!(given.status, 200, "{}", given.body);
        assert_eq!(given.body["membership"]["discount"]["code"], "LOYAL");
        assert_eq!(
            given.body["proration"],
            Value::Null,
            "from the next invoice on"
        );
        let events = server.events("order-k5").await;
        assert_eq!(
            events.last().unwrap()["Membership"]["Updates"],
            json!({"CouponCode": "LOYAL"})
        );
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["discount"], "14.99");
        assert_eq!(m["invoices"][0]["amountPaid"], "14.98");
        let removed = update(
            &server,
            &token,
            json!({"membershipKey": key, "couponCode": null}),
        )
        .await;
        assert_eq!(removed.body["membership"]["discount"], Value::Null);
        assert_eq!(redeemed(&server, "LOYAL").await, 1);

        // With a declined upgrade in the same request nothing changes and nothing is counted.
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        server.advance(&token, "2027-05-16T00:00:00Z").await;
        let declined = update(
            &server,
            &token,
            json!({"membershipKey": key, "quantity": 6, "couponCode": "LOYAL"}),
        )
        .await;
        declined.problem(402);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["discount"], Value::Null);
        assert_eq!(m["pricingInfo"]["quantity"], 3);
        assert_eq!(redeemed(&server, "LOYAL").await, 1);
    }
);
