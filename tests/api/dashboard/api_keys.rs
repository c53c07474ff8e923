//! The dashboard's API keys page: create (name, scope; the secret shown once and never
//! stored), the API's checks beside each field, revoke after a confirmation, CSRF, and another
//! merchant's key as the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::Browser;
use crate::harness::TestServer;

const PAGE: &str = "/dashboard/api-keys";

/// The status of a `GET /customers` made with the key `secret`.
async fn works(server: &TestServer, secret: &str) -> StatusCode {
    server
        .call(
            Method::GET,
            "/api/subscriptions/v1/customers",
            Some(secret),
            None,
        )
        .await
        .status
}

backend_test!(
    dashboard_api_keys_are_created_once_and_revoked,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let empty = browser.get(PAGE, &cookie).await;
        assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
        assert!(empty.text.contains("aria-current=\"page\""));
        let csrf = empty.csrf();

        let forged = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", "0".repeat(64).as_str()),
                    ("name", "x"),
                    ("scope", "read"),
                ],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let none: i64 = server
            .count("SELECT COUNT(*) FROM api_keys WHERE name <> $1", "")
            .await;
        assert_eq!(none, 0);

        let refused = browser
            .post(
                PAGE,
                &cookie,
                &[("csrfToken", &csrf), ("name", " "), ("scope", "admin")],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(refused.text.contains("data-testid=\"name-error\""));
        assert!(
            refused.text.contains("must be read or write"),
            "{}",
            refused.text
        );

        let created = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("name", "Reporting job"),
                    ("scope", "read"),
                ],
            )
            .await;
        assert_eq!(created.status, StatusCode::OK, "{}", created.text);
        let at = created
            .text
            .find("data-testid=\"secret\"")
            .expect("the secret");
        let before = &created.text[..at];
        let start = before.rfind("value=\"").unwrap() + 7;
        let secret = before[start..].split('"').next().unwrap().to_string();
        assert!(secret.starts_with("rk_"), "{secret}");
        assert!(created.text.contains("Reporting job"));
        assert_eq!(works(&server, &secret).await, StatusCode::OK);
        // Never stored, never shown again.
        let stored: i64 = server
            .count(
                "SELECT COUNT(*) FROM api_keys WHERE secret_digest = $1",
                &secret,
            )
            .await;
        assert_eq!(stored, 0);
        let again = browser.get(PAGE, &cookie).await;
        assert!(!again.text.contains(&secret));
        let key_id = {
            let pattern = "data-testid=\"api-key\" data-key=\"";
            let at = again.text.find(pattern).unwrap() + pattern.len();
            again.text[at..].split('"').next().unwrap().to_string()
        };
        assert!(key_id.starts_with("ak_"));

        let path = format!("{PAGE}/{key_id}/revoke");
        let confirm = browser.get(&path, &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK);
        let forged = browser
            .post(&path, &cookie, &[("csrfToken", "0".repeat(64).as_str())])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(works(&server, &secret).await, StatusCode::OK);
        let revoked = browser.post(&path, &cookie, &[("csrfToken", &csrf)]).await;
        assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text);
        assert!(revoked.text.contains("The key is revoked."));
        assert_eq!(works(&server, &secret).await, StatusCode::UNAUTHORIZED);
        let gone = browser.post(&path, &cookie, &[("csrfToken", &csrf)]).await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND);
    }
);

backend_test!(
    dashboard_api_keys_of_another_merchant_are_not_found,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &mine).await.csrf();
        let created = browser
            .post(
                PAGE,
                &mine,
                &[("csrfToken", &csrf), ("name", "Mine"), ("scope", "write")],
            )
            .await;
        assert_eq!(created.status, StatusCode::OK);
        let listed = browser.get(PAGE, &mine).await;
        let pattern = "data-testid=\"api-key\" data-key=\"";
        let at = listed.text.find(pattern).unwrap() + pattern.len();
        let key_id = listed.text[at..].split('"').next().unwrap().to_string();

        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let their_page = browser.get(PAGE, &theirs).await;
        assert!(!their_page.text.contains(&key_id));
        let path = format!("{PAGE}/{key_id}/revoke");
        assert_eq!(
            browser.get(&path, &theirs).await.status,
            StatusCode::NOT_FOUND
        );
        let posted = browser
            .post(&path, &theirs, &[("csrfToken", &their_page.csrf())])
            .await;
        assert_eq!(posted.status, StatusCode::NOT_FOUND);
        assert_eq!(browser.get(&path, &mine).await.status, StatusCode::OK);
    }
);

backend_matrix!(dashboard_api_keys_need_a_session, |backend| async move {
    let server = TestServer::start(backend).await;
    let browser = Browser::new(&server);
    for path in [PAGE.to_string(), format!("{PAGE}/ak_x/revoke")] {
        let page = browser.get(&path, "").await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(page.location.as_deref(), Some("/dashboard/login"));
    }
});
