//! The catalog (DESIGN §15): products and their prices — creation, lists with their filters and
//! cursors, reads, changes, every refusal, other merchants' ids and read keys.

use recur::store::merchants::Mode;
use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{altered, errors, price, product, read_key, send};
use crate::fixtures::lists::{listed, page, refused};
use crate::harness::TestServer;

backend_test!(
    products_are_created_listed_read_and_changed,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let body = json!({"name": "Gold plan", "description": "Everything.\r\nAnd more."});
        let created = send(&server, Method::POST, "/products", &token, Some(body)).await;
        assert_eq!(created.status, 201, "{}", created.body);
        let id = created.body["productId"].as_str().unwrap().to_string();
        let random = id.strip_prefix("prod_").unwrap();
        assert!(random.len() == 24 && random.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(created.body["name"], "Gold plan");
        assert_eq!(created.body["description"], "Everything.\nAnd more.");
        assert_eq!(created.body["active"], true);
        assert_eq!(created.body["createdAt"], "2030-01-01T00:00:00Z");
        assert_eq!(created.body["updatedAt"], "2030-01-01T00:00:00Z");
        let path = format!("/products/{id}");
        let read = send(&server, Method::GET, &path, &token, None).await;
        assert_eq!(read.status, 200);
        assert_eq!(read.body, created.body);

        // Repeating a value is no change; a new name is, at the merchant's time.
        server.advance(&token, "2030-02-01T00:00:00Z").await;
        let same = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"name": "Gold plan"})),
        )
        .await;
        assert_eq!(
            same.body["updatedAt"], "2030-01-01T00:00:00Z",
            "{}",
            same.body
        );
        let changed = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"name": "Platinum", "description": null})),
        )
        .await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        assert_eq!(changed.body["name"], "Platinum");
        assert_eq!(changed.body["description"], Value::Null);
        assert_eq!(changed.body["createdAt"], "2030-01-01T00:00:00Z");
        assert_eq!(changed.body["updatedAt"], "2030-02-01T00:00:00Z");
        let empty = send(&server, Method::PATCH, &path, &token, Some(json!({}))).await;
        assert_eq!(empty.body, changed.body);

        // Archived products stay listed; `active` keeps one kind; newest first, a page at a time.
        let archived = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;
        assert_eq!(archived.body["active"], false);
        let second = product(&server, &token, "Silver").await;
        let third = product(&server, &token, "Bronze").await;
        let all = listed(&server, &token, "/products", "productId").await;
        assert_eq!(all, [third.clone(), second.clone(), id.clone()]);
        let active = listed(&server, &token, "/products?active=true", "productId").await;
        assert_eq!(active, [third.clone(), second.clone()]);
        let gone = listed(&server, &token, "/products?active=false", "productId").await;
        assert_eq!(gone, [id.as_str()]);
        let first = page(&server, &token, "/products?limit=1&active=true").await;
        assert_eq!(first["data"][0]["productId"], third.as_str());
        assert_eq!(first["hasMore"], true);
        let cursor = first["nextCursor"].as_str().unwrap();
        let next = page(
            &server,
            &token,
            &format!("/products?limit=1&active=true&cursor={cursor}"),
        )
        .await;
        assert_eq!(next["data"][0]["productId"], second.as_str());
        assert_eq!(next["data"][0]["name"], "Silver");
        assert_eq!(next["hasMore"], false);
        assert_eq!(next["nextCursor"], Value::Null);
        // A cursor is good for its own list and filters only.
        for bad in [
            format!("/products?active=true&cursor={}", altered(cursor)),
            format!("/products?cursor={cursor}"),
            format!("/products?active=false&cursor={cursor}"),
            format!("/prices?active=true&cursor={cursor}"),
        ] {
            refused(&server, &token, &bad, "cursor").await;
        }
        for bad in ["yes", "1", "TRUE", ""] {
            refused(
                &server,
                &token,
                &format!("/products?active={bad}"),
                "active",
            )
            .await;
        }
        refused(&server, &token, "/products?limit=0", "limit").await;
    }
);

backend_test!(
    product_refusals_name_every_field,
    |server: TestServer| async move {
        let token = server.token().await;
        let missing = send(&server, Method::POST, "/products", &token, Some(json!({}))).await;
        assert!(errors(&missing)["name"].is_array());
        let long = "é".repeat(251);
        let long_description = "d".repeat(1001);
        for (body, fields) in [
            (json!({"name": " "}), vec!["name"]),
            (json!({"name": long}), vec!["name"]),
            (json!({"name": "Two\nlines"}), vec!["name"]),
            (
                json!({"name": 5, "description": 5}),
                vec!["name", "description"],
            ),
            (
                json!({"name": "X", "description": long_description}),
                vec!["description"],
            ),
            (
                json!({"name": "X\t", "description": "  "}),
                vec!["name", "description"],
            ),
            (
                json!({"name": "X", "description": "bell\u{7}"}),
                vec!["description"],
            ),
        ] {
            let reply = send(
                &server,
                Method::POST,
                "/products",
                &token,
                Some(body.clone()),
            )
            .await;
            let e = errors(&reply);
            for field in fields {
                assert!(e[field].is_array(), "{body}: {e}");
            }
        }
        let at_limits = json!({"name": "é".repeat(250), "description": "d".repeat(1000)});
        let reply = send(&server, Method::POST, "/products", &token, Some(at_limits)).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let id = product(&server, &token, "Gold").await;
        let path = format!("/products/{id}");
        let body = json!({"name": null, "description": "", "active": "no"});
        let reply = send(&server, Method::PATCH, &path, &token, Some(body)).await;
        let e = errors(&reply);
        for field in ["name", "description", "active"] {
            assert!(e[field].is_array(), "{field}: {e}");
        }
        let reply = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": null})),
        )
        .await;
        assert!(errors(&reply)["active"].is_array());
        for method in [Method::GET, Method::PATCH] {
            let body = (method == Method::PATCH).then(|| json!({"active": false}));
            send(&server, method, "/products/prod_unknown", &token, body)
                .await
                .problem(404);
        }

        // Another merchant sees none of it, and changes none of it.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        send(&server, Method::GET, &path, &other_token, None)
            .await
            .problem(404);
        let body = Some(json!({"active": false}));
        send(&server, Method::PATCH, &path, &other_token, body)
            .await
            .problem(404);
        assert_eq!(
            page(&server, &other_token, "/products").await["data"],
            json!([])
        );
        // A read key reads and changes nothing.
        let key = read_key(&server, &token).await;
        assert_eq!(
            send(&server, Method::GET, &path, &key, None).await.status,
            200
        );
        assert_eq!(
            page(&server, &key, "/products").await["data"][0]["productId"],
            id.as_str()
        );
        send(
            &server,
            Method::POST,
            "/products",
            &key,
            Some(json!({"name": "X"})),
        )
        .await
        .problem(403);
        send(
            &server,
            Method::PATCH,
            &path,
            &key,
            Some(json!({"active": false})),
        )
        .await
        .problem(403);
        let after = send(&server, Method::GET, &path, &token, None).await;
        assert_eq!(after.body["active"], true);
    }
);

backend_test!(
    prices_are_created_listed_read_and_archived,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2030-01-01T00:00:00Z").await;
        let gold = product(&server, &token, "Gold").await;
        let silver = product(&server, &token, "Silver").await;
        let body = json!({"productId": gold, "currency": "eur", "unitAmount": "9.9",
            "intervalType": "monthly"});
        let created = send(&server, Method::POST, "/prices", &token, Some(body)).await;
        assert_eq!(created.status, 201, "{}", created.body);
        let monthly = created.body["priceId"].as_str().unwrap().to_string();
        let random = monthly.strip_prefix("price_").unwrap();
        assert!(random.len() == 24 && random.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(
            created.body,
            json!({"priceId": monthly, "productId": gold, "currency": "EUR",
                "unitAmount": "9.90", "intervalType": "Monthly", "intervalCount": 1,
                "trialDays": null, "active": true, "createdAt": "2030-01-01T00:00:00Z"})
        );
        let path = format!("/prices/{monthly}");
        let read = send(&server, Method::GET, &path, &token, None).await;
        assert_eq!(read.body, created.body);
        let body = json!({"productId": gold, "currency": "JPY", "unitAmount": "1000",
            "intervalType": "WEEKLY", "intervalCount": 2, "trialDays": 14});
        let created = send(&server, Method::POST, "/prices", &token, Some(body)).await;
        assert_eq!(created.status, 201, "{}", created.body);
        let weekly = created.body["priceId"].as_str().unwrap().to_string();
        assert_eq!(created.body["unitAmount"], "1000");
        assert_eq!(created.body["intervalType"], "Weekly");
        assert_eq!(created.body["intervalCount"], 2);
        assert_eq!(created.body["trialDays"], 14);
        let other = price(&server, &token, &silver, "5").await;

        // The terms never change; `active` does.
        for term in [
            json!({"unitAmount": "1.00"}),
            json!({"currency": "USD", "active": false}),
            json!({"productId": silver}),
            json!({"intervalType": "Daily"}),
            json!({"intervalCount": 2}),
            json!({"trialDays": null}),
        ] {
            let reply = send(&server, Method::PATCH, &path, &token, Some(term.clone())).await;
            let e = errors(&reply);
            let field = term
                .as_object()
                .unwrap()
                .keys()
                .find(|k| *k != "active")
                .unwrap();
            let message = e[field][0].as_str().unwrap();
            assert!(message.contains("cannot change"), "{term}: {e}");
        }
        let unchanged = send(&server, Method::PATCH, &path, &token, Some(json!({}))).await;
        assert_eq!(unchanged.body, read.body);
        let archived = send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;
        assert_eq!(archived.status, 200, "{}", archived.body);
        assert_eq!(archived.body["active"], false);
        assert_eq!(archived.body["unitAmount"], "9.90");

        // Lists: all, one product's, the active or archived ones, and both filters.
        let ids = |path: &'static str| listed(&server, &token, path, "priceId");
        assert_eq!(
            ids("/prices").await,
            [other.clone(), weekly.clone(), monthly.clone()]
        );
        let of_gold = listed(
            &server,
            &token,
            &format!("/prices?productId={gold}"),
            "priceId",
        )
        .await;
        assert_eq!(of_gold, [weekly.clone(), monthly.clone()]);
        assert_eq!(
            ids("/prices?active=true").await,
            [other.clone(), weekly.clone()]
        );
        assert_eq!(ids("/prices?active=false").await, [monthly.as_str()]);
        let both = format!("/prices?productId={gold}&active=false");
        assert_eq!(
            listed(&server, &token, &both, "priceId").await,
            [monthly.as_str()]
        );
        let first = page(
            &server,
            &token,
            &format!("/prices?productId={gold}&limit=1"),
        )
        .await;
        assert_eq!(first["data"][0]["priceId"], weekly.as_str());
        let cursor = first["nextCursor"].as_str().unwrap();
        let next = page(
            &server,
            &token,
            &format!("/prices?productId={gold}&limit=1&cursor={cursor}"),
        )
        .await;
        assert_eq!(next["data"][0]["priceId"], monthly.as_str());
        assert_eq!(next["nextCursor"], Value::Null);
        for bad in [
            format!("/prices?productId={gold}&cursor={}", altered(cursor)),
            format!("/prices?productId={silver}&cursor={cursor}"),
            format!("/prices?cursor={cursor}"),
        ] {
            refused(&server, &token, &bad, "cursor").await;
        }
        refused(&server, &token, "/prices?productId=", "productId").await;
        refused(&server, &token, "/prices?active=no&limit=500", "active").await;
        refused(&server, &token, "/prices?active=no&limit=500", "limit").await;

        // An unknown product, or another merchant's, filters everything out.
        assert!(ids("/prices?productId=prod_unknown").await.is_empty());
        let stranger = server.another_merchant(Mode::Sandbox).await;
        let stranger_token = server.token_for(&stranger).await;
        let theirs = product(&server, &stranger_token, "Theirs").await;
        price(&server, &stranger_token, &theirs, "1").await;
        let foreign = format!("/prices?productId={theirs}");
        assert!(listed(&server, &token, &foreign, "priceId")
            .await
            .is_empty());
    }
);

backend_test!(
    price_refusals_name_every_field,
    |server: TestServer| async move {
        let token = server.token().await;
        let gold = product(&server, &token, "Gold").await;
        let post = |body: Value| send(&server, Method::POST, "/prices", &token, Some(body));
        let missing = post(json!({})).await;
        let e = errors(&missing);
        for field in ["productId", "currency", "unitAmount", "intervalType"] {
            assert!(e[field].is_array(), "{field}: {e}");
        }
        let valid = json!({"productId": gold, "currency": "EUR", "unitAmount": "9.99",
            "intervalType": "Monthly"});
        let with = |changes: Value| {
            let mut body = valid.clone();
            for (name, value) in changes.as_object().unwrap() {
                body[name] = value.clone();
            }
            body
        };
        for (changes, field) in [
            (json!({"unitAmount": "0"}), "unitAmount"),
            (json!({"unitAmount": "-1"}), "unitAmount"),
            (json!({"unitAmount": "1.234"}), "unitAmount"),
            (json!({"unitAmount": "1e3"}), "unitAmount"),
            (json!({"unitAmount": 9.99}), "unitAmount"),
            (json!({"unitAmount": "10000000000000"}), "unitAmount"),
            (
                json!({"currency": "JPY", "unitAmount": "10.5"}),
                "unitAmount",
            ),
            (json!({"currency": "XXX"}), "currency"),
            (json!({"intervalType": "Yearly"}), "intervalType"),
            (json!({"intervalCount": 0}), "intervalCount"),
            (json!({"intervalCount": 37}), "intervalCount"),
            (
                json!({"intervalType": "Daily", "intervalCount": 1096}),
                "intervalCount",
            ),
            (json!({"intervalCount": "2"}), "intervalCount"),
            (json!({"trialDays": 0}), "trialDays"),
            (json!({"trialDays": 731}), "trialDays"),
            (json!({"trialDays": 1.5}), "trialDays"),
            (json!({"productId": "prod_unknown"}), "productId"),
            (json!({"productId": 5}), "productId"),
        ] {
            let reply = post(with(changes.clone())).await;
            assert!(
                errors(&reply)[field].is_array(),
                "{changes}: {}",
                reply.body
            );
        }
        let at_limits = with(
            json!({"unitAmount": "9999999999999.99", "intervalType": "Daily",
            "intervalCount": 1095, "trialDays": 730}),
        );
        assert_eq!(post(at_limits).await.status, 201);

        // An archived product takes no new price: named with every other failing field.
        let path = format!("/products/{gold}");
        send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": false})),
        )
        .await;
        let reply = post(valid.clone()).await;
        let message = errors(&reply)["productId"][0].as_str().unwrap().to_string();
        assert!(message.contains("archived"), "{message}");
        let reply = post(with(json!({"unitAmount": "0"}))).await;
        let e = errors(&reply);
        assert!(
            e["productId"].is_array() && e["unitAmount"].is_array(),
            "{e}"
        );
        send(
            &server,
            Method::PATCH,
            &path,
            &token,
            Some(json!({"active": true})),
        )
        .await;
        let id = post(valid.clone()).await.body["priceId"]
            .as_str()
            .unwrap()
            .to_string();

        // Another merchant's product is no product; its prices are not found.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let reply = send(
            &server,
            Method::POST,
            "/prices",
            &other_token,
            Some(valid.clone()),
        )
        .await;
        assert!(errors(&reply)["productId"].is_array(), "{}", reply.body);
        let price_path = format!("/prices/{id}");
        send(&server, Method::GET, &price_path, &other_token, None)
            .await
            .problem(404);
        let archive = Some(json!({"active": false}));
        send(
            &server,
            Method::PATCH,
            &price_path,
            &other_token,
            archive.clone(),
        )
        .await
        .problem(404);
        assert_eq!(
            page(&server, &other_token, "/prices").await["data"],
            json!([])
        );
        for method in [Method::GET, Method::PATCH] {
            let body = (method == Method::PATCH).then(|| json!({"active": false}));
            send(&server, method, "/prices/price_unknown", &token, body)
                .await
                .problem(404);
        }
        // A read key reads and changes nothing.
        let key = read_key(&server, &token).await;
        assert_eq!(
            send(&server, Method::GET, &price_path, &key, None)
                .await
                .status,
            200
        );
        send(&server, Method::POST, "/prices", &key, Some(valid))
            .await
            .problem(403);
        send(&server, Method::PATCH, &price_path, &key, archive)
            .await
            .problem(403);
        let after = send(&server, Method::GET, &price_path, &token, None).await;
        assert_eq!(after.body["active"], true);
    }
);
