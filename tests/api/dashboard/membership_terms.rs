//! What DESIGN §15 adds to a membership, in the dashboard: its trial, coupon and scheduled
//! change on its page; dropping the scheduled change (confirmed, posted with the session's form
//! token, refused when there is none); Trialing and Paused memberships counted and listed by
//! status but not in the monthly recurring revenue. SQLite and PostgreSQL.

use recur_domain::coupon::{AppliedCoupon, CouponDuration, CouponOff, Discount};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::checkout::{give_discount, spring20};
use crate::fixtures::dashboard::{listed, outcome, with_trial, Answer, Browser};
use crate::fixtures::memberships::{body_for, key, update};
use crate::harness::TestServer;

/// The text of the element `testid` on `page`, tags and all, up to its closing `</dd>`.
fn fact<'a>(page: &'a Answer, testid: &str) -> &'a str {
    let marker = format!("data-testid=\"{testid}\">");
    let at = page
        .text
        .find(&marker)
        .unwrap_or_else(|| panic!("{marker} in {}", page.text))
        + marker.len();
    page.text[at..].split("</dd>").next().unwrap()
}

backend_test!(
    dashboard_membership_page_shows_the_trial_and_the_coupon,
    |server: TestServer| async move {
        let api = server.token().await;
        let waiting = key(&with_trial(&server, &api, "waiting@example.com", false).await);
        let trialing = key(&with_trial(&server, &api, "trialing@example.com", true).await);
        give_discount(&server, &trialing, &spring20()).await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;

        let page = browser
            .get(&format!("/dashboard/memberships/{trialing}"), &cookie)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("data-testid=\"status\">Free trial<"));
        assert_eq!(fact(&page, "trial"), "14 days, until 24 Jan 2027");
        assert_eq!(
            fact(&page, "coupon"),
            "<code>SPRING20</code> · 20 % off, on the next 3 invoices"
        );
        assert_eq!(fact(&page, "next-billing"), "24 Jan 2027");
        // A trial cannot be paused; it can be canceled.
        assert!(!page.text.contains("data-testid=\"pause-link\""));
        assert!(page.text.contains("data-testid=\"cancel-link\""));
        assert!(!page.text.contains("data-testid=\"drop-change-link\""));
        assert!(!page.text.contains("data-testid=\"resumes\""));

        // A fixed amount off every invoice; a trial that starts at the checkout.
        let forever = Discount::new(
            AppliedCoupon {
                coupon_id: "cpn_loyal".into(),
                code: "LOYAL".into(),
                off: CouponOff::AmountOff(500),
            },
            CouponDuration::Forever,
        );
        give_discount(&server, &waiting, &forever).await;
        let page = browser
            .get(&format!("/dashboard/memberships/{waiting}"), &cookie)
            .await;
        assert_eq!(fact(&page, "trial"), "14 days, from the checkout");
        assert_eq!(
            fact(&page, "coupon"),
            "<code>LOYAL</code> · €5.00 off, on every invoice"
        );
        // The German page.
        let german = browser
            .client
            .get(format!(
                "{}/dashboard/memberships/{trialing}",
                server.base_url
            ))
            .header("cookie", &cookie)
            .header("accept-language", "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("14 Tage, bis 24.01.2027"), "{german}");
        assert!(german.contains("20 % Rabatt, auf die nächsten 3 Rechnungen"));
    }
);

backend_test!(
    dashboard_drops_the_scheduled_change,
    |server: TestServer| async move {
        let api = server.token().await;
        let body = body_for(&server, &api, "later@example.com", "order-later").await;
        let record = server
            .active_membership(&api, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let change = json!({"membershipKey": key, "quantity": 1, "effective": "nextPeriod"});
        let reply = update(&server, &api, change).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page_path = format!("/dashboard/memberships/{key}");
        let page = browser.get(&page_path, &cookie).await;
        assert_eq!(
            fact(&page, "scheduled-change"),
            "€9.99 <span class=\"per\">per month</span> (1 × €9.99), from 1 May 2027"
        );
        let path = format!("{page_path}/pending-update");
        assert!(page.text.contains(&format!("href=\"{path}\"")));

        let confirm = browser.get(&path, &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        assert!(confirm.text.contains("Drop the scheduled change?"));
        assert!(confirm.text.contains(&format!("action=\"{path}\"")));
        let forged = browser
            .post(&path, &cookie, &[("csrfToken", "0".repeat(64).as_str())])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert!(server.membership(&api, &key).await["pendingUpdate"].is_object());

        let done = browser
            .post(&path, &cookie, &[("csrfToken", confirm.csrf().as_str())])
            .await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
        assert_eq!(outcome(&done), Some("done"));
        assert!(done.text.contains("The scheduled change is dropped"));
        let m = server.membership(&api, &key).await;
        assert_eq!(m["pendingUpdate"], Value::Null);
        assert_eq!(m["pricingInfo"]["quantity"], 3, "the terms stay");
        let page = browser.get(&page_path, &cookie).await;
        assert!(!page.text.contains("data-testid=\"scheduled-change\""));
        assert!(!page.text.contains("data-testid=\"drop-change-link\""));
        // Nothing left to drop: refused with the reason.
        let again = browser
            .post(&path, &cookie, &[("csrfToken", confirm.csrf().as_str())])
            .await;
        assert_eq!(again.status, StatusCode::CONFLICT);
        assert_eq!(outcome(&again), Some("refused"));
        assert!(again
            .text
            .contains("the membership has no scheduled change"));
    }
);

backend_test!(
    dashboard_counts_trialing_and_paused_memberships_without_their_revenue,
    |server: TestServer| async move {
        let api = server.token().await;
        let trialing = key(&with_trial(&server, &api, "trial-mrr@example.com", true).await);
        let mut body = body_for(&server, &api, "active@example.com", "order-active").await;
        body["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "30.00"});
        server
            .active_membership(&api, "2027-01-11T00:00:00Z", body)
            .await;
        let mut body = body_for(&server, &api, "paused@example.com", "order-paused").await;
        body["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "40.00"});
        let paused = key(&server
            .active_membership(&api, "2027-01-11T00:00:00Z", body)
            .await);
        let reply = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/{paused}/pause"),
                Some(&api),
                None,
            )
            .await;
        assert_eq!(reply.body["status"], "Paused", "{}", reply.body);

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get("/dashboard/overview", &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let line = |marker: &str| {
            let at = page.text.find(marker).unwrap_or_else(|| panic!("{marker}"));
            page.text[at..].lines().next().unwrap().to_string()
        };
        let mrr = line("data-testid=\"mrr\" data-currency=\"EUR\"");
        assert!(mrr.contains("€30.00"), "the Active one alone: {mrr}");
        assert!(page
            .text
            .contains("Memberships in a free trial or paused bring in nothing yet"));
        for (status, label) in [
            ("Trialing", "Free trial"),
            ("Paused", "Paused"),
            ("Active", "Active"),
        ] {
            let count = line(&format!("data-testid=\"count\" data-status=\"{status}\""));
            assert!(count.contains(&format!("<dt>{label}</dt>")), "{count}");
            assert!(count.contains(">1</a>"), "{count}");
            assert!(
                count.contains(&format!("href=\"/dashboard/memberships?status={status}\"")),
                "{count}"
            );
        }

        let all = browser.get("/dashboard/memberships", &cookie).await;
        assert!(all.text.contains(">Free trial</a>"), "a filter link");
        assert!(all.text.contains(">Paused</a>"), "a filter link");
        let only = browser
            .get("/dashboard/memberships?status=Trialing", &cookie)
            .await;
        assert_eq!(listed(&only), [trialing]);
        assert!(only.text.contains("badge-Trialing\">Free trial<"));
        let only = browser
            .get("/dashboard/memberships?status=Paused", &cookie)
            .await;
        assert_eq!(listed(&only), [paused]);
    }
);
