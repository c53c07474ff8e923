//! The portal's price switch in Chromium: a membership made from a catalog price lists the
//! product's other price, the confirmation shows the prorated amount, and confirming switches
//! and lands back on the portal; with `portalPlanChange` `nextPeriod` the switch waits for the
//! renewal and can be dropped. Screenshots: `portal-offers`, `portal-switch` (the confirmation,
//! also in `docs/screenshots/`), `portal-switched` and `portal-pending`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::chrome::{Browser, DESKTOP};
use crate::fixtures::create;
use crate::harness::{Backend, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customer_switches_price_through_the_portal() {
    let server = TestServer::start(Backend::Sqlite).await;
    let token = server.token().await;
    let team = create(&server, &token, "/products", json!({"name": "Team"})).await;
    let team = team["productId"].as_str().unwrap();
    let price = |amount: &'static str| {
        let (server, token) = (&server, &token);
        async move {
            let body = json!({"productId": team, "currency": "EUR", "unitAmount": amount,
                "intervalType": "Monthly"});
            create(server, token, "/prices", body).await["priceId"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let basic = price("10.00").await;
    let pro = price("20.00").await;
    let customer = server.create_customer(&token, "ada@example.com").await;
    let body = json!({
        "customerKey": customer,
        "subscriptionName": "Team plan",
        "webhookUrl": "https://merchant.example/hooks",
        "productInfo": {"orderId": "order-1"},
        "priceId": basic,
        "quantity": 3
    });
    let record = server
        .active_membership(&token, "2027-04-01T00:00:00Z", body)
        .await;
    let key = record["membershipKey"].as_str().unwrap().to_string();
    server.advance(&token, "2027-04-16T00:00:00Z").await;
    let session = create(
        &server,
        &token,
        "/portal/session",
        json!({"customerKey": customer}),
    )
    .await;
    let portal = session["portalRedirectUrl"].as_str().unwrap();

    let browser = Browser::start(DESKTOP).await;
    browser.open(portal).await;
    assert_eq!(browser.count("[data-testid=offer]").await, 1);
    assert_eq!(
        browser.text("[data-testid=offer-total]").await,
        "× 3 = €60.00"
    );
    browser.screenshot("portal-offers").await;

    browser.click("[data-testid=switch-link]").await;
    browser.wait_for("#switch-heading").await;
    assert_eq!(
        browser.text("#switch-heading").await,
        "Switch Team plan to a new price?"
    );
    assert_eq!(
        browser.text("[data-testid=new-price]").await,
        "€60.00 per month"
    );
    assert_eq!(browser.text("[data-testid=due-now]").await, "€15.00");
    assert_eq!(
        browser.text("[data-testid=next-billing]").await,
        "1 May 2027"
    );
    browser.screenshot("portal-switch").await;

    browser.click("[data-testid=confirm-switch]").await;
    browser.wait_for("[data-testid=banner]").await;
    assert_eq!(
        browser.text("[data-testid=banner]").await,
        "Your subscription is switched to its new price."
    );
    assert_eq!(browser.text(".small-price").await, "€60.00 per month");
    assert_eq!(browser.count("[data-testid=invoice]").await, 2);
    browser.screenshot("portal-switched").await;
    let m = server.membership(&token, &key).await;
    assert_eq!(m["priceId"], pro.as_str());
    assert_eq!(m["invoices"][0]["amountPaid"], "15.00");

    // At the next renewal instead: scheduled, shown, then dropped.
    let reply = server
        .call(
            Method::PUT,
            "/api/subscriptions/v1/merchant/settings",
            Some(&token),
            Some(json!({"portalPlanChange": "nextPeriod"})),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    browser.click("[data-testid=switch-link]").await;
    browser.wait_for("#switch-heading").await;
    assert_eq!(
        browser.text("[data-testid=switch-starts]").await,
        "1 May 2027"
    );
    assert_eq!(browser.text("[data-testid=due-now]").await, "Nothing");
    browser.click("[data-testid=confirm-switch]").await;
    browser.wait_for("[data-testid=pending-change]").await;
    assert_eq!(
        browser.text("[data-testid=pending-change] p").await,
        "Changes to €30.00 per month on 1 May 2027."
    );
    assert_eq!(
        browser.count("[data-testid=offer]").await,
        0,
        "the scheduled price is not offered again"
    );
    browser.screenshot("portal-pending").await;
    browser.click("[data-testid=drop-pending]").await;
    browser
        .wait_for_url(&format!("{portal}?done=dropped"))
        .await;
    assert_eq!(browser.count("[data-testid=pending-change]").await, 0);
    browser.close().await;
    let m = server.membership(&token, &key).await;
    assert_eq!(m["priceId"], pro.as_str());
    assert_eq!(m["pendingUpdate"], Value::Null);
}
