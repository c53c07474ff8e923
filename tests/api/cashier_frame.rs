//! The cashier inside an iframe: the outcome page names the only origin its script may post the
//! outcome to (the merchant's, from the session's redirect URL for that outcome), and the script
//! never posts to `*`.

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;

use crate::backend_test;
use crate::fixtures::cashier::{card, open, pay, session_body};
use crate::harness::TestServer;

/// A browser showing the cashier in an iframe: `Sec-Fetch-Dest: iframe`, no redirects followed.
fn framed() -> reqwest::Client {
    let mut headers = HeaderMap::new();
    headers.insert("sec-fetch-dest", HeaderValue::from_static("iframe"));
    reqwest::Client::builder()
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `data-parent-origin` of the outcome page, unescaped.
fn parent_origin(page: &str) -> Option<String> {
    let marker = "data-parent-origin=\"";
    let start = page.find(marker)? + marker.len();
    let end = page[start..].find('"')? + start;
    Some(page[start..end].replace("&#x2f;", "/"))
}

backend_test!(
    the_framed_outcome_is_posted_only_to_the_merchant_origin,
    |server: TestServer| async move {
        let redirects = json!({
            "successRedirectUrl": "https://shop.example:8443/thanks?order=1",
            "failedRedirectUrl": "http://pay-trouble.example/failed",
            "billingDetails": {"lockedAmount": "12.00"}
        });
        let client = framed();

        let url = open(
            &server,
            &session_body(
                &server,
                "FRAME-OK",
                "https://merchant.example/n",
                redirects.clone(),
            ),
        )
        .await;
        let paid = pay(&client, &url, card("4242424242424242", "101")).await;
        assert_eq!(paid.status, 200, "the outcome page, not a redirect");
        assert!(paid.text.contains("data-cashier-outcome=\"success\""));
        assert_eq!(
            parent_origin(&paid.text).as_deref(),
            Some("https://shop.example:8443")
        );

        let url = open(
            &server,
            &session_body(
                &server,
                "FRAME-FAIL",
                "https://merchant.example/n",
                redirects,
            ),
        )
        .await;
        let failed = pay(&client, &url, card("4000000000000002", "101")).await;
        assert_eq!(failed.status, 200);
        assert!(failed.text.contains("data-cashier-outcome=\"failed\""));
        assert_eq!(
            parent_origin(&failed.text).as_deref(),
            Some("http://pay-trouble.example")
        );

        // Without a redirect URL there is no merchant origin to post to.
        let url = open(
            &server,
            &session_body(
                &server,
                "FRAME-NONE",
                "https://merchant.example/n",
                json!({"successRedirectUrl": null, "failedRedirectUrl": null,
                       "billingDetails": {"lockedAmount": "12.00"}}),
            ),
        )
        .await;
        let paid = pay(&client, &url, card("4242424242424242", "101")).await;
        assert_eq!(paid.status, 303);
        let shown = client.get(&url).send().await.unwrap().text().await.unwrap();
        assert!(
            shown.contains("data-cashier-outcome=\"success\""),
            "{shown}"
        );
        assert_eq!(parent_origin(&shown), None);

        // The script posts to that origin and to nothing else.
        let script = server
            .client
            .get(format!("{}/assets/cashier-page.js", server.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(script.contains("data-parent-origin"), "{script}");
        assert!(!script.contains("\"*\""), "no wildcard target: {script}");
    }
);
