//! Coupons (DESIGN §15): creation, list, read, archive, every refusal, other merchants' ids and
//! read keys; and the store's redemption the billing engine calls, its refusals and its count
//! under concurrent redemptions.

use std::sync::Arc;

use recur::store::coupons::{self, Refusal};
use recur::store::merchants::Mode;
use recur_domain::coupon::{CouponDuration, CouponOff};
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{altered, coupon, errors, read_key, send};
use crate::fixtures::lists::{listed, page, refused};
use crate::harness::TestServer;

/// Redeems `code` for the test's merchant in a transaction of its own, at the merchant's time.
async fn redeem(
    server: &TestServer,
    code: &str,
    currency: &str,
) -> Result<coupons::Coupon, Refusal> {
    let state = &server.server.state;
    let merchant_id = server.merchant.merchant_id;
    let now = state.merchant_now(merchant_id).await.unwrap();
    let mut tx = state.store.begin().await.unwrap();
    let outcome = coupons::redeem(&mut tx, merchant_id, code, currency, now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    outcome
}

backend_test!(
    coupons_are_created_listed_read_and_archived,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let percent = coupon(
            &server,
            &token,
            json!({"code": "spring-20", "percentOff": "20.50", "duration": "Once"}),
        )
        .await;
        let id = percent["couponId"].as_str().unwrap().to_string();
        let random = id.strip_prefix("cpn_").unwrap();
        assert!(random.len() == 24 && random.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(
            percent,
            json!({"couponId": id, "code": "SPRING-20", "percentOff": "20.5", "amountOff": null,
                "currency": null, "duration": "once", "durationInCycles": null,
                "maxRedemptions": null, "timesRedeemed": 0, "expiresAt": null, "active": true,
                "createdAt": "2030-01-01T00:00:00Z"})
        );
        let amount = coupon(
            &server,
            &token,
            json!({"code": "WELCOME", "amountOff": "5", "currency": "eur",
                "duration": "repeating", "durationInCycles": 3, "maxRedemptions": 10,
                "expiresAt": "2031-01-01T00:00:00"}),
        )
        .await;
        assert_eq!(amount["amountOff"], "5.00");
        assert_eq!(amount["percentOff"], Value::Null);
        assert_eq!(amount["currency"], "EUR");
        assert_eq!(amount["duration"], "repeating");
        assert_eq!(amount["durationInCycles"], 3);
        assert_eq!(amount["maxRedemptions"], 10);
        assert_eq!(amount["expiresAt"], "2031-01-01T00:00:00Z");
        let forever = coupon(
            &server,
            &token,
            json!({"code": "LOYAL", "percentOff": "100", "duration": "forever",
                "expiresAt": "2130-01-01T00:00:00Z"}),
        )
        .await;
        let path = format!("/coupons/{id}");
        let read = send(&server, Method::GET, &path, &token, None).await;
        assert_eq!(read.body, percent);

        // The terms never change; `active` does.
        for term in [
            "code",
            "percentOff",
            "amountOff",
            "currency",
            "duration",
            "durationInCycles",
            "maxRedemptions",
            "expiresAt",
        ] {
            let body = json!({term: null, "active": false});
            let reply = send(&server, Method::PATCH, &path, &token, Some(body)).await;
            let message = errors(&reply)[term][0].as_str().unwrap().to_string();
            assert!(message.contains("cannot change"), "{term}: {message}");
        }
        let reply = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": 1})),
        )
        .await;
        assert!(errors(&reply)["active"].is_array());
        let unchanged = send(&server, Method::PATCH, &path, &token, Some(json!({}))).await;
        assert_eq!(unchanged.body, percent);
        let archived = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;
        assert_eq!(archived.status, 200, "{}", archived.body);
        assert_eq!(archived.body["active"], false);

        // Archived coupons stay listed, newest first, a page at a time.
        let all = listed(&server, &token, "/coupons", "couponId").await;
        let created: Vec<String> = [&forever, &amount, &percent]
            .iter()
            .map(|c| c["couponId"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(all, created);
        let first = page(&server, &token, "/coupons?limit=2").await;
        assert_eq!(first["data"][1]["code"], "WELCOME");
        let cursor = first["nextCursor"].as_str().unwrap();
        let next = page(
            &server,
            &token,
            &format!("/coupons?limit=2&cursor={cursor}"),
        )
        .await;
        assert_eq!(next["data"][0]["couponId"], id.as_str());
        assert_eq!(next["data"][0]["active"], false);
        assert_eq!(next["hasMore"], false);
        let bad = format!("/coupons?cursor={}", altered(cursor));
        refused(&server, &token, &bad, "cursor").await;
        refused(
            &server,
            &token,
            &format!("/products?cursor={cursor}"),
            "cursor",
        )
        .await;
        refused(&server, &token, "/coupons?limit=101", "limit").await;
    }
);

backend_test!(
    coupon_refusals_name_every_field,
    |server: TestServer| async move {
        let token = server.token().await;
        // The merchant's clock decides: years ahead of the wall clock here.
        server.advance(&token, "2031-06-01T00:00:00Z").await;
        let post = |body: Value| send(&server, Method::POST, "/coupons", &token, Some(body));
        let missing = post(json!({})).await;
        let e = errors(&missing);
        for field in ["code", "duration", "percentOff", "amountOff"] {
            assert!(e[field].is_array(), "{field}: {e}");
        }
        let long = "A".repeat(41);
        for (body, fields) in [
            (
                json!({"code": "A", "percentOff": "10", "amountOff": "1", "currency": "EUR",
                    "duration": "once"}),
                vec!["percentOff", "amountOff"],
            ),
            (
                json!({"code": "A", "duration": "once"}),
                vec!["percentOff", "amountOff"],
            ),
            (
                json!({"code": "A", "amountOff": "1", "duration": "once"}),
                vec!["currency"],
            ),
            (
                json!({"code": "A", "percentOff": "10", "currency": "EUR", "duration": "once"}),
                vec!["currency"],
            ),
            (
                json!({"code": "A", "amountOff": "1.234", "currency": "EUR", "duration": "once"}),
                vec!["amountOff"],
            ),
            (
                json!({"code": "A", "amountOff": "1.5", "currency": "JPY", "duration": "once"}),
                vec!["amountOff"],
            ),
            (
                json!({"code": "A", "amountOff": "10000000000000", "currency": "EUR",
                    "duration": "once"}),
                vec!["amountOff"],
            ),
            (
                json!({"code": "A", "amountOff": "0", "currency": "EUR", "duration": "once"}),
                vec!["amountOff"],
            ),
            (
                json!({"code": "A", "amountOff": "1", "currency": "XXX", "duration": "once"}),
                vec!["currency"],
            ),
            (
                json!({"code": "A", "percentOff": "0", "duration": "once"}),
                vec!["percentOff"],
            ),
            (
                json!({"code": "A", "percentOff": "100.01", "duration": "once"}),
                vec!["percentOff"],
            ),
            (
                json!({"code": "A", "percentOff": 10, "duration": "once"}),
                vec!["percentOff"],
            ),
            (
                json!({"code": "with space", "percentOff": "1", "duration": "once"}),
                vec!["code"],
            ),
            (
                json!({"code": "", "percentOff": "1", "duration": "once"}),
                vec!["code"],
            ),
            (
                json!({"code": long, "percentOff": "1", "duration": "once"}),
                vec!["code"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "weekly"}),
                vec!["duration"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "repeating"}),
                vec!["durationInCycles"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once", "durationInCycles": 2}),
                vec!["durationInCycles"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "repeating",
                    "durationInCycles": 121}),
                vec!["durationInCycles"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once", "maxRedemptions": 0}),
                vec!["maxRedemptions"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once",
                    "maxRedemptions": 1_000_000_001}),
                vec!["maxRedemptions"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once",
                    "expiresAt": "2032-01-01"}),
                vec!["expiresAt"],
            ),
            // Future on the wall clock, past on the merchant's.
            (
                json!({"code": "A", "percentOff": "1", "duration": "once",
                    "expiresAt": "2030-01-01T00:00:00Z"}),
                vec!["expiresAt"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once",
                    "expiresAt": "2031-06-01T00:00:00"}),
                vec!["expiresAt"],
            ),
            (
                json!({"code": "A", "percentOff": "1", "duration": "once",
                    "expiresAt": "2131-06-01T00:00:01Z"}),
                vec!["expiresAt"],
            ),
        ] {
            let reply = post(body.clone()).await;
            let e = errors(&reply);
            for field in fields {
                assert!(e[field].is_array(), "{body}: {e}");
            }
        }
        let at_limits = json!({"code": "A".repeat(40), "amountOff": "9999999999999.99",
            "currency": "EUR", "duration": "repeating", "durationInCycles": 120,
            "maxRedemptions": 1_000_000_000, "expiresAt": "2131-06-01T00:00:00Z"});
        assert_eq!(post(at_limits).await.status, 201);

        // A code the merchant has, in any letter case and archived or not: 409 on `code`.
        let first = coupon(
            &server,
            &token,
            json!({"code": "Summer", "percentOff": "10", "duration": "once"}),
        )
        .await;
        let path = format!("/coupons/{}", first["couponId"].as_str().unwrap());
        send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;
        let again = post(
            json!({"code": "sUMMER", "amountOff": "1", "currency": "USD",
            "duration": "forever"}),
        )
        .await;
        assert!(again.problem(409)["code"].is_array(), "{}", again.body);
        let listed_codes = listed(&server, &token, "/coupons", "code").await;
        assert_eq!(listed_codes.iter().filter(|c| *c == "SUMMER").count(), 1);

        // Another merchant may have the same code, and sees none of these.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let theirs = json!({"code": "summer", "percentOff": "5", "duration": "once"});
        coupon(&server, &other_token, theirs).await;
        send(&server, Method::GET, &path, &other_token, None)
            .await
            .problem(404);
        let archive = Some(json!({"active": true}));
        send(&server, Method::PATCH, &path, &other_token, archive.clone())
            .await
            .problem(404);
        assert_eq!(
            page(&server, &other_token, "/coupons").await["data"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        for method in [Method::GET, Method::PATCH] {
            let body = (method == Method::PATCH).then(|| json!({"active": false}));
            send(&server, method, "/coupons/cpn_unknown", &token, body)
                .await
                .problem(404);
        }
        // A read key reads and changes nothing.
        let key = read_key(&server, &token).await;
        assert_eq!(
            send(&server, Method::GET, &path, &key, None).await.status,
            200
        );
        let body = json!({"code": "READER", "percentOff": "5", "duration": "once"});
        send(&server, Method::POST, "/coupons", &key, Some(body))
            .await
            .problem(403);
        send(&server, Method::PATCH, &path, &key, archive)
            .await
            .problem(403);
        assert_eq!(
            send(&server, Method::GET, &path, &token, None).await.body["active"],
            false
        );
    }
);

backend_test!(
    redemption_refusals_say_why,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let once = json!({"code": "ONCE", "percentOff": "12.5", "duration": "once",
            "maxRedemptions": 1});
        let once_id = coupon(&server, &token, once).await["couponId"].clone();
        let euros = json!({"code": "EUROS", "amountOff": "5", "currency": "EUR",
            "duration": "repeating", "durationInCycles": 3, "expiresAt": "2030-02-01T00:00:00"});
        coupon(&server, &token, euros).await;
        let archived = json!({"code": "OLD", "percentOff": "5", "duration": "forever"});
        let archived = coupon(&server, &token, archived).await;
        let path = format!("/coupons/{}", archived["couponId"].as_str().unwrap());
        send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;

        // Any letter case; the coupon as counted, with what a membership takes from it.
        let redeemed = redeem(&server, "once", "JPY").await.expect("redeemed");
        assert_eq!(redeemed.coupon_key, once_id.as_str().unwrap());
        assert_eq!(redeemed.times_redeemed, 1);
        assert_eq!(redeemed.currency, None);
        let applied = redeemed.applied();
        assert_eq!(applied.code, "ONCE");
        assert_eq!(applied.off, CouponOff::PercentOff(Decimal::new(125, 1)));
        let discount = redeemed.discount();
        assert_eq!(discount.cycles_left, Some(1));
        assert_eq!(
            redeem(&server, "ONCE", "EUR").await,
            Err(Refusal::Exhausted)
        );
        let euros = redeem(&server, "Euros", "EUR").await.expect("redeemed");
        assert_eq!(euros.off, CouponOff::AmountOff(500));
        assert_eq!(euros.duration, CouponDuration::Repeating(3));
        assert_eq!(euros.discount().cycles_left, Some(3));
        assert_eq!(
            redeem(&server, "EUROS", "USD").await,
            Err(Refusal::WrongCurrency)
        );
        assert_eq!(redeem(&server, "OLD", "EUR").await, Err(Refusal::Archived));
        assert_eq!(redeem(&server, "NOPE", "EUR").await, Err(Refusal::Unknown));
        // Expiry follows the merchant's clock.
        server.advance(&token, "2030-02-01T00:00:00Z").await;
        assert_eq!(redeem(&server, "EUROS", "EUR").await, Err(Refusal::Expired));
        for (refusal, message) in [
            (Refusal::Unknown, "does not match a coupon of this merchant"),
            (Refusal::Archived, "has been archived"),
            (Refusal::Expired, "has expired"),
            (Refusal::Exhausted, "has reached its redemption limit"),
            (Refusal::WrongCurrency, "is for another currency"),
        ] {
            assert_eq!(refusal.message(), message);
        }
        // What was refused was not counted; the record shows the count.
        let record = send(&server, Method::GET, "/coupons?limit=3", &token, None).await;
        let counts: Vec<&Value> = record.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["timesRedeemed"])
            .collect();
        assert_eq!(counts, [&json!(0), &json!(1), &json!(1)]);

        // Previews read without counting, in any letter case; other merchants' codes are none.
        let state = &server.server.state;
        let merchant_id = server.merchant.merchant_id;
        let preview = coupons::by_code(state.store.pool(), merchant_id, "euros")
            .await
            .unwrap()
            .expect("found");
        assert_eq!(preview.times_redeemed, 1);
        let other = server.another_merchant(Mode::Sandbox).await;
        let none = coupons::by_code(state.store.pool(), other.merchant_id, "EUROS")
            .await
            .unwrap();
        assert_eq!(none, None);
    }
);

backend_test!(
    concurrent_redemptions_never_pass_the_limit,
    |server: TestServer| async move {
        let token = server.token().await;
        let body = json!({"code": "RUSH", "amountOff": "1", "currency": "EUR",
            "duration": "once", "maxRedemptions": 5});
        let id = coupon(&server, &token, body).await["couponId"].clone();
        let state = server.server.state.clone();
        let merchant_id = server.merchant.merchant_id;
        let now = state.merchant_now(merchant_id).await.unwrap();
        // Twenty redemptions, each in its own transaction, released at once.
        let start = Arc::new(tokio::sync::Barrier::new(20));
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (state, start) = (state.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    let mut tx = state.store.begin().await.unwrap();
                    let outcome = coupons::redeem(&mut tx, merchant_id, "rush", "EUR", now)
                        .await
                        .unwrap();
                    tx.commit().await.unwrap();
                    outcome
                })
            })
            .collect();
        let mut counted = Vec::new();
        let mut refused = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(coupon) => counted.push(coupon.times_redeemed),
                Err(refusal) => {
                    assert_eq!(refusal, Refusal::Exhausted);
                    refused += 1;
                }
            }
        }
        counted.sort_unstable();
        assert_eq!(counted, [1, 2, 3, 4, 5]);
        assert_eq!(refused, 15);
        let path = format!("/coupons/{}", id.as_str().unwrap());
        let record = send(&server, Method::GET, &path, &token, None).await;
        assert_eq!(record.body["timesRedeemed"], 5);
    }
);
