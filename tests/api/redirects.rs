//! The merchant URLs a payment ends on: what is stored is the normalized URL the validator
//! checked (a browser-style parse drops tabs and line breaks, trims spaces), so the `Location`
//! after a payment is that URL; and a stored value that cannot be a header never turns a taken
//! payment into a 500: the customer lands on recur's own confirmation page instead.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::cashier::{hidden, page as answer, visitor, Page};
use crate::harness::TestServer;

/// A merchant URL as an attacker or a sloppy template writes it, and what a browser reads.
const RAW_URL: &str = "\thttps://shop.example.com/o\r\nk?order=1 ";
const NORMALIZED_URL: &str = "https://shop.example.com/ok?order=1";

/// Opens a cashier session for `order_id` with `overrides` on the valid body; returns its URL.
async fn open_cashier(server: &TestServer, order_id: &str, overrides: Value) -> String {
    let secret = &server.merchant.merchant_secret;
    let mut body = crate::fixtures::cashier::body(order_id, chrono::Utc::now().timestamp(), secret);
    for (key, value) in overrides.as_object().unwrap() {
        body[key] = value.clone();
    }
    let response = server
        .client
        .post(format!("{}/api/payment/hosted-page", server.base_url))
        .header("x-merchant-secret", secret)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    reply["redirectUrl"].as_str().unwrap().to_string()
}

/// Pays the cashier at `url` with `card` on gateway 101.
async fn pay_cashier(server: &TestServer, url: &str, card: &str) -> Page {
    let client = visitor();
    let form = answer(client.get(url).send().await.unwrap()).await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.text);
    let mut fields: Vec<(&str, String)> = ["sessionToken", "m_orderId", "csrfToken"]
        .into_iter()
        .map(|name| (name, hidden(&form.text, name)))
        .collect();
    for (name, value) in [
        ("processorId", "101"),
        ("cardNumber", card),
        ("expiry", "12/30"),
        ("cvc", "123"),
        ("holder", "Ada Lovelace"),
    ] {
        fields.push((name, value.to_string()));
    }
    let posted = client
        .post(format!("{}/cashier", server.base_url))
        .form(&fields)
        .send()
        .await
        .unwrap();
    answer(posted).await
}

/// A customer with an Incomplete membership; returns (customer key, membership key).
async fn incomplete_membership(server: &TestServer, token: &str) -> (String, String) {
    let customer = server.create_customer(token, "payer@example.com").await;
    let created = server
        .create_membership(token, server.membership_body(&customer, "order-1"))
        .await;
    let key = created["membershipKey"].as_str().unwrap().to_string();
    (customer, key)
}

/// Opens a checkout session with `body` (expects 201) and returns its link.
async fn open_checkout(server: &TestServer, token: &str, body: Value) -> String {
    let reply = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/checkout/session",
            Some(token),
            Some(body),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body["checkoutRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Pays the checkout at `url` with a card that succeeds.
async fn pay_checkout(url: &str) -> Page {
    let client = visitor();
    let form = answer(client.get(url).send().await.unwrap()).await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.text);
    let csrf = hidden(&form.text, "csrfToken");
    let posted = client
        .post(url)
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("cardNumber", "4242 4242 4242 4242"),
            ("expiry", "12/34"),
            ("cvc", "123"),
            ("holder", "Ada Lovelace"),
        ])
        .send()
        .await
        .unwrap();
    answer(posted).await
}

/// Writes `value` into a stored row behind the API's back, as an older version might have.
async fn store_raw(server: &TestServer, sql: &str, value: &str) {
    let done = sqlx::query(sql)
        .bind(value)
        .execute(server.server.state.store.pool())
        .await
        .expect("update");
    assert_eq!(done.rows_affected(), 1);
}

backend_test!(
    a_cashier_payment_ends_on_the_normalized_redirect_urls,
    |server: TestServer| async move {
        let urls = json!({"successRedirectUrl": RAW_URL,
                          "failedRedirectUrl": "https://shop.example.com/fai\nled",
                          "webhookUrl": "https://merchant.example.com/ho\toks "});
        let url = open_cashier(&server, "hp-paid", urls.clone()).await;
        let paid = pay_cashier(&server, &url, "4242424242424242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location.as_deref(), Some(NORMALIZED_URL));

        let url = open_cashier(&server, "hp-declined", urls).await;
        let declined = pay_cashier(&server, &url, "4000000000000002").await;
        assert_eq!(declined.status, StatusCode::SEE_OTHER, "{}", declined.text);
        assert_eq!(
            declined.location.as_deref(),
            Some("https://shop.example.com/failed")
        );
        let stored = server
            .count(
                "SELECT COUNT(*) FROM cashier_sessions WHERE webhook_url = $1",
                "https://merchant.example.com/hooks",
            )
            .await;
        assert_eq!(stored, 2, "the webhook URL is stored as checked");
    }
);

backend_test!(
    a_stored_redirect_that_is_no_header_ends_on_the_cashier_page,
    |server: TestServer| async move {
        let url = open_cashier(&server, "hp-legacy", json!({})).await;
        store_raw(
            &server,
            "UPDATE cashier_sessions SET success_redirect_url = $1",
            "https://shop.example.com/o\r\nk",
        )
        .await;
        let paid = pay_cashier(&server, &url, "4242424242424242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let location = paid.location.unwrap();
        assert!(location.starts_with("/cashier?"), "{location}");
        let done = answer(
            visitor()
                .get(format!("{}{location}", server.base_url))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(done.status, StatusCode::OK);
        assert!(done.text.contains("hp-legacy"), "{}", done.text);
    }
);

backend_test!(
    a_checkout_payment_ends_on_the_normalized_return_link,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, membership) = incomplete_membership(&server, &token).await;
        let url = open_checkout(
            &server,
            &token,
            json!({"customerKey": customer, "membershipKey": membership,
                   "returnToWebsiteLink": RAW_URL}),
        )
        .await;
        let paid = pay_checkout(&url).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location.as_deref(), Some(NORMALIZED_URL));
    }
);

backend_test!(
    a_membership_keeps_the_normalized_urls,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "payer@example.com").await;
        let mut body = server.membership_body(&customer, "order-1");
        body["webhookUrl"] = " https://merchant.example/ho\nok".into();
        let created = server.create_membership(&token, body).await;
        assert_eq!(created["webhookUrl"], "https://merchant.example/hook");
        let membership = created["membershipKey"].as_str().unwrap();
        let updated = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(json!({"membershipKey": membership, "returnToWebsiteLink": RAW_URL})),
            )
            .await;
        assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
        assert_eq!(
            updated.body["membership"]["returnToWebsiteLink"],
            NORMALIZED_URL
        );
        // A checkout without its own link returns to the membership's.
        let url = open_checkout(
            &server,
            &token,
            json!({"customerKey": customer, "membershipKey": membership}),
        )
        .await;
        let paid = pay_checkout(&url).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location.as_deref(), Some(NORMALIZED_URL));
    }
);

backend_test!(
    a_stored_return_link_that_is_no_header_ends_on_the_checkout_page,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, membership) = incomplete_membership(&server, &token).await;
        let url = open_checkout(
            &server,
            &token,
            json!({"customerKey": customer, "membershipKey": membership,
                   "returnToWebsiteLink": "https://shop.example.com/ok"}),
        )
        .await;
        store_raw(
            &server,
            "UPDATE checkout_sessions SET return_url = $1",
            "https://shop.example.com/o\r\nk",
        )
        .await;
        let paid = pay_checkout(&url).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let path = url.strip_prefix(&server.base_url).unwrap();
        assert_eq!(paid.location.as_deref(), Some(path));
        let record = server.membership(&token, &membership).await;
        assert_eq!(record["status"], "Active", "the payment was taken");
    }
);
