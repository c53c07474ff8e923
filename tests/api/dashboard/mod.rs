//! The merchant dashboard (DESIGN §13, issue 30): login with the merchant's credentials under
//! the `/auth` limiter, the session cookie and its idle time-out, logout and CSRF here; the
//! customer search and its cursors, the customer and membership pages and tenant isolation in
//! [`pages`]; the membership page's actions and pay-now link in [`actions`], its trial, coupon
//! and scheduled change (and Trialing and Paused in the overview) in [`membership_terms`], pause
//! and resume in [`pauses`]; the API keys, settings and webhook endpoints pages in
//! [`api_keys`], [`settings`] and [`webhooks`]; the catalog and the coupons in [`catalog`] and
//! [`coupons`]; the processors page in [`processors`]; SEPA Direct Debit (a SEPA processor,
//! mandates, collection files and return files) in [`sepa`].

mod actions;
mod api_keys;
mod catalog;
mod coupons;
mod invoices;
mod membership_terms;
mod overview;
mod pages;
mod pauses;
mod processors;
mod sepa;
mod settings;
mod webhooks;

use reqwest::header::{COOKIE, ORIGIN};
use reqwest::StatusCode;
use serde_json::json;

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{Answer, Browser};
use crate::harness::TestServer;

backend_test!(
    dashboard_login_opens_a_session_with_a_strict_cookie,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let form = browser.get("/dashboard/login", "").await;
        assert_eq!(form.status, StatusCode::OK);
        assert!(form.csp.contains("script-src 'self'") && !form.csp.contains("unsafe-inline"));
        let login_cookie = form.set_cookie("recur_dashboard_login").unwrap();
        assert!(login_cookie.contains("; HttpOnly") && login_cookie.contains("; SameSite=Lax"));

        let answer = browser
            .try_log_in(&server.merchant.user_name, &server.merchant.password)
            .await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
        let set = answer.set_cookie("recur_dashboard").unwrap();
        assert!(
            set.contains("; Path=/dashboard; HttpOnly; SameSite=Lax"),
            "{set}"
        );
        assert!(!set.contains("Secure"), "plain HTTP public URL: {set}");
        let token = answer.cookie_value("recur_dashboard").unwrap();
        assert!(token.starts_with("ds_") && token.len() == 43);
        // Only a keyed digest of the token is stored.
        let stored = server
            .count(
                "SELECT COUNT(*) FROM dashboard_sessions WHERE token_digest = $1",
                &token,
            )
            .await;
        assert_eq!(stored, 0);
        let sessions = server
            .count(
                "SELECT COUNT(*) FROM dashboard_sessions WHERE token_digest <> $1",
                &token,
            )
            .await;
        assert_eq!(sessions, 1);

        let cookie = format!("recur_dashboard={token}");
        let page = browser.get("/dashboard/customers", &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page
            .text
            .contains("data-testid=\"merchant-name\">Test Merchant<"));
        assert!(page.csp.contains("form-action 'self'"));
        // The display name from the settings.
        let api = server.token().await;
        let reply = server
            .call(
                reqwest::Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&api),
                Some(json!({"displayName": "Acme Coffee"})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        let page = browser.get("/dashboard/customers", &cookie).await;
        assert!(page
            .text
            .contains("data-testid=\"merchant-name\">Acme Coffee<"));
        // Already logged in: the login page leads on.
        let again = browser.get("/dashboard/login", &cookie).await;
        assert_eq!(again.location.as_deref(), Some("/dashboard/overview"));
    }
);

backend_test!(
    dashboard_pages_redirect_to_login_without_a_session,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let api = server.token().await;
        let key = server.create_customer(&api, "ada@example.com").await;
        for path in [
            "/dashboard".to_string(),
            "/dashboard/customers".to_string(),
            format!("/dashboard/customers/{key}"),
            "/dashboard/memberships/mmbrshp_unknown".to_string(),
            "/dashboard/overview".to_string(),
            "/dashboard/overview/revenue.svg?currency=EUR".to_string(),
            "/dashboard/memberships?status=Active".to_string(),
            "/dashboard/events".to_string(),
            "/dashboard/sandbox".to_string(),
            "/dashboard/processors".to_string(),
            "/dashboard/processors/301/remove".to_string(),
        ] {
            for cookie in ["", "recur_dashboard=ds_made_up", "recur_dashboard="] {
                let page = browser.get(&path, cookie).await;
                assert_eq!(page.status, StatusCode::SEE_OTHER, "{path} {cookie}");
                let to = page.location.as_deref();
                assert!(
                    to == Some("/dashboard/login") || to == Some("/dashboard/overview"),
                    "{path}: {to:?}"
                );
                assert!(!page.text.contains("Ada"));
            }
        }
    }
);

backend_test!(
    dashboard_login_refuses_wrong_credentials_and_foreign_forms,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let user = server.merchant.user_name.clone();
        let wrong = browser.try_log_in(&user, "not-the-password").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
        assert!(wrong.text.contains("data-testid=\"login-error\""));
        assert!(wrong.set_cookie("recur_dashboard").is_none());
        let unknown = browser.try_log_in("nobody", "x").await;
        assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
        let blank = browser.try_log_in(&user, "").await;
        assert_eq!(blank.status, StatusCode::BAD_REQUEST);

        let password = server.merchant.password.clone();
        let (cookie, csrf) = browser.login_form().await;
        let fields = [
            ("csrfToken", csrf.as_str()),
            ("userName", user.as_str()),
            ("password", password.as_str()),
        ];
        // Without the login cookie, with another form's token, or from another site: 403.
        let no_cookie = browser.post("/dashboard/login", "", &fields).await;
        assert_eq!(no_cookie.status, StatusCode::FORBIDDEN);
        let (other_cookie, _) = browser.login_form().await;
        let swapped = browser
            .post("/dashboard/login", &other_cookie, &fields)
            .await;
        assert_eq!(swapped.status, StatusCode::FORBIDDEN);
        let cross = browser
            .client
            .post(format!("{}/dashboard/login", server.base_url))
            .header(COOKIE, &cookie)
            .header(ORIGIN, "https://evil.example")
            .form(&fields)
            .send()
            .await
            .unwrap();
        assert_eq!(cross.status(), StatusCode::FORBIDDEN);
        let ok = browser.post("/dashboard/login", &cookie, &fields).await;
        assert_eq!(ok.status, StatusCode::SEE_OTHER);
    }
);

backend_test!(
    dashboard_login_is_limited_like_auth,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let user = server.merchant.user_name.clone();
        for _ in 0..5 {
            let wrong = browser.try_log_in(&user, "guess").await;
            assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
        }
        let limited = browser.try_log_in(&user, &server.merchant.password).await;
        assert_eq!(
            limited.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{}",
            limited.text
        );
        assert!(limited.retry_after.is_some());
        assert!(limited.set_cookie("recur_dashboard").is_none());
        // One limiter: `POST /auth` is refused too.
        let auth = server
            .call(
                reqwest::Method::POST,
                "/api/subscriptions/v1/auth",
                None,
                Some(json!({"userName": user, "password": server.merchant.password})),
            )
            .await;
        auth.problem(429);
    }
);

backend_matrix!(
    dashboard_cookie_is_secure_on_an_https_public_url,
    |backend| async move {
        let server =
            TestServer::start_with(backend, &[("RECUR_PUBLIC_URL", "https://pay.example.com")])
                .await;
        let browser = Browser::new(&server);
        let form = browser.get("/dashboard/login", "").await;
        assert!(form
            .set_cookie("recur_dashboard_login")
            .unwrap()
            .contains("; Secure"));
        let answer = browser
            .try_log_in(&server.merchant.user_name, &server.merchant.password)
            .await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
        let set = answer.set_cookie("recur_dashboard").unwrap();
        assert!(set.contains("; HttpOnly; SameSite=Lax; Secure"), "{set}");
    }
);

backend_test!(
    dashboard_session_ends_after_30_idle_minutes,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let api = server.token().await;
        // The merchant's clock (its test clock) measures idleness beside the server's.
        server.advance(&api, "2031-01-01T00:00:00Z").await;
        let cookie = browser.log_in(&server.merchant).await;
        let ok = |page: &Answer| page.status == StatusCode::OK;
        server.advance(&api, "2031-01-01T00:29:00Z").await;
        assert!(ok(&browser.get("/dashboard/customers", &cookie).await));
        // Each request renews the session.
        server.advance(&api, "2031-01-01T00:58:00Z").await;
        assert!(ok(&browser.get("/dashboard/customers", &cookie).await));
        server.advance(&api, "2031-01-01T01:28:00Z").await;
        let ended = browser.get("/dashboard/customers", &cookie).await;
        assert_eq!(ended.status, StatusCode::SEE_OTHER);
        assert_eq!(ended.location.as_deref(), Some("/dashboard/login"));

        // On the server's clock: a session last seen 30 minutes ago has ended too.
        let cookie = browser.log_in(&server.merchant).await;
        assert!(ok(&browser.get("/dashboard/customers", &cookie).await));
        let thirty_minutes: i64 = 30 * 60 * 1_000_000;
        sqlx::query("UPDATE dashboard_sessions SET seen_at = seen_at - $1")
            .bind(thirty_minutes)
            .execute(server.server.state.store.writer())
            .await
            .unwrap();
        let ended = browser.get("/dashboard/customers", &cookie).await;
        assert_eq!(ended.status, StatusCode::SEE_OTHER);
        // Housekeeping deletes the sessions ended on the server's clock, in batches, and keeps
        // the live one.
        let fresh = browser.log_in(&server.merchant).await;
        let sessions = || {
            server.count(
                "SELECT COUNT(*) FROM dashboard_sessions WHERE token_digest <> $1",
                "",
            )
        };
        assert_eq!(sessions().await, 3);
        let store = &server.server.state.store;
        let purge = || recur::store::dashboard_sessions::purge_ended(store, chrono::Utc::now(), 1);
        assert_eq!(purge().await.unwrap(), 1, "a batch");
        assert_eq!(purge().await.unwrap(), 1);
        assert_eq!(purge().await.unwrap(), 0);
        assert_eq!(sessions().await, 1, "the live session stays");
        assert!(ok(&browser.get("/dashboard/customers", &fresh).await));
    }
);

backend_test!(
    dashboard_logout_ends_the_session_and_needs_its_token,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get("/dashboard/customers", &cookie).await;
        let csrf = page.csrf();
        let forged = browser
            .post(
                "/dashboard/logout",
                &cookie,
                &[("csrfToken", "0".repeat(64).as_str())],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let missing = browser.post("/dashboard/logout", &cookie, &[]).await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN);
        // Another session's token does not log this one out.
        let other = browser.log_in(&server.merchant).await;
        let other_csrf = browser.get("/dashboard/customers", &other).await.csrf();
        assert_ne!(other_csrf, csrf);
        let swapped = browser
            .post(
                "/dashboard/logout",
                &cookie,
                &[("csrfToken", other_csrf.as_str())],
            )
            .await;
        assert_eq!(swapped.status, StatusCode::FORBIDDEN);
        assert_eq!(
            browser.get("/dashboard/customers", &cookie).await.status,
            StatusCode::OK
        );

        let out = browser
            .post(
                "/dashboard/logout",
                &cookie,
                &[("csrfToken", csrf.as_str())],
            )
            .await;
        assert_eq!(out.status, StatusCode::SEE_OTHER);
        assert_eq!(out.location.as_deref(), Some("/dashboard/login"));
        assert!(out
            .set_cookie("recur_dashboard")
            .unwrap()
            .contains("Max-Age=0"));
        let after = browser.get("/dashboard/customers", &cookie).await;
        assert_eq!(after.status, StatusCode::SEE_OTHER);
        assert_eq!(
            browser.get("/dashboard/customers", &other).await.status,
            StatusCode::OK
        );
    }
);
