//! The cashier page behind a hosted-page session's `redirectUrl`.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::chrome::{Browser, DESKTOP, PHONE};
use crate::harness::{Backend, TestServer};
use crate::merchant_site::MerchantSite;

/// Opens a session with `overrides` merged into a valid body; returns its redirect URL.
pub(crate) async fn session(server: &TestServer, order_id: &str, overrides: Value) -> String {
    let secret = &server.merchant.merchant_secret;
    let ts = chrono::Utc::now().timestamp().to_string();
    let email = "ada@example.com";
    let mut body = json!({
        "timestamp": ts,
        "signature": hex::encode(Sha256::digest(format!("{email};{ts};{secret}").as_bytes())),
        "billingDetails": {
            "firstName": "Ada", "lastName": "Lovelace", "email": email, "country": "DE",
            "phone": "+4915112345678", "currency": "EUR", "street": "Main Street 1",
            "city": "Berlin", "zipCode": "10115"
        },
        "orderId": order_id,
        "cashierDescription": "Annual plan, 12 months of Pro"
    });
    for (key, value) in overrides.as_object().unwrap() {
        if key == "billingDetails" {
            for (k, v) in value.as_object().unwrap() {
                body["billingDetails"][k] = v.clone();
            }
        } else {
            body[key] = value.clone();
        }
    }
    let reply = server
        .client
        .post(format!("{}/api/payment/hosted-page", server.base_url))
        .header("x-merchant-secret", secret)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    reply.json::<Value>().await.unwrap()["redirectUrl"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn processor_names(browser: &Browser) -> Vec<String> {
    let mut names = Vec::new();
    for element in browser
        .client
        .find_all(fantoccini::Locator::Css(".option span"))
        .await
        .unwrap()
    {
        names.push(element.text().await.unwrap());
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locked_amount_prefilled_details_and_filtered_processors() {
    let server = TestServer::start(Backend::Sqlite).await;
    let url = session(
        &server,
        "A-1001",
        json!({"billingDetails": {"lockedAmount": "1249.90"}, "disabledPspIds": [202]}),
    )
    .await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    assert_eq!(browser.text("[data-testid=amount]").await, "€1,249.90");
    assert_eq!(
        browser.count("input#amount").await,
        0,
        "a locked amount cannot be edited"
    );
    assert_eq!(browser.text("[data-testid=order-id]").await, "A-1001");
    assert_eq!(
        browser.text("[data-testid=description]").await,
        "Annual plan, 12 months of Pro"
    );
    let payer = browser.text("[data-testid=payer]").await;
    assert!(
        payer.contains("Ada Lovelace")
            && payer.contains("ada@example.com")
            && payer.contains("10115 Berlin"),
        "{payer}"
    );
    assert_eq!(
        processor_names(&browser).await,
        [
            "Sandbox Card Gateway A",
            "Sandbox Card Gateway B",
            "Sandbox E-Wallet"
        ]
    );
    assert_eq!(browser.text("button[type=submit]").await, "Pay €1,249.90");
    browser.screenshot("cashier-locked-desktop").await;
    browser.close().await;

    let phone = Browser::start(PHONE).await;
    phone.open(&url).await;
    assert_eq!(phone.text("[data-testid=amount]").await, "€1,249.90");
    phone.screenshot("cashier-locked-phone").await;
    phone.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editable_amount_card_only_and_fixed_processor() {
    let server = TestServer::start(Backend::Sqlite).await;
    let url = session(
        &server,
        "A-1002",
        json!({"creditCardOnly": true, "billingDetails": {"currency": "JPY"}}),
    )
    .await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    let amount = browser
        .client
        .find(fantoccini::Locator::Css("input#amount"))
        .await
        .expect("editable amount");
    assert_eq!(
        amount.attr("step").await.unwrap().as_deref(),
        Some("1"),
        "JPY has no minor unit"
    );
    assert_eq!(
        processor_names(&browser).await,
        ["Sandbox Card Gateway A", "Sandbox Card Gateway B"]
    );
    browser.screenshot("cashier-editable-desktop").await;

    browser.open(&format!("{url}&m_fixed_pp_id=102")).await;
    assert_eq!(processor_names(&browser).await, ["Sandbox Card Gateway B"]);
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payout_mode_and_expired_links() {
    let server = TestServer::start(Backend::Sqlite).await;
    let url = session(
        &server,
        "P-1",
        json!({"isPayOut": true, "billingDetails": {"lockedAmount": 20}}),
    )
    .await;
    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    assert_eq!(
        browser.text("button[type=submit]").await,
        "Receive payout €20.00"
    );
    assert_eq!(
        processor_names(&browser).await,
        ["Sandbox Card Gateway A", "Sandbox Card Gateway B"],
        "payouts go to cards"
    );
    browser.screenshot("cashier-payout").await;

    for bad in [
        url.replace("sessionToken=hp-", "sessionToken=hp-x"),
        url.replace("m_orderId=P-1", "m_orderId=P-2"),
        format!("{}/cashier", server.base_url),
    ] {
        browser.open(&bad).await;
        assert_eq!(
            browser.text("h1").await,
            "This payment link is no longer valid"
        );
        let status = server.client.get(&bad).send().await.unwrap().status();
        assert_eq!(status, 410);
    }
    browser.screenshot("cashier-expired").await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_carry_a_strict_content_security_policy() {
    let server = TestServer::start(Backend::Sqlite).await;
    let url = session(&server, "CSP-1", json!({})).await;
    let response = server.client.get(&url).send().await.unwrap();
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let html = response.text().await.unwrap();
    assert_eq!(
        html.matches("<script").count(),
        html.matches("<script src=\"/assets/").count(),
        "no inline or third-party scripts"
    );
    for attribute in ["href=\"", "src=\""] {
        for value in html.split(attribute).skip(1) {
            assert!(
                value.starts_with('/'),
                "only same-origin resources: {attribute}{}",
                &value[..value.len().min(40)]
            );
        }
    }
}

/// Fills the card form.
async fn enter_card(browser: &Browser, number: &str) {
    browser.fill("#cardNumber", number).await;
    browser.fill("#expiry", "1230").await;
    browser.fill("#cvc", "123").await;
}

/// (kind, status, processor, amount, attempts) of the order's transactions, oldest first.
pub(crate) async fn transactions(
    server: &TestServer,
    order_id: &str,
) -> Vec<(String, String, i64, i64, usize)> {
    let rows: Vec<(String, String, i64, i64, String)> = sqlx::query_as(
        "SELECT kind, status, processor_id, amount, attempts FROM cashier_transactions \
         WHERE order_id = $1 ORDER BY id",
    )
    .bind(order_id)
    .fetch_all(server.server.state.store.pool())
    .await
    .unwrap();
    rows.into_iter()
        .map(|(kind, status, processor, amount, attempts)| {
            let attempts: Vec<Value> = serde_json::from_str(&attempts).unwrap();
            (kind, status, processor, amount, attempts.len())
        })
        .collect()
}

pub(crate) fn redirects(site: &MerchantSite) -> Value {
    json!({"successRedirectUrl": site.ok(), "failedRedirectUrl": site.failed()})
}

pub(crate) fn merged(mut a: Value, b: Value) -> Value {
    for (k, v) in b.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pay_a_locked_amount_and_an_editable_one_on_a_fixed_processor() {
    let server = TestServer::start(Backend::Sqlite).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;

    let url = session(
        &server,
        "PAY-1",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": "49.90"}}),
        ),
    )
    .await;
    browser.open(&url).await;
    enter_card(&browser, "4242424242424242").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.ok()).await;
    assert_eq!(browser.text("#outcome").await, "Thank you for your order");
    assert_eq!(
        transactions(&server, "PAY-1").await,
        [("PayIn".into(), "Success".into(), 101, 4990, 1)]
    );

    let url = session(&server, "PAY-2", redirects(&site)).await;
    browser.open(&format!("{url}&m_fixed_pp_id=102")).await;
    assert_eq!(processor_names(&browser).await, ["Sandbox Card Gateway B"]);
    browser.fill("#amount", "25.50").await;
    enter_card(&browser, "5555555555554444").await;
    browser.screenshot("cashier-editable-filled").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.ok()).await;
    assert_eq!(
        transactions(&server, "PAY-2").await,
        [("PayIn".into(), "Success".into(), 102, 2550, 1)]
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_gateway_cascades_to_the_next_and_a_hard_decline_fails() {
    let server = TestServer::start(Backend::Sqlite).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;

    let url = session(
        &server,
        "CASCADE-1",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": 30}}),
        ),
    )
    .await;
    browser.open(&url).await;
    enter_card(&browser, "4000 0000 0000 0119").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.ok()).await;
    assert_eq!(
        transactions(&server, "CASCADE-1").await,
        [("PayIn".into(), "Success".into(), 102, 3000, 2)],
        "rejected by gateway A, approved by gateway B"
    );

    let url = session(
        &server,
        "CASCADE-2",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": 30}}),
        ),
    )
    .await;
    browser.open(&url).await;
    enter_card(&browser, "4000 0000 0000 0002").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.failed()).await;
    assert_eq!(
        transactions(&server, "CASCADE-2").await,
        [("PayIn".into(), "Rejected".into(), 101, 3000, 1)]
    );

    // Without a failed URL the customer stays and may try another card.
    let url = session(
        &server,
        "CASCADE-3",
        json!({"billingDetails": {"lockedAmount": 30}}),
    )
    .await;
    browser.open(&url).await;
    enter_card(&browser, "4000 0000 0000 0002").await;
    browser.click("button[type=submit]").await;
    browser.wait_for("[data-testid=form-message]").await;
    enter_card(&browser, "4242 4242 4242 4242").await;
    browser.click("button[type=submit]").await;
    browser.wait_for("[data-testid=outcome]").await;
    assert_eq!(
        browser.text("[data-testid=outcome]").await,
        "Payment received"
    );
    browser.screenshot("cashier-paid").await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payout_sends_money_to_the_card_and_a_wallet_needs_no_card() {
    let server = TestServer::start(Backend::Sqlite).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;

    let url = session(
        &server,
        "PAYOUT-1",
        merged(
            redirects(&site),
            json!({"isPayOut": true, "billingDetails": {"lockedAmount": 20}}),
        ),
    )
    .await;
    browser.open(&url).await;
    enter_card(&browser, "4242424242424242").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.ok()).await;
    assert_eq!(
        transactions(&server, "PAYOUT-1").await,
        [("PayOut".into(), "Success".into(), 101, 2000, 1)]
    );

    let url = session(
        &server,
        "WALLET-1",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": 15}}),
        ),
    )
    .await;
    browser.open(&url).await;
    browser.click("input[value='201']").await;
    assert!(
        !browser.visible("#cardNumber").await,
        "card fields hide for a wallet"
    );
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.ok()).await;
    assert_eq!(
        transactions(&server, "WALLET-1").await,
        [("PayIn".into(), "Success".into(), 201, 1500, 1)]
    );
    browser.close().await;
}

/// Opens the example shop with the cashier at `url` in its iframe, and switches into the frame.
async fn open_in_shop(browser: &Browser, site: &MerchantSite, url: &str) {
    browser.open(&site.shop(url)).await;
    browser.wait_for("iframe#recur-cashier").await;
    browser.client.enter_frame(Some(0)).await.unwrap();
    browser.wait_for("#cardNumber").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_shop_embeds_the_cashier_and_is_redirected_by_cashier_js() {
    let server = TestServer::start(Backend::Sqlite).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;
    let url = session(
        &server,
        "IFRAME-1",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": "12.00"}}),
        ),
    )
    .await;
    open_in_shop(&browser, &site, &url).await;
    enter_card(&browser, "4242424242424242").await;
    browser.screenshot("cashier-iframe").await;
    browser.click("button[type=submit]").await;
    // The top window, not the frame, lands on the shop's success page.
    browser.wait_for_url(&site.ok()).await;
    browser.client.enter_parent_frame().await.ok();
    assert_eq!(browser.text("#outcome").await, "Thank you for your order");
    assert_eq!(
        transactions(&server, "IFRAME-1").await,
        [("PayIn".into(), "Success".into(), 101, 1200, 1)]
    );

    // A failed payment sends the top window to the failed page.
    let url = session(
        &server,
        "IFRAME-2",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": "12.00"}}),
        ),
    )
    .await;
    open_in_shop(&browser, &site, &url).await;
    enter_card(&browser, "4000000000000002").await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url(&site.failed()).await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_does_not_hear_the_outcome() {
    let server = TestServer::start(Backend::Sqlite).await;
    let site = MerchantSite::start(format!("{}/cdn", server.base_url)).await;
    let browser = Browser::start(DESKTOP).await;
    let url = session(
        &server,
        "IFRAME-3",
        merged(
            redirects(&site),
            json!({"billingDetails": {"lockedAmount": "12.00"}}),
        ),
    )
    .await;
    // The example shop, served from an origin that is not the session's redirect origin.
    let elsewhere = site.shop(&url).replacen("merchant.example", "127.0.0.1", 1);
    browser.open(&elsewhere).await;
    browser.wait_for("iframe#recur-cashier").await;
    browser.client.enter_frame(Some(0)).await.unwrap();
    browser.wait_for("#cardNumber").await;
    enter_card(&browser, "4242424242424242").await;
    browser.click("button[type=submit]").await;
    // The frame shows the outcome, addressed to the merchant's origin, and its script has run
    // (with a `*` target, the top window would be on its way to the success page instead).
    let mut shown = false;
    for _ in 0..300 {
        assert_eq!(
            browser.url().await,
            elsewhere,
            "the outcome reached a page on another origin"
        );
        let state = browser
            .client
            .execute(
                "return document.querySelector('[data-parent-origin]') ? document.readyState : ''",
                vec![],
            )
            .await;
        if state.is_ok_and(|state| state == "complete") {
            shown = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(shown, "the outcome page never finished loading");
    browser.client.enter_parent_frame().await.unwrap();
    // A message would be handled by now, or within this pause: it sends the top window away.
    browser
        .client
        .execute_async("setTimeout(arguments[0], 500)", vec![])
        .await
        .unwrap();
    assert_eq!(browser.url().await, elsewhere);
    assert_eq!(browser.text("#status").await, "Pay for your order below.");
    assert_eq!(
        transactions(&server, "IFRAME-3").await,
        [("PayIn".into(), "Success".into(), 101, 1200, 1)]
    );
    browser.close().await;
}
