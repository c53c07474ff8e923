//! What the catalog shares with the rest of the API: its operations in the OpenAPI document
//! (schemas with the field rules, links from each create to the operations taking its id), and
//! `Idempotency-Key` on its creates.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::API;
use crate::harness::TestServer;

backend_test!(
    the_openapi_document_describes_the_catalog,
    |server: TestServer| async move {
        let doc = server
            .call(Method::GET, "/openapi.json", None, None)
            .await
            .body;
        let paths = &doc["paths"];
        for (list, one, id) in [
            ("products", "products/{productId}", "productId"),
            ("prices", "prices/{priceId}", "priceId"),
            ("coupons", "coupons/{couponId}", "couponId"),
        ] {
            let list = &paths[format!("{API}/{list}")];
            let one = &paths[format!("{API}/{one}")];
            for operation in [&list["post"], &list["get"], &one["get"], &one["patch"]] {
                assert!(operation.is_object(), "{id}: {operation}");
                assert_eq!(operation["tags"], json!(["catalog"]));
            }
            assert!(one["patch"]["responses"]["403"].is_object());
            let links = list["post"]["responses"]["201"]["links"]
                .as_object()
                .unwrap();
            assert_eq!(links.len(), 2, "{links:?}");
            for link in links.values() {
                assert_eq!(link["parameters"][id], format!("$response.body#/{id}"));
            }
        }
        assert!(paths[format!("{API}/coupons")]["post"]["responses"]["409"].is_object());
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["CouponCode"]["pattern"], "^[A-Za-z0-9_-]{1,40}$");
        assert_eq!(schemas["MaxRedemptions"]["maximum"], 1_000_000_000);
        assert_eq!(schemas["TrialDays"]["maximum"], 730);
        assert_eq!(schemas["DurationInCycles"]["maximum"], 120);
        let interval = schemas["IntervalTypeName"]["pattern"].as_str().unwrap();
        assert!(
            interval.contains("[Mm][Oo][Nn][Tt][Hh][Ll][Yy]"),
            "{interval}"
        );
        let create = &schemas["CreateCouponRequest"];
        assert_eq!(create["required"], json!(["code", "duration"]));
        assert_eq!(
            create["properties"]["code"]["$ref"],
            "#/components/schemas/CouponCode"
        );
        // A price's and a coupon's change take `active` alone.
        for change in ["UpdatePriceRequest", "UpdateCouponRequest"] {
            let properties = schemas[change]["properties"].as_object().unwrap();
            assert_eq!(
                properties.keys().collect::<Vec<_>>(),
                ["active"],
                "{change}"
            );
            // Optional, but never null: `null` is refused.
            assert_eq!(properties["active"]["type"], "boolean", "{change}");
            assert!(schemas[change]["required"].is_null(), "{change}");
        }
        // `unitAmount` is absent on a tiered metered price (DESIGN §19): required by the rules,
        // not by the schema.
        let price = &schemas["CreatePriceRequest"];
        assert_eq!(
            price["required"],
            json!(["productId", "currency", "intervalType"])
        );
        assert!(price["properties"]["tiers"].is_object());
    }
);

backend_test!(
    catalog_creates_honour_idempotency_keys,
    |server: TestServer| async move {
        let token = server.token().await;
        let send = |path: &'static str, key: &'static str, body: Value| {
            server
                .client
                .post(format!("{}{API}/{path}", server.base_url))
                .bearer_auth(&token)
                .header("idempotency-key", key)
                .json(&body)
                .send()
        };
        let body = json!({"name": "Gold"});
        let first = send("products", "product-1", body.clone()).await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let first: Value = first.json().await.unwrap();
        let again = send("products", "product-1", body).await.unwrap();
        assert_eq!(again.status(), StatusCode::CREATED);
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        let again: Value = again.json().await.unwrap();
        assert_eq!(again["productId"], first["productId"]);
        let product = first["productId"].as_str().unwrap().to_string();
        let price = json!({"productId": product, "currency": "EUR", "unitAmount": "5",
            "intervalType": "Monthly"});
        let created = send("prices", "price-1", price.clone()).await.unwrap();
        assert_eq!(created.status(), StatusCode::CREATED);
        let replayed = send("prices", "price-1", price).await.unwrap();
        assert_eq!(replayed.headers()["idempotent-replayed"], "true");
        let coupon = json!({"code": "ONCE", "percentOff": "10", "duration": "once"});
        let created = send("coupons", "coupon-1", coupon.clone()).await.unwrap();
        assert_eq!(created.status(), StatusCode::CREATED);
        // A replay is not a second coupon with the code (409), and another body is a 422.
        let replayed = send("coupons", "coupon-1", coupon).await.unwrap();
        assert_eq!(replayed.status(), StatusCode::CREATED);
        let other = json!({"code": "TWICE", "percentOff": "10", "duration": "once"});
        let reused = send("coupons", "coupon-1", other).await.unwrap();
        assert_eq!(reused.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let prices = server
            .call(Method::GET, &format!("{API}/prices"), Some(&token), None)
            .await;
        assert_eq!(prices.body["data"].as_array().unwrap().len(), 1);
    }
);
