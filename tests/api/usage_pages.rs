//! The usage so far in the customer portal and on the dashboard's membership page (DESIGN §19):
//! per meter the current period's quantity and amount, and an inline SVG chart of its last
//! periods (at most 6, the current one last) read from the per-period totals; nothing for a
//! membership without metered prices, and nothing of another merchant's.

use chrono::{TimeZone, Utc};
use recur::store::merchants::Mode;
use recur::store::usage::recent_totals;
use reqwest::header::ACCEPT_LANGUAGE;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_test;
use crate::fixtures::dashboard::Browser;
use crate::fixtures::usage::{count_events, meter, metered_price, recorded};
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// The markup of the usage table's row of meter `code` on `page`.
fn meter_row<'a>(page: &'a str, code: &str) -> &'a str {
    let marker = format!("data-testid=\"usage-meter\" data-code=\"{code}\"");
    let start = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no usage of {code} in {page}"));
    let row = &page[start..];
    &row[..row.find("</tr>").expect("the row ends")]
}

/// The values of attribute `name` in `markup`, in order.
fn attributes(markup: &str, name: &str) -> Vec<String> {
    let marker = format!(" {name}=\"");
    markup
        .match_indices(&marker)
        .map(|(at, m)| {
            markup[at + m.len()..]
                .split('"')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The text of the cell `testid` in `row`.
fn cell(row: &str, testid: &str) -> String {
    let marker = format!("data-testid=\"{testid}\">");
    let at = row.find(&marker).expect("the cell") + marker.len();
    row[at..].split('<').next().unwrap().to_string()
}

/// The portal link of `customer`'s portal session.
async fn portal_link(server: &TestServer, token: &str, customer: &str) -> String {
    let session = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/portal/session",
            Some(token),
            Some(json!({"customerKey": customer})),
        )
        .await;
    assert_eq!(session.status, StatusCode::CREATED, "{}", session.body);
    session.body["portalRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string()
}

backend_test!(
    usage_pages_show_the_period_so_far_and_the_last_six_periods,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let calls = meter(
            &server,
            &token,
            json!({"code": "api_calls", "name": "API calls", "aggregation": "count"}),
        )
        .await;
        let storage = meter(
            &server,
            &token,
            json!({"code": "storage", "name": "Storage GB", "aggregation": "sum",
                "property": "gb"}),
        )
        .await;
        let per_call = metered_price(&server, &token, &calls, json!({"unitAmount": "0.004"})).await;
        let per_gb = metered_price(&server, &token, &storage, json!({"unitAmount": "0.50"})).await;
        let customer = server.create_customer(&token, "usage@example.com").await;
        let mut body = server.membership_body(&customer, "usage-pages");
        body["meteredPriceIds"] = json!([per_call, per_gb]);
        let m = server
            .active_membership(&token, "2030-01-01T00:00:00Z", body)
            .await;
        let key = m["membershipKey"].as_str().unwrap().to_string();

        // A plain membership of another customer, and the page of the metered one before any
        // event: each meter at 0, one bar (the current period) standing for nothing.
        let plain_customer = server.create_customer(&token, "plain@example.com").await;
        let plain_body = server.membership_body(&plain_customer, "plain-1");
        let plain = server
            .active_membership(&token, "2030-01-01T00:00:00Z", plain_body)
            .await;
        let plain_key = plain["membershipKey"].as_str().unwrap().to_string();
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let page_path = format!("/dashboard/memberships/{key}");
        let fresh = browser.get(&page_path, &mine).await;
        assert_eq!(fresh.status, StatusCode::OK);
        let row = meter_row(&fresh.text, "api_calls");
        assert_eq!(cell(row, "usage-quantity"), "0");
        assert_eq!(attributes(row, "data-quantity"), ["0"]);

        // January to July 2030, monthly: 10 × (month) calls in each, 15.75 GB in July only.
        for month in 1..=7u32 {
            let day = |d: u32| format!("2030-{month:02}-{d:02}T00:00:00");
            server.advance(&token, &format!("{}Z", day(15))).await;
            let n = usize::try_from(month * 10).unwrap();
            let events = count_events(&format!("m{month}"), n, &key, "api_calls", &day(10));
            let accepted = u64::try_from(n).unwrap();
            assert_eq!(recorded(&server, &token, events).await, (accepted, 0));
        }
        let gb = json!([{"transactionId": "gb-1", "membershipKey": key, "code": "storage",
            "timestamp": "2030-07-11T00:00:00", "properties": {"gb": "15.75"}}]);
        assert_eq!(recorded(&server, &token, gb).await, (1, 0));

        // The dashboard (logged in again: the session timed out on the test clock): July so
        // far, and each meter's February to July.
        let mine = browser.log_in(&server.merchant).await;
        let page = browser.get(&page_path, &mine).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.csp.contains("style-src 'self'"), "{}", page.csp);
        assert!(page.text.contains("Usage this period"), "{}", page.text);
        assert!(
            page.text.contains("1 Jul 2030 – 1 Aug 2030"),
            "{}",
            page.text
        );
        let months = [
            "1 Feb 2030",
            "1 Mar 2030",
            "1 Apr 2030",
            "1 May 2030",
            "1 Jun 2030",
            "1 Jul 2030",
        ];
        let row = meter_row(&page.text, "api_calls");
        assert!(row.contains("API calls"), "{row}");
        assert_eq!(cell(row, "usage-quantity"), "70");
        assert_eq!(cell(row, "usage-amount"), "€0.28");
        assert_eq!(row.matches("<rect class=\"usage-bar").count(), 6, "{row}");
        assert_eq!(row.matches("usage-bar-current").count(), 1, "{row}");
        assert_eq!(
            attributes(row, "data-quantity"),
            ["20", "30", "40", "50", "60", "70"]
        );
        assert_eq!(attributes(row, "data-period"), months);
        assert!(
            row.contains("<title>Period from 1 Jul 2030: 70</title>"),
            "{row}"
        );
        let heights: Vec<i64> = attributes(row, "height")
            .iter()
            .skip(1) // the svg's own
            .map(|h| h.parse().unwrap())
            .collect();
        assert!(heights.windows(2).all(|w| w[0] < w[1]), "{heights:?}");
        assert!(!row.contains("style="), "{row}");
        let row = meter_row(&page.text, "storage");
        assert_eq!(cell(row, "usage-quantity"), "15.75");
        // 15.75 × 0.50 = 7.875, rounded half up.
        assert_eq!(cell(row, "usage-amount"), "€7.88");
        assert_eq!(
            attributes(row, "data-quantity"),
            ["0", "0", "0", "0", "0", "15.75"],
            "the billed months are kept at 0"
        );
        assert!(!page.text.contains("<script"), "{}", page.text);

        // The customer's portal shows the same, in German when asked.
        let portal = portal_link(&server, &token, &customer).await;
        let visitor = Visitor::new();
        let shown = visitor.get(&portal).await;
        assert_eq!(shown.status, StatusCode::OK);
        let row = meter_row(&shown.text, "api_calls");
        assert_eq!(cell(row, "usage-amount"), "€0.28");
        assert_eq!(attributes(row, "data-period"), months);
        assert_eq!(row.matches("<rect class=\"usage-bar").count(), 6);
        let german = visitor
            .client
            .get(&portal)
            .header(ACCEPT_LANGUAGE, "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("Verbrauch in diesem Zeitraum"), "{german}");
        let row = meter_row(&german, "storage");
        assert_eq!(cell(row, "usage-quantity"), "15,75");
        assert_eq!(cell(row, "usage-amount"), "7,88 €");

        // No usage for the plain membership, on its page or in its customer's portal.
        let plain_page = browser
            .get(&format!("/dashboard/memberships/{plain_key}"), &mine)
            .await;
        assert_eq!(plain_page.status, StatusCode::OK);
        assert!(!plain_page.text.contains("data-testid=\"usage\""));
        let plain_portal = portal_link(&server, &token, &plain_customer).await;
        let plain_shown = visitor.get(&plain_portal).await;
        assert_eq!(plain_shown.status, StatusCode::OK);
        assert!(!plain_shown.text.contains("data-testid=\"usage\""));
        assert!(!plain_shown.text.contains("usage-chart"));

        // Another merchant: the page is the 404 page, and the totals are not theirs to read.
        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let foreign = browser.get(&page_path, &theirs).await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
        assert!(!foreign.text.contains("usage-chart") && !foreign.text.contains("API calls"));
        let membership_id = server
            .count("SELECT id FROM memberships WHERE membership_key = $1", &key)
            .await;
        let meter_id = server
            .count("SELECT id FROM meters WHERE meter_key = $1", &calls)
            .await;
        let pool = server.server.state.store.pool();
        let until = Utc.with_ymd_and_hms(2030, 7, 1, 0, 0, 0).unwrap();
        let own = recent_totals(
            pool,
            server.merchant.merchant_id,
            membership_id,
            &[meter_id],
            until,
            6,
        )
        .await
        .unwrap();
        assert_eq!(own.len(), 6);
        let stolen = recent_totals(
            pool,
            other.merchant_id,
            membership_id,
            &[meter_id],
            until,
            6,
        )
        .await
        .unwrap();
        assert!(stolen.is_empty(), "{stolen:?}");
    }
);
