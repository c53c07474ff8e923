//! The hosted checkout's SEPA Direct Debit mandate in Chromium (DESIGN §18): the mandate text
//! names the creditor and its identifier, a missing consent is shown beside its box, and a
//! signed mandate pays: the customer lands on the return link with the membership Active and
//! its invoice Open until the collection date. On both databases; the SQLite run saves the
//! screenshots.

use reqwest::Method;
use serde_json::json;

use crate::backend_matrix;
use crate::chrome::{Browser, DESKTOP};
use crate::harness::{Backend, TestServer};

const RETURN: &str = "https://merchant.example/thanks";

backend_matrix!(a_customer_signs_a_mandate_and_pays, |backend| async move {
    let server = TestServer::start(backend).await;
    let token = server.token().await;
    server.advance(&token, "2027-03-01T10:00:00Z").await;
    let connected = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/processors",
            Some(&token),
            Some(json!({"kind": "sepa_debit", "name": "Club e.V.",
                        "creditorId": "DE98ZZZ09999999999", "iban": "DE89370400440532013000"})),
        )
        .await;
    assert_eq!(connected.status, 201, "{}", connected.body);
    let customer = server.create_customer(&token, "mandate@example.com").await;
    let membership = server
        .create_membership(&token, server.membership_body(&customer, "order-sepa"))
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

    let browser = Browser::start(DESKTOP).await;
    browser.open(&url).await;
    let text = browser.text("[data-testid=mandate-text]").await;
    assert!(text.contains("Club e.V."), "{text}");
    assert_eq!(
        browser.text("[data-testid=creditor-id]").await,
        "DE98ZZZ09999999999"
    );
    browser.fill("#sepa-holder", "Ada Lovelace").await;
    browser
        .fill("#sepa-iban", "DE89 3704 0044 0532 0130 00")
        .await;
    browser.click("[data-testid=sepa-submit]").await;
    browser.wait_for("[data-testid=error-consent]").await;
    assert!(browser.visible("[data-testid=error-consent]").await);
    if backend == Backend::Sqlite {
        browser.screenshot("checkout-sepa-consent-missing").await;
    }
    browser
        .fill("#sepa-iban", "DE89 3704 0044 0532 0130 00")
        .await;
    browser.click("[data-testid=sepa-consent]").await;
    browser.click("[data-testid=sepa-submit]").await;
    browser.wait_for_url(RETURN).await;
    let record = server.membership(&token, &membership).await;
    assert_eq!(record["status"], "Active");
    assert_eq!(
        record["invoices"][0]["status"], "Open",
        "until the collection date"
    );
    browser.close().await;
});
