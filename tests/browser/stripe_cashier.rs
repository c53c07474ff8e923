//! The cashier of a merchant whose default card processor is its Stripe account, in Chromium
//! against localstripe and its Stripe.js (DESIGN §17): the card Element takes the card, recur
//! pays with a PaymentIntent it reads back from Stripe, 3-D Secure on the payment, a decline,
//! a payment left unauthenticated, and the merchant's refunds of the order through Stripe.

use reqwest::Method;
use serde_json::{json, Value};

use crate::cashier::{merged, redirects, session, transactions};
use crate::chrome::{Browser, DESKTOP};
use crate::harness::{stripe_url, Backend, TestServer};
use crate::merchant_site::MerchantSite;
use crate::stripe_fixtures::{
    answer_3ds, connect_stripe, enter_stripe_card, intents_where, stripe, SECRET_KEY,
};

/// The PaymentIntents at Stripe made for the order `order_id`.
async fn intents_of(order_id: &str) -> Vec<Value> {
    intents_where("orderId", order_id).await
}

/// `POST /api/payment/refund` with the merchant's secret: (status, body).
async fn refund(server: &TestServer, body: Value) -> (u16, Value) {
    let reply = server
        .client
        .post(format!("{}/api/payment/refund", server.base_url))
        .header("x-merchant-secret", &server.merchant.merchant_secret)
        .json(&body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap())
}

/// The decline code of the order's latest transaction.
async fn decline_code(server: &TestServer, order_id: &str) -> Option<String> {
    sqlx::query_scalar(
        "SELECT decline_code FROM cashier_transactions WHERE order_id = $1 \
         ORDER BY id DESC LIMIT 1",
    )
    .bind(order_id)
    .fetch_one(server.server.state.store.pool())
    .await
    .unwrap()
}

/// `prefix` made unique: localstripe outlives a test run.
fn order(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

async fn paid_and_refunded_through_stripe(backend: Backend, order_id: &str) {
    let order_id = &order(order_id);
    let server = TestServer::start(backend).await;
    let token = server.token().await;
    let stripe_id = connect_stripe(&server, &token).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let url = session(
        &server,
        order_id,
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": "49.90"}}),
        ),
    )
    .await;

    let page = reqwest::get(&url).await.unwrap();
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains(&format!("script-src 'self' {};", stripe_url())),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(!html.contains("<script>"), "no inline script");
    assert!(!html.contains(SECRET_KEY));

    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    assert_eq!(
        browser.count("#cardNumber").await,
        0,
        "recur's own card fields are gone"
    );
    enter_stripe_card(&browser, "4242424242424242").await;
    browser.screenshot("stripe-cashier").await;
    browser.click("[data-testid=stripe-pay]").await;
    browser.wait_for_url(&site.ok()).await;
    browser.close().await;

    assert_eq!(
        transactions(&server, order_id).await,
        [("PayIn".into(), "Success".into(), stripe_id, 4990, 1)]
    );
    let intents = intents_of(order_id).await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["status"], "succeeded");
    assert_eq!(intents[0]["amount"], 4990);
    assert_eq!(intents[0]["currency"], "eur");
    let intent = intents[0]["id"].as_str().unwrap().to_string();

    // The merchant refunds part, then the rest: each through Stripe, recorded once.
    let (status, partial) = refund(&server, json!({"orderId": order_id, "amount": "10.00"})).await;
    assert_eq!(status, 201, "{partial}");
    assert_eq!(partial["transactionStatus"], "Success");
    let (status, rest) = refund(&server, json!({"orderId": order_id})).await;
    assert_eq!(status, 201, "{rest}");
    assert_eq!(rest["amount"], "39.90");
    let (status, _) = refund(&server, json!({"orderId": order_id})).await;
    assert_eq!(status, 409, "fully refunded");
    let refunds = stripe(
        Method::GET,
        &format!("/v1/refunds?payment_intent={intent}"),
        &[],
    )
    .await;
    let mut amounts: Vec<i64> = refunds["data"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|r| assert!(r["metadata"]["refundKey"].is_string(), "{r}"))
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    amounts.sort_unstable();
    assert_eq!(amounts, [1000, 3990]);

    // Stripe takes no payouts or provider retries of its payments.
    let payout = server
        .client
        .post(format!("{}/api/payment/payout", server.base_url))
        .header("x-merchant-secret", &server.merchant.merchant_secret)
        .json(&json!({"orderId": order_id, "amount": "5.00"}))
        .send()
        .await
        .unwrap();
    assert_eq!(payout.status(), 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cashier_order_is_paid_and_refunded_through_stripe_sqlite() {
    paid_and_refunded_through_stripe(Backend::Sqlite, "STRIPE-SQLITE").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cashier_order_is_paid_and_refunded_through_stripe_postgres() {
    paid_and_refunded_through_stripe(Backend::Postgres, "STRIPE-PG").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_d_secure_a_decline_and_a_payment_left_unauthenticated() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    let stripe_id = connect_stripe(&server, &token).await;
    server.advance(&token, "2027-03-01T00:00:00Z").await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;

    let (decline, three_ds, left) = (order("DECLINE"), order("3DS"), order("LEFT"));
    // A card Stripe declines when charged: the failed URL, nothing taken.
    let url = session(&server, &decline, redirects(&site)).await;
    browser.open(&url).await;
    browser.fill("#stripe-amount", "12.50").await;
    enter_stripe_card(&browser, "4000000000000341").await;
    browser.click("[data-testid=stripe-pay]").await;
    browser.wait_for_url(&site.failed()).await;
    assert_eq!(
        transactions(&server, &decline).await,
        [("PayIn".into(), "Rejected".into(), stripe_id, 1250, 1)]
    );

    // A card whose bank checks every payment: the customer fails the check, then passes it.
    let url = session(&server, &three_ds, json!({})).await;
    browser.open(&url).await;
    browser.fill("#stripe-amount", "20").await;
    enter_stripe_card(&browser, "4000002760003184").await;
    browser.click("[data-testid=stripe-pay]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for("[data-testid=authenticate]").await;
    browser.screenshot("stripe-cashier-authenticate").await;
    assert!(transactions(&server, &three_ds).await.is_empty());
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Fail authentication").await;
    browser.wait_for("[data-testid=form-message]").await;
    assert_eq!(
        transactions(&server, &three_ds).await,
        [("PayIn".into(), "Rejected".into(), stripe_id, 2000, 1)]
    );
    browser.fill("#stripe-amount", "20").await;
    enter_stripe_card(&browser, "4000002760003184").await;
    browser.click("[data-testid=stripe-pay]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for("[data-testid=authenticate]").await;
    browser.click("[data-testid=authenticate]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for("[data-testid=outcome]").await;
    let recorded = transactions(&server, &three_ds).await;
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(
        recorded[1],
        ("PayIn".into(), "Success".into(), stripe_id, 2000, 1)
    );
    let succeeded = intents_of(&three_ds)
        .await
        .into_iter()
        .filter(|i| i["status"] == "succeeded")
        .count();
    assert_eq!(succeeded, 1);

    // Left at the bank's check past the window: Stripe's PaymentIntent is cancelled, so it can
    // never succeed unrecorded, and the order is declined; the page offers the card again.
    let url = session(&server, &left, json!({})).await;
    browser.open(&url).await;
    browser.fill("#stripe-amount", "7").await;
    enter_stripe_card(&browser, "4000002760003184").await;
    browser.click("[data-testid=stripe-pay]").await;
    answer_3ds(&browser, "Complete authentication").await;
    browser.wait_for("[data-testid=authenticate]").await;
    server.advance(&token, "2027-03-01T00:16:00Z").await;
    let intents = intents_of(&left).await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["status"], "canceled");
    assert_eq!(
        transactions(&server, &left).await,
        [("PayIn".into(), "Rejected".into(), stripe_id, 700, 1)]
    );
    assert_eq!(
        decline_code(&server, &left).await.as_deref(),
        Some("authentication_required")
    );
    browser.open(&url).await;
    browser
        .wait_for("#card-element input[placeholder=number]")
        .await;
    browser.close().await;
}
