//! The dashboard's customer search and its cursors, the customer and membership pages, and
//! tenant isolation, each on SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::StatusCode;
use serde_json::json;

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{Answer, Browser};
use crate::fixtures::lists::customer;
use crate::fixtures::webhooks::new_endpoint;
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;

backend_test!(
    dashboard_search_finds_customers_by_email_and_name,
    |server: TestServer| async move {
        let api = server.token().await;
        let ada = customer(&server, &api, "Ada", "Lovelace", "ada@example.com").await;
        let grace = customer(&server, &api, "Grace", "Hopper", "grace@navy.example").await;
        let alan = customer(&server, &api, "Alan", "Turing", "turing@example.org").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let found = |page: &Answer| -> Vec<String> {
            page.text
                .match_indices("data-testid=\"customer\" data-key=\"")
                .map(|(at, m)| {
                    page.text[at + m.len()..]
                        .split('"')
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let all = browser.get("/dashboard/customers", &cookie).await;
        assert_eq!(
            found(&all),
            [alan.clone(), grace.clone(), ada.clone()],
            "newest first"
        );
        let blank = browser.get("/dashboard/customers?q=", &cookie).await;
        assert_eq!(found(&blank).len(), 3);
        for (q, expected) in [
            ("ada", vec![ada.clone()]),
            ("HOP", vec![grace.clone()]),
            ("turing", vec![alan.clone()]),
            ("a", vec![alan.clone(), ada.clone()]),
            ("zed", vec![]),
        ] {
            let page = browser
                .get(&format!("/dashboard/customers?q={q}"), &cookie)
                .await;
            assert_eq!(page.status, StatusCode::OK);
            assert_eq!(found(&page), expected, "q={q}");
            assert!(page.text.contains(&format!("value=\"{q}\"")));
        }
        let by_email = browser
            .get("/dashboard/customers?email=GRACE%40navy.example", &cookie)
            .await;
        assert_eq!(found(&by_email), [grace]);
        let prefix_is_not_exact = browser
            .get("/dashboard/customers?email=grace", &cookie)
            .await;
        assert!(found(&prefix_is_not_exact).is_empty());
        let none = browser.get("/dashboard/customers?q=zed", &cookie).await;
        assert!(none.text.contains("data-testid=\"no-customers\""));
    }
);

backend_test!(
    dashboard_customers_are_paged_with_sealed_cursors,
    |server: TestServer| async move {
        let api = server.token().await;
        for n in 0..23 {
            customer(&server, &api, "Carla", "Page", &format!("c{n}@example.com")).await;
        }
        customer(&server, &api, "Otto", "Other", "other@example.com").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let rows = |page: &Answer| page.text.matches("data-testid=\"customer\"").count();
        let next = |page: &Answer| -> Option<String> {
            let at = page.text.find("href=\"/dashboard/customers?")?;
            let href = page.text[at + 6..].split('"').next()?;
            Some(href.replace("&amp;", "&"))
        };
        let first = browser.get("/dashboard/customers?q=carla", &cookie).await;
        assert_eq!(rows(&first), 20);
        let second_url = next(&first).expect("a next page");
        assert!(second_url.contains("q=carla") && second_url.contains("cursor="));
        let second = browser.get(&second_url, &cookie).await;
        assert_eq!(second.status, StatusCode::OK);
        assert_eq!(rows(&second), 3);
        assert!(next(&second).is_none());
        assert!(!second.text.contains("Otto"));

        // A cursor altered, or used with other filters, is the 400 page, never a 500.
        let cursor = second_url.split("cursor=").nth(1).unwrap().to_string();
        let mut altered = cursor.clone().into_bytes();
        altered[3] = if altered[3] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        for url in [
            format!("/dashboard/customers?q=carla&cursor={altered}"),
            format!("/dashboard/customers?q=otto&cursor={cursor}"),
            format!("/dashboard/customers?cursor={cursor}"),
            "/dashboard/customers?limit=1000".to_string(),
            "/dashboard/customers?q=a&q=b".to_string(),
            "/dashboard/customers?email=a&email=b".to_string(),
        ] {
            let page = browser.get(&url, &cookie).await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST, "{url}");
            assert!(page.text.contains("<html"), "{url}: an HTML page");
        }
        // U+0000 is refused before any handler, as everywhere (a problem document).
        let nul = browser
            .get("/dashboard/customers?cursor=%00", &cookie)
            .await;
        assert_eq!(nul.status, StatusCode::BAD_REQUEST);
    }
);

backend_matrix!(
    dashboard_customer_and_membership_pages,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        receiver.answer_with(503);
        let server = TestServer::start_with_owned(backend, &receiver.settings()).await;
        let api = server.token().await;
        let endpoint_url = format!("{}/endpoint", receiver.url);
        let (endpoint, _) = new_endpoint(&server, &api, &endpoint_url, json!(null)).await;
        let customer_key = server.create_customer(&api, "ada@example.com").await;
        let mut body = server.membership_body(&customer_key, "order-1");
        body["webhookUrl"] = json!(receiver.url);
        let record = server
            .active_membership(&api, "2031-01-01T00:00:00Z", body)
            .await;
        let membership_key = record["membershipKey"].as_str().unwrap().to_string();
        // A sandbox merchant's events go out as its test clock moves.
        server.advance(&api, "2031-01-01T00:01:00Z").await;
        assert!(!receiver.received().is_empty());

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser
            .get(&format!("/dashboard/customers/{customer_key}"), &cookie)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let text = &page.text;
        assert!(text.contains("data-testid=\"customer-name\">Ada Lovelace<"));
        assert!(text.contains("ada@example.com") && text.contains("+4915112345678"));
        assert!(text.contains(&format!("data-key=\"{membership_key}\"")));
        assert!(text.contains("Gold plan") && text.contains("badge-Active"));
        assert!(text.contains("29.97"), "amount");
        assert!(text.contains("1 Jan 2031 – 1 Feb 2031"), "period");
        assert!(text.contains("data-testid=\"card\"><span class=\"brand\">Visa</span> •••• 4242"));
        assert_eq!(text.matches("data-testid=\"invoice\"").count(), 1);
        assert!(text.contains("badge-Paid"));

        let page = browser
            .get(&format!("/dashboard/memberships/{membership_key}"), &cookie)
            .await;
        assert_eq!(page.status, StatusCode::OK);
        let text = &page.text;
        assert!(text.contains("data-testid=\"plan\">Gold plan<"));
        assert!(text.contains("data-testid=\"status\">Active<"));
        assert!(text.contains("data-testid=\"next-billing\">1 Feb 2031<"));
        assert!(text.contains("data-testid=\"period\">1 Jan 2031 – 1 Feb 2031<"));
        assert!(text.contains(&format!("/dashboard/customers/{customer_key}")));
        assert_eq!(text.matches("data-testid=\"invoice\"").count(), 1);
        assert!(text.contains("data-testid=\"event\""));
        assert!(
            text.contains("data-testid=\"attempt\"") && text.contains("HTTP 503"),
            "{text}"
        );
        assert!(text.contains(&receiver.url));
        // Each event's deliveries to the merchant's endpoints, with their attempts.
        let events = text.matches("data-testid=\"event\"").count();
        assert_eq!(
            text.matches("data-testid=\"endpoint-delivery\"").count(),
            events,
            "every event went to the endpoint too"
        );
        assert!(text.contains(&format!("href=\"/dashboard/webhooks/{endpoint}\"")));
        assert!(text.contains(&format!("<code>{endpoint_url}</code>")));
        let after_endpoint = &text[text.find("data-testid=\"endpoint-delivery\"").unwrap()..];
        assert!(
            after_endpoint.contains("data-testid=\"attempt\"")
                && after_endpoint.contains("HTTP 503")
        );
        // The invoices' cursor is checked like the API's.
        let bad = browser
            .get(
                &format!("/dashboard/memberships/{membership_key}?cursor=abc"),
                &cookie,
            )
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    }
);

backend_test!(
    dashboard_hides_other_merchants_records,
    |server: TestServer| async move {
        let api = server.token().await;
        let customer_key = server.create_customer(&api, "ada@example.com").await;
        let body = server.membership_body(&customer_key, "order-1");
        let membership = server.create_membership(&api, body).await;
        let membership_key = membership["membershipKey"].as_str().unwrap().to_string();
        let other = server.another_merchant(Mode::Sandbox).await;
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let theirs = browser.log_in(&other).await;
        for path in [
            format!("/dashboard/customers/{customer_key}"),
            format!("/dashboard/memberships/{membership_key}"),
        ] {
            assert_eq!(
                browser.get(&path, &mine).await.status,
                StatusCode::OK,
                "{path}"
            );
            let page = browser.get(&path, &theirs).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
            assert!(!page.text.contains("ada@example.com"));
            let unknown = browser.get(&format!("{path}x"), &mine).await;
            assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{path}x");
        }
        let list = browser.get("/dashboard/customers", &theirs).await;
        assert!(!list.text.contains(&customer_key));
        let search = browser.get("/dashboard/customers?q=ada", &theirs).await;
        assert!(!search.text.contains(&customer_key));
        // A cursor of one merchant's list is not another's.
        for n in 0..21 {
            customer(&server, &api, "Carla", "Page", &format!("c{n}@example.com")).await;
        }
        let first = browser.get("/dashboard/customers", &mine).await;
        let at = first.text.find("cursor=").expect("a next page");
        let cursor = first.text[at + 7..].split('"').next().unwrap();
        let foreign = browser
            .get(&format!("/dashboard/customers?cursor={cursor}"), &theirs)
            .await;
        assert_eq!(foreign.status, StatusCode::BAD_REQUEST);
    }
);
