//! The merchant dashboard in Chromium: log in with the merchant's credentials, search a
//! customer, open their membership page and log out; refund and re-send from that page; the
//! catalog and the coupons. Screenshots go to `<target>/screenshots/`.

use serde_json::json;

use crate::chrome::{Browser, DESKTOP};
use crate::fixtures::create;
use crate::harness::{Backend, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_login_search_and_membership_page() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    let ada = server.create_customer(&token, "ada@example.com").await;
    let mut other = server.customer_body("grace@example.com");
    other["firstName"] = json!("Grace");
    other["lastName"] = json!("Hopper");
    let reply = server
        .call(
            reqwest::Method::POST,
            "/api/subscriptions/v1/customer",
            Some(&token),
            Some(other),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let membership = server
        .active_membership(
            &token,
            "2031-01-01T00:00:00Z",
            server.membership_body(&ada, "order-1"),
        )
        .await;
    let membership_key = membership["membershipKey"].as_str().unwrap().to_string();

    let browser = Browser::start(DESKTOP).await;
    browser
        .open(&format!("{}/dashboard/customers", server.base_url))
        .await;
    browser
        .wait_for_url(&format!("{}/dashboard/login", server.base_url))
        .await;
    browser.fill("#userName", &server.merchant.user_name).await;
    browser.fill("#password", &server.merchant.password).await;
    browser.screenshot("dashboard-login").await;
    browser.click("button[type=submit]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/overview", server.base_url))
        .await;
    assert_eq!(
        browser.text("[data-testid=merchant-name]").await,
        "Test Merchant"
    );
    browser.screenshot("dashboard-overview").await;
    browser
        .open(&format!("{}/dashboard/customers", server.base_url))
        .await;
    assert_eq!(browser.count("[data-testid=customer]").await, 2);

    browser.fill("[data-testid=search]", "lovel").await;
    browser.click("form.search button[type=submit]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/customers?q=lovel", server.base_url))
        .await;
    assert_eq!(browser.count("[data-testid=customer]").await, 1);
    browser.screenshot("dashboard-customers").await;
    browser.click("[data-testid=customer] a").await;
    browser
        .wait_for_url(&format!("{}/dashboard/customers/{ada}", server.base_url))
        .await;
    assert_eq!(
        browser.text("[data-testid=customer-name]").await,
        "Ada Lovelace"
    );
    assert!(browser.text("[data-testid=card]").await.ends_with("4242"));
    browser.click("[data-testid=membership] a").await;
    browser
        .wait_for_url(&format!(
            "{}/dashboard/memberships/{membership_key}",
            server.base_url
        ))
        .await;
    assert_eq!(browser.text("[data-testid=plan]").await, "Gold plan");
    assert_eq!(browser.text("[data-testid=status]").await, "Active");
    assert_eq!(
        browser.text("[data-testid=next-billing]").await,
        "1 Feb 2031"
    );
    assert_eq!(browser.count("[data-testid=invoice]").await, 1);
    assert!(browser.count("[data-testid=event]").await >= 1);
    browser.screenshot("dashboard-membership").await;
    browser
        .open(&format!("{}/dashboard/settings", server.base_url))
        .await;
    browser.screenshot("dashboard-settings").await;

    browser.click("[data-testid=logout]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/login", server.base_url))
        .await;
    browser
        .open(&format!("{}/dashboard/customers", server.base_url))
        .await;
    browser
        .wait_for_url(&format!("{}/dashboard/login", server.base_url))
        .await;
    browser.close().await;
}

/// Logs in, refunds part of an invoice from the membership page and re-sends an event, each
/// through its confirmation page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_actions_refund_and_resend() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    let ada = server.create_customer(&token, "ada@example.com").await;
    let membership = server
        .active_membership(
            &token,
            "2031-01-01T00:00:00Z",
            server.membership_body(&ada, "order-1"),
        )
        .await;
    let key = membership["membershipKey"].as_str().unwrap().to_string();
    let page = format!("{}/dashboard/memberships/{key}", server.base_url);

    let browser = Browser::start(DESKTOP).await;
    browser.open(&page).await;
    browser
        .wait_for_url(&format!("{}/dashboard/login", server.base_url))
        .await;
    browser.fill("#userName", &server.merchant.user_name).await;
    browser.fill("#password", &server.merchant.password).await;
    browser.click("button[type=submit]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/overview", server.base_url))
        .await;
    browser.open(&page).await;
    browser.wait_for_url(&page).await;

    browser.click("[data-testid=refund-link]").await;
    browser.wait_for("[data-testid=refundable]").await;
    assert_eq!(browser.text("[data-testid=refundable]").await, "€29.97");
    browser.fill("#amount", "5.50").await;
    browser.screenshot("dashboard-refund").await;
    browser.click("[data-testid=confirm]").await;
    browser.wait_for("[data-testid=outcome]").await;
    assert_eq!(
        browser.text("[data-testid=outcome-text]").await,
        "€5.50 was refunded."
    );
    browser.click("[data-testid=back]").await;
    browser.wait_for_url(&page).await;
    assert!(browser
        .text("[data-testid=invoice]")
        .await
        .contains("€5.50"));

    browser.click("[data-testid=resend-link]").await;
    browser.wait_for("[data-testid=confirm-form]").await;
    browser.click("[data-testid=confirm]").await;
    browser.wait_for("[data-testid=outcome]").await;
    assert_eq!(
        browser.text("[data-testid=outcome-text]").await,
        "The event is scheduled to be sent again."
    );
    browser.screenshot("dashboard-resent").await;
    browser.close().await;
}

/// Logs in on the login page the browser was sent to from `path`, and opens `path`.
async fn log_in_at(browser: &Browser, server: &TestServer, path: &str) {
    let page = format!("{}{path}", server.base_url);
    browser.open(&page).await;
    browser
        .wait_for_url(&format!("{}/dashboard/login", server.base_url))
        .await;
    browser.fill("#userName", &server.merchant.user_name).await;
    browser.fill("#password", &server.merchant.password).await;
    browser.click("button[type=submit]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/overview", server.base_url))
        .await;
    browser.open(&page).await;
    browser.wait_for_url(&page).await;
}

/// The catalog and the coupons: a product created and given a price from the catalog, a
/// coupon created and another archived from the coupons page. Screenshots of both pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_catalog_and_coupons() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    server.advance(&token, "2031-01-01T09:00:00Z").await;
    let starter = create(&server, &token, "/products", json!({"name": "Starter"})).await;
    let starter = starter["productId"].as_str().unwrap().to_string();
    for (amount, interval) in [("9.00", "Monthly"), ("90.00", "Annually")] {
        let body = json!({"productId": starter, "currency": "EUR", "unitAmount": amount,
            "intervalType": interval});
        create(&server, &token, "/prices", body).await;
    }

    let browser = Browser::start(DESKTOP).await;
    log_in_at(&browser, &server, "/dashboard/overview").await;
    browser.click("[data-testid=nav-catalog]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/catalog", server.base_url))
        .await;
    assert_eq!(browser.count("[data-testid=product]").await, 1);
    browser.fill("#name", "Pro").await;
    browser.fill("#description", "For teams of up to ten").await;
    browser.click("[data-testid=create-product]").await;
    browser.wait_for("[data-testid=new-price]").await;
    assert_eq!(browser.text("h1[data-testid=product-name]").await, "Pro");
    browser.fill("#unitAmount", "20.00").await;
    browser.fill("#currency", "EUR").await;
    browser.fill("#trialDays", "14").await;
    browser.click("[data-testid=add-price]").await;
    browser.wait_for("[data-testid=price]").await;
    assert_eq!(browser.text("[data-testid=price-amount]").await, "€20.00");
    assert_eq!(browser.text("[data-testid=price-trial]").await, "14 days");
    browser.fill("#unitAmount", "200").await;
    browser.fill("#currency", "EUR").await;
    browser.select("#intervalType", "Annually").await;
    browser.click("[data-testid=add-price]").await;
    browser
        .wait_for("[data-testid=price] + [data-testid=price]")
        .await;
    // The annual price is archived: it sells no new membership.
    browser.click("[data-testid=price-toggle]").await;
    browser.wait_for("[data-testid=outcome]").await;
    assert!(browser
        .text("[data-testid=outcome-text]")
        .await
        .starts_with("The price is archived"));
    browser.click("[data-testid=back]").await;
    browser.wait_for("[data-testid=price-archived]").await;
    browser.click("[data-testid=back-to-catalog]").await;
    browser
        .wait_for("[data-testid=product] + [data-testid=product]")
        .await;
    assert_eq!(browser.count("[data-testid=price]").await, 4);
    browser.screenshot("dashboard-catalog").await;

    create(
        &server,
        &token,
        "/coupons",
        json!({"code": "WELCOME5", "amountOff": "5.00", "currency": "EUR", "duration": "once",
            "expiresAt": "2031-03-31T23:59:59"}),
    )
    .await;
    browser.click("[data-testid=nav-coupons]").await;
    browser
        .wait_for_url(&format!("{}/dashboard/coupons", server.base_url))
        .await;
    browser.fill("#code", "spring20").await;
    browser.fill("#percentOff", "20").await;
    browser.select("#duration", "repeating").await;
    browser.fill("#durationInCycles", "3").await;
    browser.fill("#maxRedemptions", "100").await;
    browser.click("[data-testid=create-coupon]").await;
    browser
        .wait_for("[data-testid=coupon] + [data-testid=coupon]")
        .await;
    assert_eq!(browser.text("[data-testid=coupon-code]").await, "SPRING20");
    assert_eq!(browser.text("[data-testid=coupon-off]").await, "20 %");
    assert_eq!(
        browser.text("[data-testid=coupon-duration]").await,
        "3 invoices"
    );
    // A customer redeems it.
    let ada = server.create_customer(&token, "ada@example.com").await;
    let mut body = server.membership_body(&ada, "order-1");
    body["couponCode"] = json!("SPRING20");
    server.create_membership(&token, body).await;
    create(
        &server,
        &token,
        "/coupons",
        json!({"code": "LAUNCH", "percentOff": "50", "duration": "forever", "maxRedemptions": 10}),
    )
    .await;
    browser
        .open(&format!("{}/dashboard/coupons", server.base_url))
        .await;
    // The newest, LAUNCH, is archived.
    browser.click("[data-testid=coupon-toggle]").await;
    browser.wait_for("[data-testid=outcome]").await;
    browser.click("[data-testid=back]").await;
    browser.wait_for("[data-testid=coupon-archived]").await;
    assert_eq!(browser.count("[data-testid=coupon]").await, 3);
    assert_eq!(
        browser
            .text("[data-testid=coupon] + [data-testid=coupon] [data-testid=coupon-redemptions]")
            .await,
        "1 / 100"
    );
    browser.screenshot("dashboard-coupons").await;
    browser.close().await;
}
