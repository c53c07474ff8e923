//! The hosted checkout of a merchant whose default card processor is its Stripe account, in
//! Chromium against localstripe and its Stripe.js (DESIGN §17): the card Element saves the card
//! with a SetupIntent, recur reads it from Stripe and pays; 3-D Secure on the SetupIntent and
//! on the payment; a card Stripe declines; a trial that only saves the card; the pay-now page
//! after a renewal Stripe refused for want of authentication. The page's policy admits Stripe.js
//! alone.

use reqwest::Method;
use serde_json::{json, Value};

use crate::chrome::{Browser, DESKTOP};
use crate::harness::{stripe_url, Backend, TestServer};
use crate::stripe_fixtures::{
    answer_3ds, connect_stripe, enter_stripe_card, intents_where, API, SECRET_KEY,
};

const RETURN: &str = "https://merchant.example/thanks";

/// A checkout session of a new customer's membership made from `body` changes; returns
/// (membership key, checkout URL).
async fn checkout(server: &TestServer, token: &str, email: &str, extra: Value) -> (String, String) {
    let customer = server.create_customer(token, email).await;
    let mut body = server.membership_body(&customer, email);
    for (field, value) in extra.as_object().unwrap() {
        body[field] = value.clone();
    }
    let membership = server.create_membership(token, body).await["membershipKey"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = server
        .call(
            Method::POST,
            &format!("{API}/checkout/session"),
            Some(token),
            Some(json!({"customerKey": customer, "membershipKey": membership,
                        "returnToWebsiteLink": RETURN})),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let url = reply.body["checkoutRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();
    (membership, url)
}

/// Enters a card whose bank checks the customer every time (`…3184`), passes the check of the
/// card (its SetupIntent), and waits for the step where the bank checks the payment.
async fn to_the_payments_check(browser: &Browser) {
    enter_stripe_card(browser, "4000002760003184").await;
    browser.click("[data-testid=submit]").await;
    answer_3ds(browser, "Complete authentication").await;
    browser.wait_for("[data-testid=authenticate]").await;
}

/// The PaymentIntents at Stripe made for the membership `key`.
async fn intents_of(key: &str) -> Vec<Value> {
    intents_where("membershipKey", key).await
}

async fn paid_with_the_card_element(backend: Backend) {
    let server = TestServer::start(backend).await;
    let token = server.token().await;
    connect_stripe(&server, &token).await;
    let (membership, url) = checkout(&server, &token, "ada@example.com", json!({})).await;

    let page = reqwest::get(&url).await.unwrap();
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let origin = stripe_url();
    assert!(
        policy.contains(&format!("script-src 'self' {origin};")),
        "{policy}"
    );
    assert!(
        policy.contains(&format!("connect-src {origin}")),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(!html.contains("<script>"), "no inline script");
    assert!(!html.contains(SECRET_KEY));
    assert!(
        html.contains("Card payment needs JavaScript"),
        "the page says so without it"
    );

    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    assert_eq!(
        browser.count("#cardNumber").await,
        0,
        "recur's own card fields are gone"
    );
    enter_stripe_card(&browser, "4242424242424242").await;
    browser.screenshot("stripe-checkout").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for_url(RETURN).await;
    browser.close().await;

    let record = server.membership(&token, &membership).await;
    assert_eq!(record["status"], "Active");
    assert_eq!(record["invoices"][0]["status"], "Paid");
    let intents = intents_of(&membership).await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["status"], "succeeded");
    assert_eq!(intents[0]["amount"], 2997);
    assert_eq!(intents[0]["currency"], "eur");
    let saved = server
        .call(
            Method::GET,
            &format!(
                "{API}/customer/{}/payment-method",
                record["customerKey"].as_str().unwrap()
            ),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    assert_eq!(saved.body["last4"], "4242");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_element_pays_the_first_invoice_on_sqlite() {
    paid_with_the_card_element(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_element_pays_the_first_invoice_on_postgres() {
    paid_with_the_card_element(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_d_secure_on_the_card_and_on_the_payment() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    connect_stripe(&server, &token).await;
    let (membership, url) = checkout(&server, &token, "grace@example.com", json!({})).await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;

    // The customer fails their bank's check of the payment: nothing is paid, the form is back.
    to_the_payments_check(&browser).await;
    browser.screenshot("stripe-authenticate").await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Incomplete"
    );
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Fail authentication").await;
    browser.wait_for("[data-testid=form-message]").await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Incomplete"
    );

    // Then passes it: paid once.
    to_the_payments_check(&browser).await;
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for_url(RETURN).await;
    browser.close().await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Active"
    );
    let succeeded: Vec<_> = intents_of(&membership)
        .await
        .into_iter()
        .filter(|intent| intent["status"] == "succeeded")
        .collect();
    assert_eq!(succeeded.len(), 1, "{succeeded:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_card_and_a_trial_that_only_saves_the_card() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    connect_stripe(&server, &token).await;
    let (membership, url) = checkout(&server, &token, "lin@example.com", json!({})).await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    // Saved by Stripe, declined when charged.
    enter_stripe_card(&browser, "4000000000000341").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for("[data-testid=form-message]").await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Incomplete"
    );
    // Refused by Stripe when saved: Stripe.js tells the customer, nothing reaches recur.
    enter_stripe_card(&browser, "4000000000000002").await;
    browser.click("[data-testid=submit]").await;
    browser
        .wait_for("[data-testid=card-error]:not([hidden])")
        .await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Incomplete"
    );

    let (trial, url) = checkout(&server, &token, "kai@example.com", json!({"trialDays": 14})).await;
    browser.open(&url).await;
    enter_stripe_card(&browser, "4242424242424242").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for_url(RETURN).await;
    browser.close().await;
    assert_eq!(
        server.membership(&token, &trial).await["status"],
        "Trialing"
    );
    assert!(
        intents_of(&trial).await.is_empty(),
        "a trial start charges nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pay_now_authenticates_a_renewal_stripe_refused_off_session() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    connect_stripe(&server, &token).await;
    server.advance(&token, "2027-03-01T00:00:00Z").await;
    let (membership, url) = checkout(&server, &token, "noor@example.com", json!({})).await;
    let browser = Browser::start(DESKTOP).await;
    // The first payment with a card that asks for authentication every time. The customer
    // leaves it unauthenticated past the window: Stripe's PaymentIntent is cancelled, so it
    // can never succeed unrecorded, and the checkout asks for the card again.
    browser.open(&url).await;
    to_the_payments_check(&browser).await;
    server.advance(&token, "2027-03-01T00:16:00Z").await;
    let intents = intents_of(&membership).await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["status"], "canceled");
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser
        .wait_for("#card-element input[placeholder=number]")
        .await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Incomplete"
    );

    to_the_payments_check(&browser).await;
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for_url(RETURN).await;
    assert_eq!(
        server.membership(&token, &membership).await["status"],
        "Active"
    );

    // The renewal, off-session, needs the customer: PastDue with Stripe's reason.
    server.advance(&token, "2027-04-01T01:00:00Z").await;
    let record = server.membership(&token, &membership).await;
    assert_eq!(record["status"], "PastDue", "{record}");
    let reply = server
        .call(
            Method::POST,
            &format!("{API}/checkout/session"),
            Some(&token),
            Some(
                json!({"customerKey": record["customerKey"], "membershipKey": membership,
                        "returnToWebsiteLink": RETURN}),
            ),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let pay_now = reply.body["checkoutRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();
    browser.open(&pay_now).await;
    browser.click("[data-testid=saved-card] button").await;
    browser.wait_for("[data-testid=authenticate]").await;
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for_url(RETURN).await;
    browser.close().await;
    let record = server.membership(&token, &membership).await;
    assert_eq!(record["status"], "Active", "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_replaces_the_card_through_stripe() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    connect_stripe(&server, &token).await;
    let (membership, url) = checkout(&server, &token, "ines@example.com", json!({})).await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    enter_stripe_card(&browser, "4242424242424242").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for_url(RETURN).await;
    let customer = server.membership(&token, &membership).await["customerKey"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = server
        .call(
            Method::POST,
            &format!("{API}/portal/session"),
            Some(&token),
            Some(json!({"customerKey": customer,
                        "returnToWebsiteLink": "https://merchant.example/account"})),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let portal = reply.body["portalRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let portal = portal.split('?').next().unwrap().to_string();
    let card_page = format!("{portal}/payment-method");

    // A card the customer's bank asks them to authenticate when it is saved.
    browser.open(&card_page).await;
    enter_stripe_card(&browser, "4000002500003155").await;
    browser.screenshot("stripe-portal-card").await;
    browser.click("[data-testid=submit]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for_url(&format!("{portal}?done=card")).await;
    let saved = server
        .call(
            Method::GET,
            &format!("{API}/customer/{customer}/payment-method"),
            Some(&token),
            None,
        )
        .await;
    browser.close().await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    assert_eq!(saved.body["last4"], "3155", "{}", saved.body);
    assert!(
        intents_of(&membership).await.len() == 1,
        "saving a card charges nothing"
    );
}
