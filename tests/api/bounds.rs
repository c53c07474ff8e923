//! Bounded inputs: every number and date a merchant sends is held to a limit under which every
//! date the service derives can be written and every sum of amounts fits, on create and on
//! update alike; past it, a 400 on the field's path. The limits are in `docs/api.md`.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{create_raw, update};
use crate::harness::{Reply, TestServer};

/// The valid membership body of `customer` for `order`, with `changes` merged into it one level
/// deep (`{"billingCycle": {"intervalCount": 2}}` changes only that field).
fn body_with(server: &TestServer, customer: &str, order: &str, changes: Value) -> Value {
    let mut body = server.membership_body(customer, order);
    for (key, value) in changes.as_object().unwrap() {
        match value {
            Value::Object(fields) => {
                for (field, v) in fields {
                    body[key][field] = v.clone();
                }
            }
            other => body[key] = other.clone(),
        }
    }
    body
}

/// Asserts a 400 whose only failing field is `path`, and returns its messages.
fn refused(reply: &Reply, path: &str) -> Vec<String> {
    let errors = reply.problem(400);
    assert_eq!(
        errors.keys().collect::<Vec<_>>(),
        vec![path],
        "{}",
        reply.body
    );
    serde_json::from_value(errors[path].clone()).unwrap()
}

/// `years` calendar years after now, as an `endDate`.
fn years_ahead(years: i32) -> String {
    let now = chrono::Utc::now();
    let date = chrono::Months::new(12 * years.unsigned_abs());
    (now + date).format("%Y-%m-%dT%H:%M:%S").to_string()
}

backend_test!(
    an_interval_count_beyond_three_years_is_refused,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        let path = "billingCycle.intervalCount";
        for (order, cycle, message) in [
            (
                "o-1",
                json!({"intervalType": "Monthly", "intervalCount": 4_294_967_295u64}),
                "must be at most 36 for Monthly: a billing cycle is at most 3 years",
            ),
            (
                "o-2",
                json!({"intervalType": "Daily", "intervalCount": 1096}),
                "must be at most 1095 for Daily: a billing cycle is at most 3 years",
            ),
            (
                "o-3",
                json!({"intervalType": "Annually", "intervalCount": "99999999999999999999"}),
                "must be at most 3 for Annually: a billing cycle is at most 3 years",
            ),
        ] {
            let body = body_with(&server, &customer, order, json!({"billingCycle": cycle}));
            let reply = create_raw(&server, &token, body).await;
            assert_eq!(refused(&reply, path), vec![message]);
        }
        // The largest cycles are fine.
        for (order, t, count) in [("o-4", "Weekly", 156), ("o-5", "Annually", 3)] {
            let cycle = json!({"billingCycle": {"intervalType": t, "intervalCount": count}});
            let created = server
                .create_membership(&token, body_with(&server, &customer, order, cycle))
                .await;
            assert_eq!(created["billingCycle"]["intervalCount"], count);
        }
    }
);

backend_test!(
    an_end_date_beyond_a_century_is_refused,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        for (order, end_date) in [
            ("o-1", "9999-12-31T23:59:59".to_string()),
            ("o-2", years_ahead(101)),
        ] {
            let body = body_with(&server, &customer, order, json!({"endDate": end_date}));
            let reply = create_raw(&server, &token, body).await;
            assert_eq!(
                refused(&reply, "endDate"),
                vec!["must be at most 100 years in the future"]
            );
        }
        let end_date = years_ahead(99);
        let body = body_with(&server, &customer, "o-3", json!({"endDate": end_date}));
        let created = server.create_membership(&token, body).await;
        assert_eq!(created["endDate"], format!("{end_date}Z"));
    }
);

backend_test!(
    amounts_and_quantities_are_bounded,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        // A trillion units at one cent each: the total is fine, the quantity is not.
        let pricing = json!({"pricingInfo": {"totalAmount": "10000000000.00", "pricePerUnit": null,
                                              "quantity": 1_000_000_000_000i64}});
        let reply = create_raw(
            &server,
            &token,
            body_with(&server, &customer, "o-1", pricing),
        )
        .await;
        assert_eq!(
            refused(&reply, "pricingInfo.quantity"),
            vec!["must be at most 1000000000"]
        );
        // The largest amount is 15 digits in minor units, whatever fits in 64 bits.
        let pricing = json!({"pricingInfo": {"totalAmount": "92233720368547758.07",
                                              "pricePerUnit": null, "quantity": null}});
        let reply = create_raw(
            &server,
            &token,
            body_with(&server, &customer, "o-2", pricing),
        )
        .await;
        assert_eq!(
            refused(&reply, "pricingInfo.totalAmount"),
            vec!["must be at most 9999999999999.99"]
        );
        let pricing = json!({"pricingInfo": {"currency": "JPY", "totalAmount": "1000000000000000",
                                              "pricePerUnit": 1e15, "quantity": 1}});
        let reply = create_raw(
            &server,
            &token,
            body_with(&server, &customer, "o-3", pricing),
        )
        .await;
        let errors = reply.problem(400);
        for path in ["pricingInfo.totalAmount", "pricingInfo.pricePerUnit"] {
            assert_eq!(errors[path], json!(["must be at most 999999999999999"]));
        }
        let pricing = json!({"pricingInfo": {"totalAmount": "9999999999999.99",
                                              "pricePerUnit": null, "quantity": null}});
        let created = server
            .create_membership(&token, body_with(&server, &customer, "o-4", pricing))
            .await;
        assert_eq!(created["pricingInfo"]["totalAmount"], "9999999999999.99");
    }
);

backend_test!(
    an_update_is_held_to_the_same_bounds,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        let cycle = json!({"billingCycle": {"intervalType": "Monthly", "intervalCount": 36}});
        let created = server
            .create_membership(&token, body_with(&server, &customer, "o-1", cycle))
            .await;
        let key = created["membershipKey"].as_str().unwrap();
        let cases = [
            (
                json!({"intervalCount": 4_294_967_295u64}),
                "intervalCount",
                "must be at most 36 for Monthly: a billing cycle is at most 3 years",
            ),
            // DESIGN §4: intervalType without intervalCount means a count of 1 (Annually × 1
            // fits), so only a count given with it can leave the bound.
            (
                json!({"intervalType": "Annually", "intervalCount": 4}),
                "intervalCount",
                "must be at most 3 for Annually: a billing cycle is at most 3 years",
            ),
            (
                json!({"endDate": "9999-12-31T23:59:59"}),
                "endDate",
                "must be at most 100 years in the future",
            ),
            (
                json!({"quantity": 1_000_000_000_000i64}),
                "quantity",
                "must be at most 1000000000",
            ),
            (
                json!({"quantity": "99999999999999999999"}),
                "quantity",
                "must be at most 1000000000",
            ),
            (
                json!({"pricePerUnit": "9999999999999.99"}),
                "pricePerUnit",
                "gives a price per period (pricePerUnit × quantity) above 9999999999999.99",
            ),
            (
                json!({"pricePerUnit": "100000", "quantity": 100_000_000}),
                "quantity",
                "gives a price per period (pricePerUnit × quantity) above 9999999999999.99",
            ),
        ];
        for (change, path, message) in cases {
            let mut body = json!({"membershipKey": key});
            body.as_object_mut()
                .unwrap()
                .extend(change.as_object().unwrap().clone());
            let reply = update(&server, &token, body).await;
            assert_eq!(refused(&reply, path), vec![message], "{change}");
        }
        let unchanged = server.membership(&token, key).await;
        assert_eq!(unchanged["billingCycle"], created["billingCycle"]);
        assert_eq!(unchanged["pricingInfo"], created["pricingInfo"]);
        assert_eq!(unchanged["endDate"], Value::Null);
        // Within the bounds, the same kind of update is applied.
        let body = json!({"membershipKey": key, "intervalType": "Annually", "intervalCount": 3,
                          "quantity": 1_000_000_000, "pricePerUnit": "0.01"});
        let reply = update(&server, &token, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let m = &reply.body["membership"];
        assert_eq!(m["billingCycle"]["intervalType"], "Annually");
        assert_eq!(m["pricingInfo"]["totalAmount"], "10000000.00");
    }
);

backend_test!(
    hosted_page_amounts_and_birth_dates_are_bounded,
    |server: TestServer| async move {
        let secret = server.merchant.merchant_secret.clone();
        let mut body =
            crate::fixtures::cashier::body("hp-1", chrono::Utc::now().timestamp(), &secret);
        body["billingDetails"]["lockedAmount"] = "10000000000000".into();
        body["billingDetails"]["dateOfBirth"] = "1899-12-31".into();
        let reply = server
            .client
            .post(format!("{}/api/payment/hosted-page", server.base_url))
            .header("x-merchant-secret", &secret)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST);
        let problem: Value = reply.json().await.unwrap();
        assert_eq!(
            problem["errors"],
            json!({"billingDetails.lockedAmount": ["must be at most 9999999999999.99"],
                   "billingDetails.dateOfBirth": ["must not be before 1900-01-01"]})
        );
        // The timestamp is bounded by its form (at most 12 digits) and its window.
        for timestamp in ["999999999999", "9999999999999"] {
            let mut body = crate::fixtures::cashier::body("hp-2", 0, &secret);
            body["timestamp"] = timestamp.into();
            let reply = server
                .client
                .post(format!("{}/api/payment/hosted-page", server.base_url))
                .header("x-merchant-secret", &secret)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(reply.status(), StatusCode::BAD_REQUEST);
            let problem: Value = reply.json().await.unwrap();
            let errors = problem["errors"].as_object().unwrap();
            assert!(errors.contains_key("timestamp"), "{problem}");
        }
    }
);

backend_test!(
    the_openapi_document_states_the_bounds,
    |server: TestServer| async move {
        let doc = server
            .call(Method::GET, "/openapi.json", None, None)
            .await
            .body;
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Quantity"]["maximum"], 1_000_000_000);
        assert_eq!(schemas["IntervalCount"]["maximum"], 1095);
        assert_eq!(schemas["UnitPrice"]["maximum"], 999_999_999_999_999i64);
        let create = &schemas["BillingCycleInput"]["properties"]["intervalCount"];
        assert!(
            create
                .to_string()
                .contains("#/components/schemas/IntervalCount"),
            "{create}"
        );
    }
);

backend_test!(
    the_bounds_hold_under_the_lock_and_spare_unchanged_fields,
    |server: TestServer| async move {
        use recur::billing::update::{self as billing, Changes};
        use recur::billing::BillingError;
        use recur_domain::calendar::IntervalType;

        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        let cycle = json!({"billingCycle": {"intervalType": "Monthly", "intervalCount": 36}});
        let created = server
            .create_membership(&token, body_with(&server, &customer, "o-1", cycle))
            .await;
        let key = created["membershipKey"].as_str().unwrap();
        let state = &server.server.state;
        let merchant = server.merchant.merchant_id;
        // Changes the API checked against a membership that has changed since: refused under
        // the lock, nothing written.
        let annual = Changes {
            interval_type: Some(IntervalType::Annually),
            ..Changes::default()
        };
        let outcome = billing::update(state, merchant, key, annual).await;
        assert!(
            matches!(outcome, Err(BillingError::Conflict(_))),
            "{outcome:?}"
        );
        let pricey = Changes {
            price_per_unit: Some(999_999_999_999_999),
            ..Changes::default()
        };
        let outcome = billing::update(state, merchant, key, pricey).await;
        assert!(
            matches!(outcome, Err(BillingError::Conflict(_))),
            "{outcome:?}"
        );
        assert_eq!(
            server.membership(&token, key).await["billingCycle"],
            created["billingCycle"]
        );
        // A row stored out of bounds (by an older version) still takes other changes.
        sqlx::query("UPDATE memberships SET interval_count = 4294967295 WHERE membership_key = $1")
            .bind(key)
            .execute(state.store.pool())
            .await
            .unwrap();
        let rename = json!({"membershipKey": key, "name": "Renamed plan"});
        let reply = update(&server, &token, rename).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
);
