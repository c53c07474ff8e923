//! The merchant dashboard in Chromium: log in with the merchant's credentials, search a
//! customer, open their membership page and log out; refund and re-send from that page. Screenshots go to `<target>/screenshots/`.

use serde_json::json;

use crate::chrome::{Browser, DESKTOP};
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
