//! The dashboard's overview (monthly recurring revenue per currency, memberships by status,
//! the last 30 days' revenue and its SVG chart, what needs attention, each linked to its list),
//! the lists behind it, and the sandbox tools, each on SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{listed, Answer, Browser};
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;

/// The text of the element `testid` whose `data-` attribute `attribute` is `value`, up to the
/// end of its line.
fn figure<'a>(page: &'a Answer, testid: &str, attribute: &str, value: &str) -> &'a str {
    let marker = format!("data-testid=\"{testid}\" data-{attribute}=\"{value}\"");
    let at = page
        .text
        .find(&marker)
        .unwrap_or_else(|| panic!("{marker} in {}", page.text));
    page.text[at..].lines().next().unwrap()
}

backend_test!(
    dashboard_overview_figures_in_two_currencies,
    |server: TestServer| async move {
        let api = server.token().await;
        let start = "2031-01-10T09:00:00Z";
        // EUR 29.97 a month.
        let ada = server.create_customer(&api, "ada@example.com").await;
        let monthly = server
            .active_membership(&api, start, server.membership_body(&ada, "monthly"))
            .await;
        // EUR 3.00 a week: 13.00 a month.
        let bob = server.create_customer(&api, "bob@example.com").await;
        let mut body = server.membership_body(&bob, "weekly");
        body["pricingInfo"] = json!({"currency": "EUR", "totalAmount": "3.00"});
        body["billingCycle"] = json!({"intervalType": "Weekly", "intervalCount": 1});
        server.active_membership(&api, start, body).await;
        // USD 120.00 a year: 10.00 a month; 20.00 of it refunded.
        let cy = server.create_customer(&api, "cy@example.com").await;
        let mut body = server.membership_body(&cy, "yearly");
        body["pricingInfo"] = json!({"currency": "USD", "totalAmount": "120.00"});
        body["billingCycle"] = json!({"intervalType": "Annually", "intervalCount": 1});
        let yearly = server.active_membership(&api, start, body).await;
        let invoice = yearly["invoices"][0]["invoiceKey"].as_str().unwrap();
        let refund = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/invoice/{invoice}/refund"),
                Some(&api),
                Some(json!({"amount": "20.00"})),
            )
            .await;
        assert!(refund.status.is_success(), "{}", refund.body);
        // Incomplete: no revenue, no MRR.
        let dee = server.create_customer(&api, "dee@example.com").await;
        let incomplete = server
            .create_membership(&api, server.membership_body(&dee, "unpaid"))
            .await;
        let incomplete = incomplete["membershipKey"].as_str().unwrap().to_string();
        // Another merchant's memberships count for it only.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_api = server.token_for(&other).await;
        let mut body = server.customer_body("zed@example.com");
        body["processorKey"] = json!(other.processor_key);
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(&other_api),
                Some(body),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let theirs = reply.body["customerKey"].as_str().unwrap().to_string();
        server
            .active_membership(&other_api, start, server.membership_body(&theirs, "z"))
            .await;

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let home = browser.get("/dashboard", &cookie).await;
        assert_eq!(home.location.as_deref(), Some("/dashboard/overview"));
        let page = browser.get("/dashboard/overview", &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(
            page.text.find("href=\"/dashboard/overview\"")
                < page.text.find("href=\"/dashboard/customers\"")
        );

        let eur = figure(&page, "mrr", "currency", "EUR");
        assert!(eur.contains("€42.97"), "29.97 + 3.00 × 52 / 12: {eur}");
        assert!(
            eur.contains("href=\"/dashboard/memberships?status=Active\""),
            "{eur}"
        );
        assert!(figure(&page, "mrr", "currency", "USD").contains("$10.00"));
        assert_eq!(page.text.matches("data-testid=\"mrr\"").count(), 2);

        let count = |status: &str| figure(&page, "count", "status", status).to_string();
        assert!(count("Active").contains(">3</a>"), "{}", count("Active"));
        assert!(count("Active").contains("href=\"/dashboard/memberships?status=Active\""));
        assert!(count("Incomplete").contains(">1</a>"));
        assert!(count("Canceled").contains(">0</a>"));
        assert!(figure(&page, "failed", "status", "PastDue").contains("<strong>0</strong>"));

        let eur = figure(&page, "revenue", "currency", "EUR");
        assert!(eur.contains("data-currency=\"EUR\""));
        let at = page
            .text
            .find("data-testid=\"revenue\" data-currency=\"EUR\"")
            .unwrap();
        let section = &page.text[at..];
        assert!(
            section.contains("data-testid=\"revenue-total\">€32.97<"),
            "{section}"
        );
        assert!(section.contains("src=\"/dashboard/overview/revenue.svg?currency=EUR\""));
        assert!(
            section.contains("href=\"/dashboard/invoices?status=Paid\""),
            "the list behind it"
        );
        assert!(section.contains("10 Jan 2031</td><td>€32.97"), "{section}");
        let at = page
            .text
            .find("data-testid=\"revenue\" data-currency=\"USD\"")
            .unwrap();
        assert!(
            page.text[at..].contains("data-testid=\"revenue-total\">$100.00<"),
            "paid less refunded"
        );

        // The chart is an SVG under a policy that runs nothing, and the page's policy allows
        // same-origin images.
        assert!(page.csp.contains("img-src 'self'"), "{}", page.csp);
        let chart = server
            .client
            .get(format!(
                "{}/dashboard/overview/revenue.svg?currency=EUR",
                server.base_url
            ))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(chart.status(), StatusCode::OK);
        assert_eq!(chart.headers()["content-type"], "image/svg+xml");
        assert!(chart.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'none'"));
        let svg = chart.text().await.unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<rect"), "{svg}");
        assert!(!svg.contains("<script") && !svg.contains("style="), "{svg}");
        let bad = browser
            .get("/dashboard/overview/revenue.svg?currency=XXX1", &cookie)
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        let none = browser
            .get("/dashboard/overview/revenue.svg?currency=eur", "")
            .await;
        assert_eq!(none.status, StatusCode::SEE_OTHER, "no session: the login");

        // The lists behind the figures.
        let active = browser
            .get("/dashboard/memberships?status=Active", &cookie)
            .await;
        assert_eq!(active.status, StatusCode::OK, "{}", active.text);
        assert_eq!(listed(&active).len(), 3);
        assert!(listed(&active).contains(&monthly["membershipKey"].as_str().unwrap().to_string()));
        let pending = browser
            .get("/dashboard/memberships?status=Incomplete", &cookie)
            .await;
        assert_eq!(listed(&pending), [incomplete]);
        assert_eq!(
            listed(&browser.get("/dashboard/memberships", &cookie).await).len(),
            4
        );
        let bad = browser
            .get("/dashboard/memberships?status=Sleeping", &cookie)
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    }
);

backend_matrix!(dashboard_overview_needs_attention, |backend| async move {
    let receiver = WebhookReceiver::start().await;
    receiver.answer_with(503);
    let server = TestServer::start_with_owned(backend, &receiver.settings()).await;
    let api = server.token().await;
    let (_, key) = server
        .past_due_membership(
            &api,
            "ann@example.com",
            "late",
            "2031-01-01T00:00:00Z",
            "2031-02-01T00:00:00Z",
        )
        .await;
    // The renewal's events get their seven attempts, all answered 503: Undeliverable.
    for at in [
        "00:05", "00:35", "01:35", "03:35", "07:35", "15:35", "23:00",
    ] {
        server.advance(&api, &format!("2031-02-01T{at}:00Z")).await;
    }
    let undeliverable = server
        .count(
            "SELECT COUNT(*) FROM events WHERE status = 'Undeliverable' AND order_id = $1",
            "late",
        )
        .await;
    assert!(undeliverable > 0, "seven 503s give up");
    let browser = Browser::new(&server);
    let cookie = browser.log_in(&server.merchant).await;
    let page = browser.get("/dashboard/overview", &cookie).await;
    let past_due = figure(&page, "failed", "status", "PastDue");
    assert!(past_due.contains("<strong>1</strong>"), "{past_due}");
    assert!(past_due.contains("href=\"/dashboard/memberships?status=PastDue\""));
    // A PastDue membership still renews: it counts in the MRR.
    assert!(figure(&page, "mrr", "currency", "EUR").contains("€29.97"));
    let hooks = page.text[page.text.find("data-testid=\"undeliverable\"").unwrap()..]
        .lines()
        .next()
        .unwrap();
    assert!(
        hooks.contains(&format!("<strong>{undeliverable}</strong>")),
        "{hooks}"
    );
    assert!(hooks.contains("href=\"/dashboard/events?deliveryStatus=Undeliverable\""));

    let list = browser
        .get("/dashboard/memberships?status=PastDue", &cookie)
        .await;
    assert_eq!(listed(&list), [key]);
    let events = browser
        .get("/dashboard/events?deliveryStatus=Undeliverable", &cookie)
        .await;
    assert_eq!(events.status, StatusCode::OK, "{}", events.text);
    assert_eq!(
        i64::try_from(events.text.matches("data-testid=\"event\"").count()).unwrap(),
        undeliverable
    );
    assert!(!events.text.contains("badge-Delivered"));
});

backend_test!(
    dashboard_sandbox_tools_call_the_test_helpers,
    |server: TestServer| async move {
        let api = server.token().await;
        server.advance(&api, "2031-03-01T00:00:00Z").await;
        let customer = server.create_customer(&api, "ada@example.com").await;
        let created = server
            .create_membership(&api, server.membership_body(&customer, "o-1"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get("/dashboard/sandbox", &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("data-testid=\"clock\">2031-03-01T00:0"));
        let csrf = page.csrf();

        // Without the form token: refused, nothing done.
        let forged = browser
            .post(
                "/dashboard/sandbox/clock",
                &cookie,
                &[("csrfToken", "x"), ("to", "2031-03-02T00:00:00")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        // Paying before a card is attached: the page, with why (409).
        let early = browser
            .post(
                "/dashboard/sandbox/pay",
                &cookie,
                &[("csrfToken", &csrf), ("membershipKey", &key)],
            )
            .await;
        assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.text);
        assert!(early.text.contains("data-testid=\"error\""));
        let bad_card = browser
            .post(
                "/dashboard/sandbox/card",
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("customerKey", &customer),
                    ("cardNumber", "12"),
                ],
            )
            .await;
        assert_eq!(bad_card.status, StatusCode::BAD_REQUEST);

        let card = browser
            .post(
                "/dashboard/sandbox/card",
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("customerKey", &customer),
                    ("cardNumber", "4242 4242 4242 4242"),
                ],
            )
            .await;
        assert_eq!(card.status, StatusCode::SEE_OTHER, "{}", card.text);
        assert_eq!(
            card.location.as_deref(),
            Some("/dashboard/sandbox?done=card")
        );
        let paid = browser
            .post(
                "/dashboard/sandbox/pay",
                &cookie,
                &[("csrfToken", &csrf), ("membershipKey", &key)],
            )
            .await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(server.membership(&api, &key).await["status"], "Active");

        let moved = browser
            .post(
                "/dashboard/sandbox/clock",
                &cookie,
                &[("csrfToken", &csrf), ("to", "2031-04-02T00:00:00")],
            )
            .await;
        assert_eq!(
            moved.location.as_deref(),
            Some("/dashboard/sandbox?done=clock"),
            "{} {}",
            moved.status,
            moved.text
        );
        // The session that moved the clock a month on is still open.
        let after = browser.get("/dashboard/sandbox?done=clock", &cookie).await;
        assert_eq!(after.status, StatusCode::OK, "{:?}", after.location);
        assert!(after.text.contains("data-testid=\"clock\">2031-04-02T00:0"));
        assert!(after.text.contains("data-testid=\"done\""));
        // The renewal that fell due on the way ran.
        assert_eq!(server.invoice_periods(&key).await.len(), 2);
        let back = browser
            .post(
                "/dashboard/sandbox/clock",
                &cookie,
                &[("csrfToken", &csrf), ("to", "2030-01-01T00:00:00")],
            )
            .await;
        assert_eq!(
            back.status,
            StatusCode::CONFLICT,
            "the clock never goes back"
        );
        let garbage = browser
            .post(
                "/dashboard/sandbox/clock",
                &cookie,
                &[("csrfToken", &csrf), ("to", "soon")],
            )
            .await;
        assert_eq!(garbage.status, StatusCode::BAD_REQUEST);
    }
);

backend_test!(
    dashboard_sandbox_is_not_for_live_merchants,
    |server: TestServer| async move {
        let live = server.another_merchant(Mode::Live).await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&live).await;
        let overview = browser.get("/dashboard/overview", &cookie).await;
        assert_eq!(overview.status, StatusCode::OK);
        assert!(!overview.text.contains("/dashboard/sandbox"), "no link");
        let page = browser.get("/dashboard/sandbox", &cookie).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND);
        let csrf = overview.csrf();
        for path in [
            "/dashboard/sandbox/clock",
            "/dashboard/sandbox/card",
            "/dashboard/sandbox/pay",
        ] {
            let answer = browser
                .post(
                    path,
                    &cookie,
                    &[("csrfToken", &csrf), ("to", "2040-01-01T00:00:00")],
                )
                .await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        }
    }
);
