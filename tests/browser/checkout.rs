//! The hosted checkout and the customer portal in Chromium: pay with the success card and land
//! on the return link; the decline card; the identity check; a promotion code; the portal's
//! invoices and cancellation. Screenshots of each page go to `<target>/screenshots/`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::chrome::{Browser, DESKTOP, PHONE};
use crate::harness::{Backend, TestServer};

const RETURN: &str = "https://merchant.example/thanks";

/// A customer with an Incomplete membership; returns (token, membership key, checkout URL).
async fn checkout(server: &TestServer, email: &str, order: &str) -> (String, String, String) {
    let token = server.token().await;
    let customer = server.create_customer(&token, email).await;
    let membership = server
        .create_membership(&token, server.membership_body(&customer, order))
        .await["membershipKey"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/checkout/session",
            Some(&token),
            Some(json!({"customerKey": customer, "membershipKey": membership,
                        "returnToWebsiteLink": RETURN})),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let url = reply.body["checkoutRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();
    (token, membership, url)
}

async fn status(server: &TestServer, token: &str, key: &str) -> Value {
    server.membership(token, key).await["status"].clone()
}

async fn enter_card(browser: &Browser, number: &str) {
    browser.fill("#cardNumber", number).await;
    browser.fill("#expiry", "1234").await;
    browser.fill("#cvc", "123").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paying_with_the_success_card_lands_on_the_return_link() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (token, membership, url) = checkout(&server, "ada@example.com", "order-1").await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    assert_eq!(
        browser.text("[data-testid=subscription-name]").await,
        "Gold plan"
    );
    assert_eq!(browser.text("[data-testid=price]").await, "€29.97");
    assert_eq!(browser.text("[data-testid=interval]").await, "per month");
    assert_eq!(browser.text("[data-testid=due-today]").await, "€29.97");
    assert!(browser
        .text("[data-testid=next-charge]")
        .await
        .starts_with("Next charge: "));
    browser.screenshot("checkout-desktop").await;
    enter_card(&browser, "4242424242424242").await;
    assert_eq!(
        browser
            .client
            .find(fantoccini::Locator::Css("#cardNumber"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("4242 4242 4242 4242"),
        "the number is grouped as it is typed"
    );
    browser.screenshot("checkout-filled").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for_url(RETURN).await;
    assert_eq!(status(&server, &token, &membership).await, "Active");
    let record = server.membership(&token, &membership).await;
    assert_eq!(record["invoices"][0]["status"], "Paid");
    browser.open(&url).await;
    assert_eq!(browser.text("h1").await, "Payment successful");
    browser.screenshot("checkout-paid").await;
    browser.close().await;

    let (_, _, url) = checkout(&server, "grace@example.com", "order-2").await;
    let phone = Browser::start(PHONE).await;
    phone.open(&url).await;
    assert_eq!(phone.text("[data-testid=due-today]").await, "€29.97");
    phone.screenshot("checkout-phone").await;
    phone.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_card_lets_the_customer_try_again() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (token, membership, url) = checkout(&server, "ada@example.com", "order-1").await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;

    // A mistyped number is caught in the page, before anything is sent.
    enter_card(&browser, "4242424242424241").await;
    browser.click("[data-testid=submit]").await;
    assert!(browser.visible("#cardNumber-error").await);
    assert_eq!(
        browser.text("#cardNumber-error").await,
        "Enter a valid card number."
    );
    assert_eq!(browser.url().await, url, "nothing was sent");

    enter_card(&browser, "4000000000000002").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for("[data-testid=form-message]").await;
    assert_eq!(
        browser.text("[data-testid=form-message]").await,
        "Your card was declined. Try another card or contact your bank."
    );
    browser.screenshot("checkout-declined").await;
    assert_eq!(status(&server, &token, &membership).await, "Incomplete");

    enter_card(&browser, "4242424242424242").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for_url(RETURN).await;
    assert_eq!(status(&server, &token, &membership).await, "Active");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_challenge_card_shows_the_identity_check() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (token, membership, url) = checkout(&server, "ada@example.com", "order-1").await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    enter_card(&browser, "4000000000003220").await;
    browser.click("[data-testid=submit]").await;
    browser.wait_for("#challenge-heading").await;
    assert_eq!(browser.text("#challenge-heading").await, "Confirm it's you");
    browser.screenshot("checkout-challenge").await;
    assert_eq!(status(&server, &token, &membership).await, "Incomplete");
    browser.click("button[value=confirm]").await;
    browser.wait_for_url(RETURN).await;
    assert_eq!(status(&server, &token, &membership).await, "Active");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_shows_the_invoice_and_cancels_the_membership() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    let customer = server.create_customer(&token, "ada@example.com").await;
    let active = server
        .active_membership(
            &token,
            "2027-01-10T09:00:00Z",
            server.membership_body(&customer, "order-1"),
        )
        .await;
    let key = active["membershipKey"].as_str().unwrap().to_string();
    let number = active["invoices"][0]["number"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/portal/session",
            Some(&token),
            Some(json!({"customerKey": customer,
                        "returnToWebsiteLink": "https://merchant.example/account"})),
        )
        .await;
    let portal = reply.body["portalRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();

    let browser = Browser::start(DESKTOP).await;
    browser.open(&portal).await;
    assert_eq!(browser.text("[data-testid=status]").await, "Active");
    assert_eq!(
        browser.text("[data-testid=next-billing]").await,
        "10 Feb 2027"
    );
    assert_eq!(browser.count("[data-testid=invoice]").await, 1);
    browser.screenshot("portal-desktop").await;

    browser.click("[data-testid=invoice] td.links a").await;
    browser.wait_for("[data-testid=invoice-number]").await;
    // The invoice's number, not its key, is what people read.
    assert_eq!(browser.text("[data-testid=invoice-number]").await, number);
    assert_eq!(browser.text("[data-testid=invoice-total]").await, "€29.97");
    assert_eq!(browser.text("[data-testid=invoice-status]").await, "Paid");
    browser.screenshot("invoice").await;

    browser.open(&portal).await;
    browser.click("[data-testid=cancel-link]").await;
    browser.wait_for("#cancel-heading").await;
    assert_eq!(browser.text("#cancel-heading").await, "Cancel Gold plan?");
    browser.screenshot("portal-cancel").await;
    browser.click("button.danger").await;
    browser.wait_for("[data-testid=banner]").await;
    assert_eq!(browser.text("[data-testid=status]").await, "Canceled");
    assert_eq!(status(&server, &token, &key).await, "Canceled");
    browser.screenshot("portal-canceled").await;
    browser.click("[data-testid=return-link]").await;
    browser
        .wait_for_url("https://merchant.example/account")
        .await;
    browser.close().await;

    let phone = Browser::start(PHONE).await;
    phone.open(&portal).await;
    phone.screenshot("portal-phone").await;
    phone.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkout_wears_the_merchants_display_name_and_colour() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (token, _, url) = checkout(&server, "brand@example.com", "order-brand").await;
    let reply = server
        .call(
            Method::PUT,
            "/api/subscriptions/v1/merchant/settings",
            Some(&token),
            Some(json!({"displayName": "Acme Coffee", "brandColor": "#0B6E4F"})),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    // The eyebrow is set in capitals.
    assert_eq!(browser.text(".summary .eyebrow").await, "ACME COFFEE");
    // The accent stylesheet loads under the page's policy and colours the pay button.
    let style = |property: &'static str| {
        let browser = &browser;
        async move {
            let script = format!(
                "return getComputedStyle(document.querySelector('button.primary')).{property}"
            );
            browser.client.execute(&script, vec![]).await.unwrap()
        }
    };
    assert_eq!(style("backgroundColor").await, "rgb(11, 110, 79)");
    assert_eq!(style("color").await, "rgb(255, 255, 255)");
    browser.screenshot("checkout-branded").await;
    browser.close().await;
}

/// A free trial started in the browser, through the identity check: the page says nothing is
/// due today and when the first charge falls, the button starts the trial, nothing is charged
/// and the membership is Trialing; the confirmation names the trial's end and the first
/// charge. On both databases; the SQLite run saves the screenshots.
mod free_trial {
    use super::*;
    use crate::backend_matrix;

    /// Saves a screenshot of the SQLite run (the PostgreSQL run's page is the same).
    async fn screenshot(backend: Backend, browser: &Browser, name: &str) {
        if backend == Backend::Sqlite {
            browser.screenshot(name).await;
        }
    }

    backend_matrix!(starts_a_trial_without_a_charge, |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-01-10T09:00:00Z").await;
        let customer = server.create_customer(&token, "trial@example.com").await;
        let mut body = server.membership_body(&customer, "order-trial");
        body["trialDays"] = json!(14);
        let membership = server.create_membership(&token, body).await["membershipKey"]
            .as_str()
            .unwrap()
            .to_string();
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/checkout/session",
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": membership,
                            "returnToWebsiteLink": RETURN})),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let url = reply.body["checkoutRedirectUrl"]
            .as_str()
            .unwrap()
            .to_string();
        let browser = Browser::start(DESKTOP).await;
        browser.open(&url).await;
        assert_eq!(
            browser.text("[data-testid=trial-days]").await,
            "14 days free"
        );
        assert_eq!(browser.text("[data-testid=due-today]").await, "€0.00");
        assert_eq!(
            browser.text("[data-testid=trial-terms]").await,
            "Free trial until 24 Jan 2027, then €29.97 per month."
        );
        assert_eq!(
            browser.text("[data-testid=submit]").await,
            "Start free trial"
        );
        screenshot(backend, &browser, "checkout-trial").await;
        enter_card(&browser, "4000000000003220").await;
        browser.click("[data-testid=submit]").await;
        browser.wait_for("#challenge-heading").await;
        assert!(browser
            .text("[data-testid=challenge-text]")
            .await
            .contains("confirm this card"));
        screenshot(backend, &browser, "checkout-trial-challenge").await;
        browser.click("button[value=confirm]").await;
        browser.wait_for_url(RETURN).await;
        assert_eq!(status(&server, &token, &membership).await, "Trialing");
        let charges = server
            .count(
                "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
                 WHERE m.membership_key = $1",
                &membership,
            )
            .await;
        assert_eq!(charges, 0, "nothing charged");

        browser.open(&url).await;
        assert_eq!(browser.text("h1").await, "Your free trial has started");
        assert_eq!(browser.text("[data-testid=trial-end]").await, "24 Jan 2027");
        assert_eq!(
            browser.text("[data-testid=first-charge]").await,
            "€29.97 · 24 Jan 2027"
        );
        screenshot(backend, &browser, "checkout-trial-started").await;
        browser.close().await;
    });
}

/// A promotion code applied on the checkout and paid: a code the merchant does not have is
/// refused under the field, the coupon's code is applied (the discount line and the new amount
/// due), taken back with its Remove button and applied again, and the card pays the discounted
/// amount. On both databases; the SQLite run saves the
/// screenshot.
mod promotion_code {
    use super::*;
    use crate::backend_matrix;

    backend_matrix!(is_applied_and_paid, |backend| async move {
        let server = TestServer::start(backend).await;
        let (token, membership, url) = checkout(&server, "promo@example.com", "order-promo").await;
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/coupons",
                Some(&token),
                Some(
                    json!({"code": "SPRING20", "percentOff": "20", "duration": "repeating",
                            "durationInCycles": 3}),
                ),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let browser = Browser::start(DESKTOP).await;
        browser.open(&url).await;
        assert_eq!(browser.text("[data-testid=due-today]").await, "€29.97");
        browser.fill("#promo-code", "SPRNG20").await;
        browser.click("[data-testid=promo-apply]").await;
        browser.wait_for("[data-testid=promo-error]").await;
        assert_eq!(
            browser.text("[data-testid=promo-error]").await,
            "This code is not valid."
        );
        if backend == Backend::Sqlite {
            browser.screenshot("checkout-promotion-code-refused").await;
        }
        browser.fill("#promo-code", "spring20").await;
        browser.click("[data-testid=promo-apply]").await;
        browser.wait_for("[data-testid=promo-applied]").await;
        assert_eq!(browser.url().await, url);
        assert_eq!(
            browser.text("[data-testid=promo-applied]").await,
            "Promotion code SPRING20 applied"
        );
        assert_eq!(
            browser.text("[data-testid=discount]").await,
            "Discount (SPRING20)\n-€5.99"
        );
        assert_eq!(browser.text("[data-testid=due-today]").await, "€23.98");
        assert_eq!(browser.text("[data-testid=submit]").await, "Pay €23.98");
        // Taken back: the field again and the full amount; then applied again.
        browser.click("[data-testid=promo-remove]").await;
        browser.wait_for("[data-testid=promo-form]").await;
        assert_eq!(browser.text("[data-testid=due-today]").await, "€29.97");
        browser.fill("#promo-code", "SPRING20").await;
        browser.click("[data-testid=promo-apply]").await;
        browser.wait_for("[data-testid=promo-applied]").await;
        assert_eq!(browser.text("[data-testid=due-today]").await, "€23.98");
        if backend == Backend::Sqlite {
            browser.screenshot("checkout-promotion-code").await;
        }
        enter_card(&browser, "4242424242424242").await;
        browser.click("[data-testid=submit]").await;
        browser.wait_for_url(RETURN).await;
        let m = server.membership(&token, &membership).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["invoices"][0]["discount"], "5.99");
        assert_eq!(m["invoices"][0]["amountPaid"], "23.98");
        browser.close().await;
    });
}
