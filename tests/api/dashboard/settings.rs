//! The dashboard's settings page: the API's rules with each field's error beside it (nothing
//! saved then), the same upsert as `PUT /merchant/settings` (a blank field unsets), CSRF, and
//! each merchant's own settings. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::Browser;
use crate::harness::TestServer;

const PAGE: &str = "/dashboard/settings";

async fn api_settings(server: &TestServer) -> Value {
    let token = server.token().await;
    let reply = server
        .call(
            Method::GET,
            "/api/subscriptions/v1/merchant/settings",
            Some(&token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    reply.body
}

backend_test!(
    dashboard_settings_are_checked_then_saved,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let form = browser.get(PAGE, &cookie).await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.text);
        assert!(form.text.contains("placeholder=\"INV\""));
        // The portal's plan change is a choice, showing its default while unset.
        assert!(form
            .text
            .contains("<select id=\"portalPlanChange\" name=\"portalPlanChange\""));
        assert!(form
            .text
            .contains("<option value=\"now\" selected>At once, prorated</option>"));
        assert!(form
            .text
            .contains("<option value=\"nextPeriod\">At the next renewal</option>"));
        let csrf = form.csrf();
        let fields = |color: &'static str, email: &'static str| {
            vec![
                ("displayName", "Acme Coffee"),
                ("legalName", "Acme Coffee GmbH"),
                ("address", "Main Street 1\r\n10115 Berlin"),
                ("country", "de"),
                ("taxId", "DE123456789"),
                ("supportEmail", email),
                ("brandColor", color),
                ("logoUrl", ""),
                ("invoicePrefix", "ACME"),
                ("portalPlanChange", "nextPeriod"),
            ]
        };

        let zeros = "0".repeat(64);
        let forged: Vec<(&str, &str)> = [("csrfToken", zeros.as_str())]
            .into_iter()
            .chain(fields("#112233", "help@acme.example"))
            .collect();
        let refused = browser.post(PAGE, &cookie, &forged).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert_eq!(api_settings(&server).await["legalName"], Value::Null);

        let bad: Vec<(&str, &str)> = [("csrfToken", csrf.as_str())]
            .into_iter()
            .chain(fields("red", "not an address"))
            .collect();
        let page = browser.post(PAGE, &cookie, &bad).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.text);
        assert!(page.text.contains("data-testid=\"error-brandColor\""));
        assert!(page.text.contains("#RRGGBB (six hexadecimal digits)"));
        assert!(page.text.contains("data-testid=\"error-supportEmail\""));
        assert!(!page.text.contains("data-testid=\"error-portalPlanChange\""));
        assert!(!page.text.contains("data-testid=\"error-legalName\""));
        assert!(
            page.text.contains("value=\"Acme Coffee GmbH\""),
            "kept as typed"
        );
        assert_eq!(
            api_settings(&server).await["legalName"],
            Value::Null,
            "nothing saved"
        );

        let good: Vec<(&str, &str)> = [("csrfToken", csrf.as_str())]
            .into_iter()
            .chain(fields("#112233", "help@acme.example"))
            .collect();
        let saved = browser.post(PAGE, &cookie, &good).await;
        assert_eq!(saved.status, StatusCode::OK, "{}", saved.text);
        assert!(saved.text.contains("data-testid=\"saved\""));
        let settings = api_settings(&server).await;
        assert_eq!(settings["displayName"], "Acme Coffee");
        assert_eq!(settings["country"], "DE", "the API's rule: uppercase");
        assert_eq!(settings["address"], "Main Street 1\n10115 Berlin");
        assert_eq!(settings["invoicePrefix"], "ACME");
        assert_eq!(settings["logoUrl"], Value::Null);
        assert_eq!(settings["portalPlanChange"], "nextPeriod");
        assert!(saved
            .text
            .contains("<option value=\"nextPeriod\" selected>At the next renewal</option>"));
        assert!(saved
            .text
            .contains("data-testid=\"merchant-name\">Acme Coffee<"));

        // A blank field unsets: the default shows again.
        let mut unset = good.clone();
        for field in unset.iter_mut() {
            if field.0 == "invoicePrefix" || field.0 == "displayName" {
                field.1 = "";
            }
        }
        let again = browser.post(PAGE, &cookie, &unset).await;
        assert_eq!(again.status, StatusCode::OK);
        let settings = api_settings(&server).await;
        assert_eq!(settings["invoicePrefix"], "INV");
        assert_eq!(settings["displayName"], "Test Merchant");
        assert_eq!(settings["legalName"], "Acme Coffee GmbH");
        assert_eq!(settings["portalPlanChange"], "nextPeriod");

        // A value the choice does not offer is refused beside it; nothing is saved.
        let mut odd = good.clone();
        for field in odd.iter_mut() {
            if field.0 == "portalPlanChange" {
                field.1 = "whenever";
            }
        }
        let refused = browser.post(PAGE, &cookie, &odd).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(refused
            .text
            .contains("data-testid=\"error-portalPlanChange\">must be now or nextPeriod<"));
        assert_eq!(
            api_settings(&server).await["portalPlanChange"],
            "nextPeriod"
        );
    }
);

backend_test!(
    dashboard_settings_are_each_merchants_own,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &mine).await.csrf();
        let saved = browser
            .post(
                PAGE,
                &mine,
                &[("csrfToken", &csrf), ("legalName", "Mine GmbH")],
            )
            .await;
        assert_eq!(saved.status, StatusCode::OK);
        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let page = browser.get(PAGE, &theirs).await;
        assert!(!page.text.contains("Mine GmbH"));
        // Their token does not post to my session, nor mine to theirs.
        let crossed = browser
            .post(
                PAGE,
                &theirs,
                &[("csrfToken", &csrf), ("legalName", "Theirs")],
            )
            .await;
        assert_eq!(crossed.status, StatusCode::FORBIDDEN);
        assert_eq!(api_settings(&server).await["legalName"], "Mine GmbH");
    }
);

backend_matrix!(dashboard_settings_need_a_session, |backend| async move {
    let server = TestServer::start(backend).await;
    let browser = Browser::new(&server);
    let page = browser.get(PAGE, "").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location.as_deref(), Some("/dashboard/login"));
    let posted = browser.post(PAGE, "", &[("legalName", "x")]).await;
    assert_eq!(posted.status, StatusCode::SEE_OTHER);
});
