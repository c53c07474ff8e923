//! The dashboard's catalog: products created (the API's rules, refusals beside the fields),
//! prices added to a product and its refusals, archiving and restoring both, the list's pages
//! and filter, a product's page with all its prices, CSRF, and another merchant's ids as the
//! 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_test;
use crate::fixtures::catalog::{price, product, send};
use crate::fixtures::dashboard::{keys, Browser};
use crate::fixtures::shown;
use crate::harness::TestServer;

const PAGE: &str = "/dashboard/catalog";

/// The API's record of `path` (`/products/…`, `/prices/…`).
async fn api_record(server: &TestServer, path: &str) -> Value {
    let token = server.token().await;
    let reply = send(server, Method::GET, path, &token, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

backend_test!(
    dashboard_catalog_creates_products_and_prices,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let empty = browser.get(PAGE, &cookie).await;
        assert_eq!(empty.status, StatusCode::OK, "{}", empty.text);
        assert!(empty.text.contains("data-testid=\"nav-catalog\">"));
        assert!(empty.text.contains("data-testid=\"no-products\""));
        let csrf = empty.csrf();

        let create = "/dashboard/catalog/products";
        let forged = browser
            .post(
                create,
                &cookie,
                &[("csrfToken", "0".repeat(64).as_str()), ("name", "Pro")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let missing = browser.post(create, &cookie, &[("name", "Pro")]).await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN);
        let long = "x".repeat(1001);
        let refused = browser
            .post(
                create,
                &cookie,
                &[("csrfToken", &csrf), ("name", " "), ("description", &long)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert_eq!(shown(&refused.text, "error-name"), "is required");
        assert!(shown(&refused.text, "error-description").contains("1000"));
        assert!(
            refused.text.contains(&long),
            "the description typed is kept"
        );
        let token = server.token().await;
        let listed = send(&server, Method::GET, "/products", &token, None).await;
        assert_eq!(
            listed.body["data"],
            serde_json::json!([]),
            "nothing created"
        );

        let created = browser
            .post(
                create,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("name", " Pro "),
                    ("description", "For teams"),
                ],
            )
            .await;
        assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
        let url = created.location.clone().unwrap();
        let product_id = url
            .strip_prefix("/dashboard/catalog/products/")
            .unwrap()
            .to_string();
        assert!(product_id.starts_with("prod_"), "{url}");
        let record = api_record(&server, &format!("/products/{product_id}")).await;
        assert_eq!(record["name"], "Pro");
        assert_eq!(record["description"], "For teams");
        let page = browser.get(&url, &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert_eq!(shown(&page.text, "product-name"), "Pro");
        assert!(page.text.contains("data-testid=\"no-prices\""));

        // A price: the API's rules, each refusal beside its field; nothing is written.
        let prices = format!("{url}/prices");
        let refused = browser
            .post(
                &prices,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("currency", "EURO"),
                    ("unitAmount", "9.99"),
                    ("intervalType", "Fortnightly"),
                    ("intervalCount", "two"),
                    ("trialDays", "0"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        for field in ["currency", "intervalType", "intervalCount", "trialDays"] {
            assert!(
                refused
                    .text
                    .contains(&format!("data-testid=\"error-{field}\"")),
                "{field}: {}",
                refused.text
            );
        }
        assert_eq!(
            shown(&refused.text, "error-intervalCount"),
            "must be a whole number"
        );
        assert!(
            refused.text.contains("value=\"EURO\""),
            "the values typed are kept"
        );
        let refused = browser
            .post(
                &prices,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("currency", "JPY"),
                    ("unitAmount", "9.99"),
                    ("intervalType", "Monthly"),
                    ("intervalCount", "1"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(refused.text.contains("data-testid=\"error-unitAmount\""));
        let none = send(&server, Method::GET, "/prices", &token, None).await;
        assert_eq!(none.body["data"], serde_json::json!([]));

        let added = browser
            .post(
                &prices,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("currency", "eur"),
                    ("unitAmount", "20.00"),
                    ("intervalType", "Monthly"),
                    ("intervalCount", "3"),
                    ("trialDays", "14"),
                ],
            )
            .await;
        assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.text);
        assert_eq!(added.location.as_deref(), Some(url.as_str()));
        let page = browser.get(&url, &cookie).await;
        let price_ids = keys(&page, "price");
        assert_eq!(price_ids.len(), 1);
        let price_id = price_ids[0].clone();
        assert_eq!(shown(&page.text, "price-amount"), "€20.00");
        assert_eq!(shown(&page.text, "price-interval"), "every 3 months");
        assert_eq!(shown(&page.text, "price-trial"), "14 days");
        let record = api_record(&server, &format!("/prices/{price_id}")).await;
        assert_eq!(record["productId"], product_id.as_str());
        assert_eq!(record["currency"], "EUR");
        assert_eq!(record["unitAmount"], "20.00");
        assert_eq!(record["intervalCount"], 3);
        assert_eq!(record["trialDays"], 14);
        let catalog = browser.get(PAGE, &cookie).await;
        assert_eq!(keys(&catalog, "product"), vec![product_id.clone()]);
        assert_eq!(keys(&catalog, "price"), vec![price_id.clone()]);

        // Archive and restore a price.
        let toggle = format!("/dashboard/catalog/prices/{price_id}/active");
        let archived = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "false")],
            )
            .await;
        assert_eq!(archived.status, StatusCode::OK, "{}", archived.text);
        assert!(shown(&archived.text, "outcome-text").starts_with("The price is archived"));
        assert!(archived
            .text
            .contains(&format!("href=\"{url}\" data-testid=\"back\"")));
        let record = api_record(&server, &format!("/prices/{price_id}")).await;
        assert_eq!(record["active"], false);
        let page = browser.get(&url, &cookie).await;
        assert!(page.text.contains("data-testid=\"price-archived\""));
        let odd = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "maybe")],
            )
            .await;
        assert_eq!(odd.status, StatusCode::BAD_REQUEST);
        let restored = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "true")],
            )
            .await;
        assert_eq!(restored.status, StatusCode::OK);
        let record = api_record(&server, &format!("/prices/{price_id}")).await;
        assert_eq!(record["active"], true);

        // Archive a product: it takes no new price until restored.
        let toggle = format!("{url}/active");
        let archived = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "false")],
            )
            .await;
        assert_eq!(archived.status, StatusCode::OK, "{}", archived.text);
        assert!(shown(&archived.text, "outcome-text").starts_with("The product is archived"));
        let record = api_record(&server, &format!("/products/{product_id}")).await;
        assert_eq!(record["active"], false);
        let page = browser.get(&url, &cookie).await;
        assert!(page.text.contains("data-testid=\"archived-note\""));
        let price_form = [
            ("csrfToken", csrf.as_str()),
            ("currency", "EUR"),
            ("unitAmount", "200.00"),
            ("intervalType", "Annually"),
            ("intervalCount", "1"),
        ];
        let refused = browser.post(&prices, &cookie, &price_form).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(shown(&refused.text, "error-productId").starts_with("is an archived product"));
        let archived_list = browser.get(&format!("{PAGE}?active=false"), &cookie).await;
        assert_eq!(keys(&archived_list, "product"), vec![product_id.clone()]);
        let active_list = browser.get(&format!("{PAGE}?active=true"), &cookie).await;
        assert!(keys(&active_list, "product").is_empty());
        let restored = browser
            .post(
                &toggle,
                &cookie,
                &[("csrfToken", &csrf), ("active", "true")],
            )
            .await;
        assert_eq!(restored.status, StatusCode::OK);
        let added = browser.post(&prices, &cookie, &price_form).await;
        assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.text);
        let page = browser.get(&url, &cookie).await;
        assert_eq!(keys(&page, "price").len(), 2);
    }
);

backend_test!(
    dashboard_catalog_lists_a_page_of_products_with_their_newest_prices,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut products = Vec::new();
        for n in 0..22 {
            products.push(product(&server, &token, &format!("Product {n}")).await);
        }
        let newest = products.last().unwrap().clone();
        let mut prices = Vec::new();
        for n in 1..=7 {
            prices.push(price(&server, &token, &newest, &format!("{n}.00")).await);
        }
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let first = browser.get(PAGE, &cookie).await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.text);
        let listed = keys(&first, "product");
        let expected: Vec<String> = products.iter().rev().take(20).cloned().collect();
        assert_eq!(listed, expected, "newest first, 20 a page");
        // The newest product shows its five newest prices and a link to them all.
        let shown_prices: Vec<String> = prices.iter().rev().take(5).cloned().collect();
        assert_eq!(keys(&first, "price"), shown_prices);
        assert!(first.text.contains("data-testid=\"all-prices\""));
        assert_eq!(first.text.matches("data-testid=\"no-prices\"").count(), 19);

        let at = first
            .text
            .find("data-testid=\"next-page\"")
            .expect("a next page");
        let next = first.text[..at].rsplit("href=\"").next().unwrap();
        let next = next.split('"').next().unwrap().replace("&amp;", "&");
        assert!(next.starts_with("/dashboard/catalog?cursor="), "{next}");
        let second = browser.get(&next, &cookie).await;
        assert_eq!(second.status, StatusCode::OK);
        let rest: Vec<String> = products.iter().rev().skip(20).cloned().collect();
        assert_eq!(keys(&second, "product"), rest);
        assert!(!second.text.contains("data-testid=\"next-page\""));

        // The product's page lists every price, newest first.
        let page = browser
            .get(&format!("{PAGE}/products/{newest}"), &cookie)
            .await;
        let all: Vec<String> = prices.iter().rev().cloned().collect();
        assert_eq!(keys(&page, "price"), all);

        // A cursor recur did not give, or a bad filter, is the 400 page.
        for bad in ["?cursor=made-up", "?active=maybe", "?limit=0"] {
            let page = browser.get(&format!("{PAGE}{bad}"), &cookie).await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST, "{bad}");
        }
        let page = browser
            .get(&format!("{PAGE}/products/{newest}?cursor=made-up"), &cookie)
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST);
    }
);

backend_test!(
    dashboard_catalog_ids_of_another_merchant_are_not_found,
    |server: TestServer| async move {
        let token = server.token().await;
        let theirs = product(&server, &token, "Theirs").await;
        let their_price = price(&server, &token, &theirs, "9.99").await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&other).await;
        let page = browser.get(PAGE, &cookie).await;
        assert!(keys(&page, "product").is_empty());
        let csrf = page.csrf();
        let url = format!("{PAGE}/products/{theirs}");
        assert_eq!(
            browser.get(&url, &cookie).await.status,
            StatusCode::NOT_FOUND
        );
        let posts = [
            (
                format!("{url}/prices"),
                vec![
                    ("csrfToken", csrf.as_str()),
                    ("currency", "EUR"),
                    ("unitAmount", "1.00"),
                    ("intervalType", "Monthly"),
                ],
            ),
            (
                format!("{url}/active"),
                vec![("csrfToken", csrf.as_str()), ("active", "false")],
            ),
            (
                format!("{PAGE}/prices/{their_price}/active"),
                vec![("csrfToken", csrf.as_str()), ("active", "false")],
            ),
            (
                format!("{PAGE}/products/prod_unknown/active"),
                vec![("csrfToken", csrf.as_str()), ("active", "false")],
            ),
        ];
        for (path, form) in posts {
            let answer = browser.post(&path, &cookie, &form).await;
            assert_eq!(
                answer.status,
                StatusCode::NOT_FOUND,
                "{path}: {}",
                answer.text
            );
        }
        let record = api_record(&server, &format!("/products/{theirs}")).await;
        assert_eq!(record["active"], true);
        let record = api_record(&server, &format!("/prices/{their_price}")).await;
        assert_eq!(record["active"], true);
        let prices = send(&server, Method::GET, "/prices", &token, None).await;
        assert_eq!(prices.body["data"].as_array().unwrap().len(), 1);
        // Without a session: the login.
        for path in [PAGE.to_string(), url] {
            let page = browser.get(&path, "").await;
            assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
        }
    }
);
