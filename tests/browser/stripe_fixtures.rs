//! What the Stripe tests in Chromium share: calls to localstripe with the merchant's key, the
//! connection of the merchant's account, and localstripe's card Element and 3-D Secure step.

use fantoccini::Locator;
use reqwest::Method;
use serde_json::{json, Value};

use crate::chrome::Browser;
use crate::harness::{stripe_url, TestServer};

pub const API: &str = "/api/subscriptions/v1";
pub const SECRET_KEY: &str = "sk_test_51BrowserCheckout";
pub const PUBLISHABLE_KEY: &str = "pk_test_51BrowserCheckout";
/// A call to localstripe with the merchant's secret key.
pub async fn stripe(method: Method, path: &str, form: &[(&str, &str)]) -> Value {
    reqwest::Client::new()
        .request(method, format!("{}{path}", stripe_url()))
        .basic_auth(SECRET_KEY, Some(""))
        .form(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Connects the merchant's Stripe account as its default card processor; returns its
/// `PaymentProcessorId`.
pub async fn connect_stripe(server: &TestServer, token: &str) -> i64 {
    let reply = server
        .call(
            Method::POST,
            &format!("{API}/processors"),
            Some(token),
            Some(
                json!({"kind": "stripe", "name": "Stripe", "secretKey": SECRET_KEY,
                "publishableKey": PUBLISHABLE_KEY, "webhookSecret": "whsec_browser",
                "default": true}),
            ),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["paymentProcessorId"].as_i64().unwrap()
}

/// Types `number` into localstripe's card Element (its own inputs, named by placeholder).
pub async fn enter_stripe_card(browser: &Browser, number: &str) {
    browser
        .wait_for("#card-element input[placeholder=number]")
        .await;
    browser
        .fill("#card-element input[placeholder=number]", number)
        .await;
    browser
        .fill("#card-element input[placeholder=exp_month]", "12")
        .await;
    browser
        .fill("#card-element input[placeholder=exp_year]", "34")
        .await;
    browser
        .fill("#card-element input[placeholder=cvc]", "123")
        .await;
    browser
        .fill("#card-element input[placeholder=postal_code]", "10115")
        .await;
}

/// Answers localstripe's 3-D Secure step with its button `label` ("Complete authentication" or
/// "Fail authentication").
pub async fn answer_3ds(browser: &Browser, label: &str) {
    let button = browser
        .client
        .wait()
        .at_most(std::time::Duration::from_secs(15))
        .for_element(Locator::XPath(&format!("//button[text()='{label}']")))
        .await
        .unwrap_or_else(|e| panic!("the 3-D Secure step never appeared: {e}"));
    button.click().await.unwrap();
}

/// The PaymentIntents at Stripe whose metadata `field` is `value`.
pub async fn intents_where(field: &str, value: &str) -> Vec<Value> {
    // Every page: the emulator is shared by the whole test run.
    let mut intents = Vec::new();
    let mut after = String::new();
    loop {
        let path = format!("/v1/payment_intents?limit=100{after}");
        let listed = stripe(Method::GET, &path, &[]).await;
        let page = listed["data"].as_array().unwrap();
        intents.extend(
            page.iter()
                .filter(|intent| intent["metadata"][field] == value)
                .cloned(),
        );
        match page.last() {
            Some(last) if listed["has_more"] == true => {
                after = format!("&starting_after={}", last["id"].as_str().unwrap());
            }
            _ => return intents,
        }
    }
}
