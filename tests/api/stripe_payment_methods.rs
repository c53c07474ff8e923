//! `POST|GET /customer/{customerKey}/payment-method` (DESIGN §17) against localstripe: a card
//! the merchant collected with its own Stripe.js is attached to the customer's Stripe Customer
//! (made once) and becomes the customer's method; wrong, foreign or unknown ids are a 400 on
//! their field with nothing stored; a processor holding a customer's method cannot be removed.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::{CUSTOMER, PROCESSORS};
use crate::harness::{stripe_url, TestServer};

const SECRET_KEY: &str = "sk_test_51PaymentMethodTests";

/// Connects a Stripe account for the server's merchant: its processor id.
async fn connect(server: &TestServer, token: &str) -> i64 {
    let reply = server
        .call(
            Method::POST,
            PROCESSORS,
            Some(token),
            Some(json!({"kind": "stripe", "name": "Stripe", "secretKey": SECRET_KEY,
                "publishableKey": "pk_test_51PaymentMethodTests", "webhookSecret": "whsec_pmtests"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body["paymentProcessorId"].as_i64().unwrap()
}

/// What the merchant's own Stripe.js does with a card: a PaymentMethod at Stripe.
async fn stripe_card(number: &str) -> Value {
    stripe_post(
        "/v1/payment_methods",
        &[
            ("type", "card"),
            ("card[number]", number),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2030"),
            ("card[cvc]", "123"),
        ],
    )
    .await
}

async fn stripe_post(path: &str, form: &[(&str, &str)]) -> Value {
    let reply = reqwest::Client::new()
        .post(format!("{}{path}", stripe_url()))
        .basic_auth(SECRET_KEY, Some(""))
        .form(form)
        .send()
        .await
        .unwrap();
    assert!(reply.status().is_success(), "{path}: {}", reply.status());
    reply.json().await.unwrap()
}

async fn stripe_get(path: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{}{path}", stripe_url()))
        .basic_auth(SECRET_KEY, Some(""))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

backend_test!(
    a_card_collected_with_stripe_js_becomes_the_customers_method,
    |server: TestServer| async move {
        let token = server.token().await;
        let processor = connect(&server, &token).await;
        let customer = server
            .create_customer(&token, "stripe-card@example.com")
            .await;
        let path = format!("{CUSTOMER}/{customer}/payment-method");
        let none = server.call(Method::GET, &path, Some(&token), None).await;
        none.problem(404);

        let card = stripe_card("4242424242424242").await;
        let pm = card["id"].as_str().unwrap();
        let attached = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({"paymentProcessorId": processor, "paymentMethod": pm})),
            )
            .await;
        assert_eq!(attached.status, StatusCode::CREATED, "{}", attached.body);
        let record = &attached.body;
        assert!(record["paymentMethodId"]
            .as_str()
            .unwrap()
            .starts_with("pm_"));
        assert_ne!(record["paymentMethodId"], pm, "recur's own id");
        assert_eq!(record["type"], "card");
        assert_eq!(record["brand"], "visa");
        assert_eq!(record["last4"], "4242");
        assert_eq!(record["expMonth"], 12);
        assert_eq!(record["expYear"], 2030);
        assert_eq!(record["paymentProcessorId"], processor);
        let current = server.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(current.body, attached.body);

        // At Stripe: attached to a Customer that names recur's customer.
        let at_stripe = stripe_get(&format!("/v1/payment_methods/{pm}")).await;
        let stripe_customer = at_stripe["customer"].as_str().unwrap().to_string();
        let named = stripe_get(&format!("/v1/customers/{stripe_customer}")).await;
        assert_eq!(named["metadata"]["customerKey"], customer.as_str());
        assert_eq!(named["email"], "stripe-card@example.com");

        // A second card goes to the same Customer and becomes the current method.
        let second = stripe_card("5555555555554444").await;
        let replaced = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({"paymentProcessorId": processor, "paymentMethod": second["id"]})),
            )
            .await;
        assert_eq!(replaced.status, StatusCode::CREATED, "{}", replaced.body);
        let second_at_stripe = stripe_get(&format!(
            "/v1/payment_methods/{}",
            second["id"].as_str().unwrap()
        ))
        .await;
        assert_eq!(second_at_stripe["customer"], stripe_customer.as_str());
        let current = server.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(current.body["last4"], "4444");
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM stripe_customers WHERE stripe_customer_id = $1",
                    &stripe_customer
                )
                .await,
            1
        );

        // The account holds a customer's method now: it stays.
        let removal = server
            .call(
                Method::DELETE,
                &format!("{PROCESSORS}/{processor}"),
                Some(&token),
                None,
            )
            .await;
        removal.problem(409);
    }
);

backend_test!(
    wrong_or_foreign_ids_are_refused_on_their_fields_and_nothing_is_stored,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "refused@example.com").await;
        let path = format!("{CUSTOMER}/{customer}/payment-method");
        let card = stripe_card("4242424242424242").await;
        let pm = card["id"].as_str().unwrap().to_string();

        // No Stripe account yet: the sandbox gateway and unknown ids are not Stripe accounts.
        for processor in [json!(101), json!(301), json!("301")] {
            let reply = server
                .call(
                    Method::POST,
                    &path,
                    Some(&token),
                    Some(json!({"paymentProcessorId": processor, "paymentMethod": pm})),
                )
                .await;
            assert!(
                reply.problem(400).contains_key("paymentProcessorId"),
                "{processor}: {}",
                reply.body
            );
        }
        let processor = connect(&server, &token).await;
        let missing = server
            .call(Method::POST, &path, Some(&token), Some(json!({})))
            .await;
        let errors = missing.problem(400);
        assert!(errors.contains_key("paymentProcessorId") && errors.contains_key("paymentMethod"));

        // Stripe's other customer's card, an unknown id, and ids of other kinds.
        let other = stripe_post("/v1/customers", &[("email", "other@example.com")]).await;
        let owned = stripe_card("4242424242424242").await;
        stripe_post(
            &format!(
                "/v1/payment_methods/{}/attach",
                owned["id"].as_str().unwrap()
            ),
            &[("customer", other["id"].as_str().unwrap())],
        )
        .await;
        for method in [
            owned["id"].as_str().unwrap(),
            "pm_DoesNotExist000",
            "cus_NotAMethod",
            "pm_../../v1/balance",
            "",
        ] {
            let reply = server
                .call(
                    Method::POST,
                    &path,
                    Some(&token),
                    Some(json!({"paymentProcessorId": processor, "paymentMethod": method})),
                )
                .await;
            assert!(
                reply.problem(400).contains_key("paymentMethod"),
                "{method}: {}",
                reply.body
            );
        }
        // An unknown customer is a 404, whatever the body.
        let unknown = server
            .call(
                Method::POST,
                &format!("{CUSTOMER}/cstmr_unknown/payment-method"),
                Some(&token),
                Some(json!({"paymentProcessorId": processor, "paymentMethod": pm})),
            )
            .await;
        unknown.problem(404);
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM payment_methods WHERE processor_token = $1",
                    &pm
                )
                .await,
            0,
            "nothing stored"
        );
        let none = server.call(Method::GET, &path, Some(&token), None).await;
        none.problem(404);
    }
);
