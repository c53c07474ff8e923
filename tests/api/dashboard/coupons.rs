//! The dashboard's coupons page: percent and amount coupons created with the API's rules, each
//! refusal beside its field, a code the merchant has already as a 409 beside the code, the
//! redemptions of the limit, archiving and restoring (an archived coupon redeems nothing), CSRF
//! and another merchant's coupon as the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::send;
use crate::fixtures::dashboard::keys;
use crate::fixtures::dashboard::Browser;
use crate::fixtures::shown;
use crate::harness::TestServer;

const PAGE: &str = "/dashboard/coupons";

/// A refused form: its fields, the element that says why and what it says.
type Refusal = (
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
);

/// The API's record of the coupon `id`.
async fn api_coupon(server: &TestServer, id: &str) -> Value {
    let token = server.token().await;
    let reply = send(server, Method::GET, &format!("/coupons/{id}"), &token, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The text of the element `testid` in the row of coupon `id` on `page`.
fn cell<'a>(page: &'a str, id: &str, testid: &str) -> &'a str {
    let row = page
        .split("data-testid=\"coupon\" data-key=\"")
        .find(|row| row.starts_with(id))
        .unwrap_or_else(|| panic!("{id} in {page}"));
    shown(row, testid)
}

backend_test!(
    dashboard_coupons_are_created_refused_and_archived,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2031-01-01T00:00:00Z").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let empty = browser.get(PAGE, &cookie).await;
        assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
        assert!(empty.text.contains("data-testid=\"nav-coupons\">"));
        assert!(empty.text.contains("data-testid=\"no-coupons\""));
        let csrf = empty.csrf();
        let post = |form: Vec<(&'static str, String)>| {
            let browser = &browser;
            let cookie = &cookie;
            async move {
                let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
                browser.post(PAGE, cookie, &pairs).await
            }
        };
        let with_token = |fields: &[(&'static str, &str)]| {
            let mut form = vec![("csrfToken", csrf.clone())];
            form.extend(fields.iter().map(|(k, v)| (*k, v.to_string())));
            form
        };

        let forged = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", "0".repeat(64).as_str()),
                    ("code", "X"),
                    ("percentOff", "5"),
                ],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);

        let created = post(with_token(&[
            ("code", "spring20"),
            ("percentOff", "20"),
            ("duration", "repeating"),
            ("durationInCycles", "3"),
            ("maxRedemptions", "100"),
            ("expiresAt", "2031-06-30T23:59"),
        ]))
        .await;
        assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
        assert_eq!(created.location.as_deref(), Some(PAGE));
        let created = post(with_token(&[
            ("code", "FIVE"),
            ("amountOff", "5.00"),
            ("currency", "eur"),
            ("duration", "once"),
        ]))
        .await;
        assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);

        let page = browser.get(PAGE, &cookie).await;
        let ids = keys(&page, "coupon");
        assert_eq!(ids.len(), 2);
        let (five, spring) = (ids[0].clone(), ids[1].clone());
        assert_eq!(cell(&page.text, &spring, "coupon-code"), "SPRING20");
        assert_eq!(cell(&page.text, &spring, "coupon-off"), "20 %");
        assert_eq!(cell(&page.text, &spring, "coupon-duration"), "3 invoices");
        assert_eq!(cell(&page.text, &spring, "coupon-redemptions"), "0 / 100");
        assert_eq!(
            cell(&page.text, &spring, "coupon-expires"),
            "30 Jun 2031 23:59:00 UTC"
        );
        assert_eq!(cell(&page.text, &five, "coupon-code"), "FIVE");
        assert_eq!(cell(&page.text, &five, "coupon-off"), "€5.00");
        assert_eq!(cell(&page.text, &five, "coupon-duration"), "one invoice");
        assert_eq!(
            cell(&page.text, &five, "coupon-redemptions"),
            "0 / no limit"
        );
        assert_eq!(cell(&page.text, &five, "coupon-expires"), "never");
        let record = api_coupon(&server, &spring).await;
        assert_eq!(record["percentOff"], "20");
        assert_eq!(record["duration"], "repeating");
        assert_eq!(record["durationInCycles"], 3);
        assert_eq!(record["maxRedemptions"], 100);
        assert_eq!(record["expiresAt"], "2031-06-30T23:59:00Z");
        let record = api_coupon(&server, &five).await;
        assert_eq!(record["amountOff"], "5.00");
        assert_eq!(record["currency"], "EUR");

        // Refusals, beside their fields; the values typed are kept and nothing is created.
        let cases: [Refusal; 7] = [
            (
                &[
                    ("code", "BOTH"),
                    ("percentOff", "10"),
                    ("amountOff", "1.00"),
                    ("currency", "EUR"),
                    ("duration", "once"),
                ],
                "error-amountOff",
                "give percentOff or amountOff, not both",
            ),
            (
                &[("code", "NONE"), ("duration", "once")],
                "error-percentOff",
                "either percentOff or amountOff is required",
            ),
            (
                &[("code", "MUCH"), ("percentOff", "150"), ("duration", "once")],
                "error-percentOff",
                "must be a decimal number greater than 0 and at most 100, with at most 4 decimal places",
            ),
            (
                &[("code", "two words"), ("percentOff", "10"), ("duration", "forever")],
                "error-code",
                "must be 1 to 40 letters, digits, '-' or '_'",
            ),
            (
                &[("code", "WHEN"), ("percentOff", "10"), ("duration", "once"), ("expiresAt", "tomorrow")],
                "error-expiresAt",
                "must be a date and time in UTC: YYYY-MM-DD HH:MM",
            ),
            (
                &[("code", "PAST"), ("percentOff", "10"), ("duration", "once"), ("expiresAt", "2030-12-31 23:00")],
                "error-expiresAt",
                "must be in the future",
            ),
            (
                &[("code", "MANY"), ("percentOff", "10"), ("duration", "once"), ("maxRedemptions", "lots")],
                "error-maxRedemptions",
                "must be a whole number",
            ),
        ];
        for (fields, testid, message) in cases {
            let refused = post(with_token(fields)).await;
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{fields:?}: {}",
                refused.text
            );
            let shown_message = shown(&refused.text, testid).replace("&#x27;", "'");
            assert_eq!(shown_message, message, "{fields:?}");
            let code = fields[0].1;
            assert!(
                refused.text.contains(&format!("value=\"{code}\"")),
                "{code} kept"
            );
        }
        let repeating = post(with_token(&[
            ("code", "LOOP"),
            ("percentOff", "10"),
            ("duration", "repeating"),
        ]))
        .await;
        assert_eq!(repeating.status, StatusCode::BAD_REQUEST);
        assert!(repeating
            .text
            .contains("data-testid=\"error-durationInCycles\""));
        assert!(repeating
            .text
            .contains("<option value=\"repeating\" selected>"));
        assert_eq!(keys(&browser.get(PAGE, &cookie).await, "coupon").len(), 2);

        // A code the merchant has, in any letter case: 409 beside the code.
        let taken = post(with_token(&[
            ("code", "Spring20"),
            ("percentOff", "5"),
            ("duration", "once"),
        ]))
        .await;
        assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.text);
        assert_eq!(
            shown(&taken.text, "error-code"),
            "is the code of another coupon of this merchant"
        );

        // A redemption counts against the limit.
        let customer = server.create_customer(&token, "coupon@example.com").await;
        let mut body = server.membership_body(&customer, "order-coupon");
        body["couponCode"] = json!("spring20");
        server.create_membership(&token, body).await;
        let page = browser.get(PAGE, &cookie).await;
        assert_eq!(cell(&page.text, &spring, "coupon-redemptions"), "1 / 100");

        // Archive and restore: an archived coupon redeems nothing.
        let toggle = format!("{PAGE}/{five}/active");
        let archived = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "false")],
            )
            .await;
        assert_eq!(archived.status, StatusCode::OK, "{}", archived.text);
        assert!(shown(&archived.text, "outcome-text").starts_with("The coupon FIVE is archived"));
        assert_eq!(api_coupon(&server, &five).await["active"], false);
        let page = browser.get(PAGE, &cookie).await;
        assert!(cell(&page.text, &five, "coupon-toggle").contains("Restore"));
        let mut body = server.membership_body(&customer, "order-five");
        body["couponCode"] = json!("FIVE");
        let refused = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(body.clone()),
            )
            .await;
        assert!(refused.problem(400).contains_key("couponCode"));
        let forged = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", "0".repeat(64).as_str()), ("active", "true")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let restored = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "true")],
            )
            .await;
        assert_eq!(restored.status, StatusCode::OK);
        assert_eq!(api_coupon(&server, &five).await["active"], true);
        server.create_membership(&token, body).await;
    }
);

backend_test!(
    dashboard_coupons_are_paged_and_kept_from_other_merchants,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut ids = Vec::new();
        for n in 0..21 {
            let body = json!({"code": format!("C{n}"), "percentOff": "10", "duration": "once"});
            let reply = send(&server, Method::POST, "/coupons", &token, Some(body)).await;
            assert_eq!(reply.status, 201, "{}", reply.body);
            ids.push(reply.body["couponId"].as_str().unwrap().to_string());
        }
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let first = browser.get(PAGE, &cookie).await;
        let newest: Vec<String> = ids.iter().rev().take(20).cloned().collect();
        assert_eq!(keys(&first, "coupon"), newest);
        let at = first
            .text
            .find("data-testid=\"next-page\"")
            .expect("a next page");
        let next = first.text[..at].rsplit("href=\"").next().unwrap();
        let next = next.split('"').next().unwrap().replace("&amp;", "&");
        let second = browser.get(&next, &cookie).await;
        assert_eq!(keys(&second, "coupon"), vec![ids[0].clone()]);
        let bad = browser
            .get(&format!("{PAGE}?cursor=made-up"), &cookie)
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);

        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let page = browser.get(PAGE, &theirs).await;
        assert!(keys(&page, "coupon").is_empty());
        let answer = browser
            .post(
                &format!("{PAGE}/{}/active", ids[0]),
                &theirs,
                &[("csrfToken", &page.csrf()), ("active", "false")],
            )
            .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        assert_eq!(api_coupon(&server, &ids[0]).await["active"], true);
        // The same code is another merchant's to have.
        let created = browser
            .post(
                PAGE,
                &theirs,
                &[
                    ("csrfToken", &page.csrf()),
                    ("code", "C0"),
                    ("percentOff", "10"),
                    ("duration", "once"),
                ],
            )
            .await;
        assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
        let page = browser.get(PAGE, "").await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "the login");
    }
);
