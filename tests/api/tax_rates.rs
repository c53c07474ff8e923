//! Tax rates (DESIGN §14): creation, list, read, change, every refusal, and the check of a
//! membership's `taxRateIds`.

use recur::store::merchants::Mode;
use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{errors, post_rate, rate};
use crate::fixtures::RATES;
use crate::harness::{Reply, TestServer};

async fn patch(server: &TestServer, token: &str, id: &str, body: Value) -> Reply {
    server
        .call(
            Method::PATCH,
            &format!("{RATES}/{id}"),
            Some(token),
            Some(body),
        )
        .await
}

backend_test!(
    rates_are_created_listed_read_and_changed,
    |server: TestServer| async move {
        let token = server.token().await;
        let created = post_rate(
            &server,
            &token,
            json!({"name": "VAT", "percentage": "19.0", "inclusive": false, "country": "de"}),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
        let id = created.body["taxRateId"].as_str().unwrap().to_string();
        assert!(id.starts_with("txr_"), "{id}");
        assert_eq!(created.body["name"], "VAT");
        assert_eq!(created.body["percentage"], "19");
        assert_eq!(created.body["inclusive"], false);
        assert_eq!(created.body["country"], "DE");
        assert_eq!(created.body["active"], true);
        assert!(created.body["createdAt"].is_string());
        let read = server
            .call(Method::GET, &format!("{RATES}/{id}"), Some(&token), None)
            .await;
        assert_eq!(read.status, 200);
        assert_eq!(read.body, created.body);

        // Unused: every field may change; `null` removes the country.
        let changed = patch(
            &server,
            &token,
            &id,
            json!({"name": "USt", "percentage": "7.125", "inclusive": true, "country": null}),
        )
        .await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        assert_eq!(changed.body["percentage"], "7.125");
        assert_eq!(changed.body["inclusive"], true);
        assert_eq!(changed.body["country"], Value::Null);
        // Archived rates stay listed, newest first, a page at a time.
        let archived = patch(&server, &token, &id, json!({"active": false})).await;
        assert_eq!(archived.body["active"], false);
        let second = rate(
            &server,
            &token,
            json!({"name": "B", "percentage": "0", "inclusive": false}),
        )
        .await;
        let page = server
            .call(Method::GET, &format!("{RATES}?limit=1"), Some(&token), None)
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(page.body["data"][0]["taxRateId"], second.as_str());
        let cursor = page.body["nextCursor"].as_str().expect("a next page");
        let next = server
            .call(
                Method::GET,
                &format!("{RATES}?limit=1&cursor={cursor}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(next.body["data"][0]["taxRateId"], id.as_str());
        assert_eq!(next.body["data"][0]["active"], false);
        assert_eq!(next.body["nextCursor"], Value::Null);
    }
);

backend_test!(
    every_refusal_is_a_problem,
    |server: TestServer| async move {
        let token = server.token().await;
        let missing = post_rate(&server, &token, json!({})).await;
        let e = errors(&missing);
        for field in ["name", "percentage", "inclusive"] {
            assert!(e[field].is_array(), "{field}: {e}");
        }
        for bad in ["100.0001", "1.23456", "-1", "abc", "1e1", ""] {
            let reply = post_rate(
                &server,
                &token,
                json!({"name": "X", "percentage": bad, "inclusive": false}),
            )
            .await;
            assert!(
                errors(&reply)["percentage"].is_array(),
                "{bad}: {}",
                reply.body
            );
        }
        let typed = post_rate(
            &server,
            &token,
            json!({"name": " ", "percentage": 19, "inclusive": "yes", "country": "XX"}),
        )
        .await;
        let e = errors(&typed);
        for field in ["name", "percentage", "inclusive", "country"] {
            assert!(e[field].is_array(), "{field}: {e}");
        }
        let id = rate(
            &server,
            &token,
            json!({"name": "VAT", "percentage": "19", "inclusive": false}),
        )
        .await;
        let bad_patch = patch(
            &server,
            &token,
            &id,
            json!({"percentage": "101", "active": "no"}),
        )
        .await;
        let e = errors(&bad_patch);
        assert!(e["percentage"].is_array() && e["active"].is_array(), "{e}");
        let unknown = patch(&server, &token, "txr_unknown", json!({"name": "X"})).await;
        unknown.problem(404);
        let unknown = server
            .call(
                Method::GET,
                &format!("{RATES}/txr_unknown"),
                Some(&token),
                None,
            )
            .await;
        unknown.problem(404);
        // Another merchant sees none of them.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let foreign = server
            .call(
                Method::GET,
                &format!("{RATES}/{id}"),
                Some(&other_token),
                None,
            )
            .await;
        foreign.problem(404);
        patch(&server, &other_token, &id, json!({"active": false}))
            .await
            .problem(404);
        let list = server
            .call(Method::GET, RATES, Some(&other_token), None)
            .await;
        assert_eq!(list.body["data"], json!([]));
    }
);

backend_test!(
    a_used_rate_keeps_its_terms,
    |server: TestServer| async move {
        let token = server.token().await;
        let id = rate(
            &server,
            &token,
            json!({"name": "VAT", "percentage": "19", "inclusive": false}),
        )
        .await;
        let customer = server.create_customer(&token, "used@example.com").await;
        // A membership request refused for another field does not fix the rate's terms.
        let mut refused = server.membership_body(&customer, "order-refused");
        refused["taxRateIds"] = json!([id]);
        refused["webhookUrl"] = json!("not a url");
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(refused),
            )
            .await;
        reply.problem(400);
        let changed = patch(&server, &token, &id, json!({"percentage": "19.5"})).await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        let back = patch(&server, &token, &id, json!({"percentage": "19"})).await;
        assert_eq!(back.status, 200, "{}", back.body);
        let mut body = server.membership_body(&customer, "order-used");
        body["taxRateIds"] = json!([id]);
        let created = server.create_membership(&token, body).await;
        assert_eq!(created["taxRateIds"], json!([id]));
        for change in [
            json!({"percentage": "20"}),
            json!({"inclusive": true}),
            json!({"country": "FR"}),
        ] {
            patch(&server, &token, &id, change).await.problem(409);
        }
        // The same value is no change; the name and active still change.
        let same = patch(
            &server,
            &token,
            &id,
            json!({"percentage": "19.00", "name": "MwSt"}),
        )
        .await;
        assert_eq!(same.status, 200, "{}", same.body);
        assert_eq!(same.body["name"], "MwSt");
        let archived = patch(&server, &token, &id, json!({"active": false})).await;
        assert_eq!(archived.body["active"], false);
        assert_eq!(archived.body["percentage"], "19");
    }
);

backend_test!(
    membership_tax_rate_ids_are_checked,
    |server: TestServer| async move {
        let token = server.token().await;
        let exclusive = rate(
            &server,
            &token,
            json!({"name": "A", "percentage": "19", "inclusive": false}),
        )
        .await;
        let inclusive = rate(
            &server,
            &token,
            json!({"name": "B", "percentage": "7", "inclusive": true}),
        )
        .await;
        let archived = rate(
            &server,
            &token,
            json!({"name": "C", "percentage": "5", "inclusive": false}),
        )
        .await;
        patch(&server, &token, &archived, json!({"active": false})).await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let foreign = rate(
            &server,
            &other_token,
            json!({"name": "D", "percentage": "5", "inclusive": false}),
        )
        .await;
        let customer = server.create_customer(&token, "ids@example.com").await;
        let create = |ids: Value| {
            let mut body = server.membership_body(&customer, "order-ids");
            body["taxRateIds"] = ids;
            server.call(
                Method::POST,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(body),
            )
        };
        for (ids, path) in [
            (json!(["txr_nope"]), "taxRateIds[0]"),
            (json!([exclusive, archived]), "taxRateIds[1]"),
            (json!([foreign]), "taxRateIds[0]"),
            (json!([exclusive, exclusive]), "taxRateIds[1]"),
            (json!([exclusive, 5]), "taxRateIds[1]"),
            (json!([exclusive, inclusive]), "taxRateIds"),
            (json!("txr_x"), "taxRateIds"),
        ] {
            let reply = create(ids.clone()).await;
            assert!(errors(&reply)[path].is_array(), "{ids}: {}", reply.body);
        }
        // The same checks on update, where `[]` removes every rate.
        let mut body = server.membership_body(&customer, "order-ids");
        body["taxRateIds"] = json!([exclusive]);
        let created = server.create_membership(&token, body).await;
        let key = created["membershipKey"].as_str().unwrap();
        let update = |ids: Value| {
            server.call(
                Method::PUT,
                "/api/subscriptions/v1/membership",
                Some(&token),
                Some(json!({"membershipKey": key, "taxRateIds": ids})),
            )
        };
        let reply = update(json!([inclusive, exclusive])).await;
        assert!(errors(&reply)["taxRateIds"].is_array(), "{}", reply.body);
        let reply = update(json!([foreign])).await;
        assert!(errors(&reply)["taxRateIds[0]"].is_array(), "{}", reply.body);
        let reply = update(json!([inclusive])).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["membership"]["taxRateIds"], json!([inclusive]));
        let reply = update(json!([])).await;
        assert_eq!(reply.body["membership"]["taxRateIds"], json!([]));
    }
);
