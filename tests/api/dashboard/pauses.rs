//! Pausing and resuming from a membership's page (DESIGN §15): pause with a resume date typed
//! in UTC (checked by the API's rule, refused dates shown beside the field), change or clear the
//! date of a Paused membership, resume now; a membership that cannot be paused or resumed is
//! refused with the reason; another merchant's membership is the 404 page. SQLite and
//! PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::StatusCode;
use serde_json::Value;

use crate::backend_test;
use crate::fixtures::dashboard::{outcome, with_trial, Browser};
use crate::fixtures::memberships::{active, key};
use crate::harness::TestServer;

backend_test!(
    dashboard_pauses_until_a_date_and_resumes,
    |server: TestServer| async move {
        let api = server.token().await;
        let key = active(
            &server,
            &api,
            "pause-1@example.com",
            "order-pause-1@example.com",
        )
        .await;
        server.advance(&api, "2027-04-11T00:00:00Z").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page_path = format!("/dashboard/memberships/{key}");
        let path = format!("{page_path}/pause");
        let page = browser.get(&page_path, &cookie).await;
        assert!(
            page.text.contains(&format!("href=\"{path}\"")),
            "{}",
            page.text
        );
        assert!(!page.text.contains("data-testid=\"resume-link\""));

        let form = browser.get(&path, &cookie).await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.text);
        assert!(form.text.contains("Pause this membership?"));
        assert!(form
            .text
            .contains("name=\"resumeAt\" type=\"datetime-local\""));
        assert!(form.text.contains(&format!("action=\"{path}\"")));
        let csrf = form.csrf();
        let post = |resume_at: &'static str, csrf: String| {
            let (browser, cookie, path) = (&browser, &cookie, &path);
            async move {
                browser
                    .post(
                        path,
                        cookie,
                        &[("csrfToken", &csrf), ("resumeAt", resume_at)],
                    )
                    .await
            }
        };
        let forged = post("2027-06-15 00:00", "0".repeat(64)).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        for (typed, why) in [
            (
                "15.06.2027",
                "must be a date and time in UTC: YYYY-MM-DD HH:MM",
            ),
            (
                "2027-13-01 00:00",
                "must be a date and time in UTC: YYYY-MM-DD HH:MM",
            ),
            ("2027-04-10 23:59", "must be in the future"),
            (
                "2200-01-01T00:00",
                "must be at most 100 years in the future",
            ),
        ] {
            let refused = post(typed, csrf.clone()).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{typed}");
            assert!(
                refused
                    .text
                    .contains(&format!("data-testid=\"resumeAt-error\">{why}<")),
                "{typed}: {}",
                refused.text
            );
            assert!(refused.text.contains(&format!("value=\"{typed}\"")));
        }
        assert_eq!(server.membership(&api, &key).await["status"], "Active");

        // Typed with a space, read as UTC.
        let done = post("2027-06-15 08:30", csrf.clone()).await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
        assert_eq!(outcome(&done), Some("done"));
        assert!(
            done.text
                .contains("The membership is paused until 15 Jun 2027 08:30:00 UTC."),
            "{}",
            done.text
        );
        let m = server.membership(&api, &key).await;
        assert_eq!(m["status"], "Paused");
        assert_eq!(m["resumeAt"], "2027-06-15T08:30:00Z");
        assert_eq!(m["creditBalance"], "20.00", "20 of 30 days unused");
        let page = browser.get(&page_path, &cookie).await;
        assert!(page.text.contains("data-testid=\"status\">Paused<"));
        assert!(page
            .text
            .contains("data-testid=\"resumes\">15 Jun 2027 08:30:00 UTC<"));
        assert!(page.text.contains("data-testid=\"resume-link\""));
        assert!(page.text.contains(">Change resume date</a>"));

        // A Paused membership's date: filled in, changed (a datetime-local value), cleared.
        let form = browser.get(&path, &cookie).await;
        assert!(form.text.contains("Change the resume date?"));
        assert!(
            form.text.contains("value=\"2027-06-15T08:30\""),
            "{}",
            form.text
        );
        let moved = post("2027-07-01T00:00", csrf.clone()).await;
        assert_eq!(outcome(&moved), Some("done"), "{}", moved.text);
        assert_eq!(
            server.membership(&api, &key).await["resumeAt"],
            "2027-07-01T00:00:00Z"
        );
        let cleared = post("", csrf.clone()).await;
        assert!(cleared
            .text
            .contains("The membership is paused until it is resumed."));
        assert_eq!(server.membership(&api, &key).await["resumeAt"], Value::Null);
        let page = browser.get(&page_path, &cookie).await;
        assert!(page
            .text
            .contains("data-testid=\"resumes\">when resumed here or through the API<"));

        // Resume now: a new period from now, charged less the credit.
        let resume = format!("{page_path}/resume");
        let confirm = browser.get(&resume, &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK);
        assert!(confirm.text.contains("Resume this membership now?"));
        let forged = browser
            .post(&resume, &cookie, &[("csrfToken", "0".repeat(64).as_str())])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(server.membership(&api, &key).await["status"], "Paused");
        let resumed = browser
            .post(&resume, &cookie, &[("csrfToken", confirm.csrf().as_str())])
            .await;
        assert_eq!(resumed.status, StatusCode::OK, "{}", resumed.text);
        assert_eq!(outcome(&resumed), Some("done"));
        assert!(resumed
            .text
            .contains("The membership is resumed. Its status: Active."));
        let m = server.membership(&api, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["currentPeriodStart"], "2027-04-11T00:00:00Z");
        assert_eq!(m["invoices"][0]["creditApplied"], "20.00");
        assert_eq!(m["invoices"][0]["amountPaid"], "10.00");
        // Resumed already: refused with the reason.
        let again = browser
            .post(&resume, &cookie, &[("csrfToken", confirm.csrf().as_str())])
            .await;
        assert_eq!(again.status, StatusCode::CONFLICT);
        assert_eq!(outcome(&again), Some("refused"));
        assert!(again
            .text
            .contains("a Active membership cannot be resumed; only a Paused one can"));
    }
);

backend_test!(
    dashboard_pause_of_a_trial_is_refused_with_the_reason,
    |server: TestServer| async move {
        let api = server.token().await;
        let trialing = key(&with_trial(&server, &api, "trial-pause@example.com", true).await);
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let path = format!("/dashboard/memberships/{trialing}/pause");
        let form = browser.get(&path, &cookie).await;
        assert_eq!(form.status, StatusCode::OK);
        let refused = browser
            .post(
                &path,
                &cookie,
                &[("csrfToken", form.csrf().as_str()), ("resumeAt", "")],
            )
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
        assert_eq!(outcome(&refused), Some("refused"));
        assert!(refused
            .text
            .contains("a Trialing membership cannot be paused; only an Active one can"));
        assert_eq!(
            server.membership(&api, &trialing).await["status"],
            "Trialing"
        );
    }
);

backend_test!(
    dashboard_pause_resume_and_drop_of_another_merchants_membership_are_not_found,
    |server: TestServer| async move {
        let api = server.token().await;
        let key = active(
            &server,
            &api,
            "tenant-pause@example.com",
            "order-tenant-pause@example.com",
        )
        .await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let theirs = browser.log_in(&other).await;
        let csrf = browser.get("/dashboard/customers", &theirs).await.csrf();
        let base = format!("/dashboard/memberships/{key}");
        for path in [
            format!("{base}/pause"),
            format!("{base}/resume"),
            format!("{base}/pending-update"),
        ] {
            assert_eq!(
                browser.get(&path, &mine).await.status,
                StatusCode::OK,
                "{path}"
            );
            let page = browser.get(&path, &theirs).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
            let posted = browser
                .post(&path, &theirs, &[("csrfToken", &csrf), ("resumeAt", "")])
                .await;
            assert_eq!(posted.status, StatusCode::NOT_FOUND, "{path}");
        }
        let unknown = browser
            .get("/dashboard/memberships/mmbrshp_unknown/pause", &mine)
            .await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        assert_eq!(server.membership(&api, &key).await["status"], "Active");
    }
);
