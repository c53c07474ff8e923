//! The dashboard's webhook endpoints: add (URL, event checkboxes, note; the secret shown once),
//! the API's checks beside each field, disable and enable, send a test (refused while
//! disabled), rotate (the new secret once), the delivery log, delete; CSRF and another
//! merchant's endpoint as the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{Answer, Browser};
use crate::fixtures::ENDPOINTS;
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;

const PAGE: &str = "/dashboard/webhooks";

/// The value of the read-only secret field on `page`.
fn secret(page: &Answer) -> String {
    let at = page.text.find("data-testid=\"secret\"").expect("a secret");
    let before = &page.text[..at];
    let start = before.rfind("value=\"").unwrap() + 7;
    before[start..].split('"').next().unwrap().to_string()
}

/// The first endpoint listed on the page.
fn first_endpoint(page: &Answer) -> String {
    let pattern = "data-testid=\"endpoint\" data-key=\"";
    let at = page.text.find(pattern).expect("an endpoint") + pattern.len();
    page.text[at..].split('"').next().unwrap().to_string()
}

async fn api_endpoint(server: &TestServer, id: &str) -> Value {
    let token = server.token().await;
    let reply = server
        .call(
            Method::GET,
            &format!("{ENDPOINTS}/{id}"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

backend_test!(
    dashboard_webhook_endpoints_are_added_with_the_apis_checks,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(PAGE, &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("value=\"SUBSCRIPTION_STATUS_CHANGED\""));
        let csrf = page.csrf();
        let zeros = "0".repeat(64);
        let forged = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", &zeros),
                    ("url", "https://hooks.example.com/a"),
                ],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);

        let refused = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("url", "http://10.0.0.1/hook"),
                    ("events", "NOT_AN_ACTION"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(refused.text.contains("data-testid=\"url-error\""));
        assert!(refused.text.contains("data-testid=\"events-error\""));
        let token = server.token().await;
        let listed = server
            .call(Method::GET, ENDPOINTS, Some(&token), None)
            .await;
        assert_eq!(listed.body["data"], json!([]), "nothing added");

        let added = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("url", "https://hooks.example.com/a"),
                    ("events", "TRANSACTION_DATA_UPDATE"),
                    ("events", "SUBSCRIPTION_STATUS_CHANGED"),
                    ("description", "Back office"),
                ],
            )
            .await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        let whsec = secret(&added);
        assert!(whsec.starts_with("whsec_"), "{whsec}");
        let id = first_endpoint(&added);
        let stored = api_endpoint(&server, &id).await;
        assert_eq!(stored["url"], "https://hooks.example.com/a");
        assert_eq!(
            stored["events"],
            json!(["SUBSCRIPTION_STATUS_CHANGED", "TRANSACTION_DATA_UPDATE"])
        );
        assert_eq!(stored["description"], "Back office");
        // Shown once: not on the list again, not in the database.
        let again = browser.get(PAGE, &cookie).await;
        assert!(!again.text.contains(&whsec));
        let plain: i64 = server
            .count(
                "SELECT COUNT(*) FROM webhook_endpoints WHERE secret_sealed = $1",
                &whsec,
            )
            .await;
        assert_eq!(plain, 0);
        // No box ticked: every event.
        let every = browser
            .post(
                PAGE,
                &cookie,
                &[("csrfToken", &csrf), ("url", "https://hooks.example.com/b")],
            )
            .await;
        assert_eq!(every.status, StatusCode::OK);
        let id = first_endpoint(&every);
        assert_eq!(api_endpoint(&server, &id).await["events"], Value::Null);
    }
);

backend_matrix!(dashboard_webhook_endpoint_actions, |backend| async move {
    let receiver = WebhookReceiver::start().await;
    let server = TestServer::start_with_owned(backend, &receiver.settings()).await;
    let api = server.token().await;
    let browser = Browser::new(&server);
    let cookie = browser.log_in(&server.merchant).await;
    let csrf = browser.get(PAGE, &cookie).await.csrf();
    let url = format!("{}/ep", receiver.url);
    let added = browser
        .post(PAGE, &cookie, &[("csrfToken", &csrf), ("url", &url)])
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    let id = first_endpoint(&added);
    let page = format!("{PAGE}/{id}");
    let zeros = "0".repeat(64);

    // Disable, then a test is refused with the reason; enable, and it is queued.
    for path in ["enabled", "test", "rotate", "delete"] {
        let forged = browser
            .post(
                &format!("{page}/{path}"),
                &cookie,
                &[("csrfToken", &zeros), ("enabled", "false")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(api_endpoint(&server, &id).await["enabled"], true);
    let off = browser
        .post(
            &format!("{page}/enabled"),
            &cookie,
            &[("csrfToken", &csrf), ("enabled", "false")],
        )
        .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.text);
    assert_eq!(api_endpoint(&server, &id).await["enabled"], false);
    let refused = browser
        .post(&format!("{page}/test"), &cookie, &[("csrfToken", &csrf)])
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.text.contains("The endpoint is disabled"));
    let on = browser
        .post(
            &format!("{page}/enabled"),
            &cookie,
            &[("csrfToken", &csrf), ("enabled", "true")],
        )
        .await;
    assert_eq!(on.status, StatusCode::OK);
    let queued = browser
        .post(&format!("{page}/test"), &cookie, &[("csrfToken", &csrf)])
        .await;
    assert_eq!(queued.status, StatusCode::OK, "{}", queued.text);
    server.advance(&api, "2027-03-01T00:00:00Z").await;
    // Months on the merchant's clock ended the session.
    let cookie = browser.log_in(&server.merchant).await;
    let log = browser.get(&page, &cookie).await;
    let csrf = log.csrf();
    assert_eq!(log.status, StatusCode::OK);
    assert_eq!(log.text.matches("data-testid=\"delivery\"").count(), 1);
    assert!(log.text.contains("WEBHOOK_TEST"));
    assert!(log.text.contains("HTTP 200"), "{}", log.text);

    // Rotate: confirmed, the new secret shown once.
    let confirm = browser.get(&format!("{page}/rotate"), &cookie).await;
    assert_eq!(confirm.status, StatusCode::OK);
    let rotated = browser
        .post(&format!("{page}/rotate"), &cookie, &[("csrfToken", &csrf)])
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text);
    let new_secret = secret(&rotated);
    assert!(new_secret.starts_with("whsec_"));
    assert!(!browser.get(&page, &cookie).await.text.contains(&new_secret));

    // Delete: confirmed, then gone.
    assert_eq!(
        browser.get(&format!("{page}/delete"), &cookie).await.status,
        StatusCode::OK
    );
    let deleted = browser
        .post(&format!("{page}/delete"), &cookie, &[("csrfToken", &csrf)])
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text);
    let gone = server
        .call(Method::GET, &format!("{ENDPOINTS}/{id}"), Some(&api), None)
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(
        browser.get(&page, &cookie).await.status,
        StatusCode::NOT_FOUND
    );
});

backend_test!(
    dashboard_webhook_endpoints_of_another_merchant_are_not_found,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &mine).await.csrf();
        let added = browser
            .post(
                PAGE,
                &mine,
                &[("csrfToken", &csrf), ("url", "https://hooks.example.com/m")],
            )
            .await;
        let id = first_endpoint(&added);
        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let their_list = browser.get(PAGE, &theirs).await;
        assert!(!their_list.text.contains(&id));
        let their_csrf = their_list.csrf();
        let page = format!("{PAGE}/{id}");
        for path in [
            page.clone(),
            format!("{page}/rotate"),
            format!("{page}/delete"),
        ] {
            assert_eq!(
                browser.get(&path, &theirs).await.status,
                StatusCode::NOT_FOUND,
                "{path}"
            );
        }
        for path in ["enabled", "test", "rotate", "delete"] {
            let posted = browser
                .post(
                    &format!("{page}/{path}"),
                    &theirs,
                    &[("csrfToken", &their_csrf), ("enabled", "false")],
                )
                .await;
            assert_eq!(posted.status, StatusCode::NOT_FOUND, "{path}");
        }
        assert_eq!(api_endpoint(&server, &id).await["enabled"], true);
    }
);
