//! Merchant settings (DESIGN §13): `GET|PUT /merchant/settings` with their defaults (the
//! merchant's name, `INV`, `portalPlanChange` `now`), a merging
//! `PUT` (left out: unchanged, `null`: unset), every field's rule, a read key held to reading,
//! tenant isolation; and what uses them: the hosted pages (display name, logo, accent colour)
//! and the customer e-mails (display name, Reply-To and contact line).

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::cashier::open_order;
use crate::fixtures::checkout::open;
use crate::fixtures::spec;
use crate::fixtures::SESSIONS;
use crate::harness::{Reply, TestServer};
use crate::receivers::eventually;
use crate::visitor::Visitor;

const SETTINGS: &str = "/api/subscriptions/v1/merchant/settings";

async fn get(server: &TestServer, auth: &str) -> Reply {
    server.call(Method::GET, SETTINGS, Some(auth), None).await
}

async fn put(server: &TestServer, auth: &str, body: Value) -> Reply {
    server
        .call(Method::PUT, SETTINGS, Some(auth), Some(body))
        .await
}

/// A `PUT` that must succeed; its body.
async fn set(server: &TestServer, auth: &str, body: Value) -> Value {
    let reply = put(server, auth, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// The settings of a merchant that never set any, named `name`.
fn defaults(name: &str) -> Value {
    json!({
        "displayName": name, "legalName": null, "address": null, "country": null,
        "taxId": null, "supportEmail": null, "brandColor": null, "logoUrl": null,
        "invoicePrefix": "INV", "portalPlanChange": "now", "updatedAt": null
    })
}

/// Every field set, as sent (not yet in normal form).
fn full() -> Value {
    json!({
        "displayName": "Acme Coffee",
        "legalName": "Acme Coffee GmbH",
        "address": "Main Street 1\r\n10115 Berlin\nGermany",
        "country": "de",
        "taxId": "DE123456789",
        "supportEmail": "help@acme.example",
        "brandColor": "#0b6e4f",
        "logoUrl": "https://CDN.acme.example/logo.png",
        "invoicePrefix": "acme-eu",
        "portalPlanChange": "NEXTperiod"
    })
}

/// `full()` as answered: normal forms, and `updatedAt`.
fn full_answered(updated_at: &Value) -> Value {
    json!({
        "displayName": "Acme Coffee",
        "legalName": "Acme Coffee GmbH",
        "address": "Main Street 1\n10115 Berlin\nGermany",
        "country": "DE",
        "taxId": "DE123456789",
        "supportEmail": "help@acme.example",
        "brandColor": "#0B6E4F",
        "logoUrl": "https://cdn.acme.example/logo.png",
        "invoicePrefix": "ACME-EU",
        "portalPlanChange": "nextPeriod",
        "updatedAt": updated_at
    })
}

backend_test!(
    unset_settings_show_the_merchants_name_and_inv,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = get(&server, &token).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.body, defaults("Test Merchant"));
        // Without a credential: 401, as every merchant route.
        let anonymous = server.call(Method::GET, SETTINGS, None, None).await;
        anonymous.problem(401);
        // An empty PUT changes nothing and writes nothing.
        assert_eq!(
            set(&server, &token, json!({})).await,
            defaults("Test Merchant")
        );
    }
);

backend_test!(
    a_full_put_sets_every_field_in_its_normal_form,
    |server: TestServer| async move {
        let token = server.token().await;
        let answered = set(&server, &token, full()).await;
        let updated_at = answered["updatedAt"].clone();
        assert!(updated_at.as_str().unwrap().ends_with('Z'), "{updated_at}");
        assert_eq!(answered, full_answered(&updated_at));
        assert_eq!(get(&server, &token).await.body, answered);
    }
);

backend_test!(
    a_put_merges_and_null_unsets,
    |server: TestServer| async move {
        let token = server.token().await;
        set(&server, &token, full()).await;
        // Only the fields named change; unknown fields are ignored, as in every body.
        let merged = set(
            &server,
            &token,
            json!({"taxId": null, "legalName": "Acme Roasters AG", "colour": "red"}),
        )
        .await;
        let mut expected = full_answered(&merged["updatedAt"]);
        expected["taxId"] = Value::Null;
        expected["legalName"] = "Acme Roasters AG".into();
        assert_eq!(merged, expected);
        // Unset, the display name, the prefix and the portal's plan change show their defaults
        // again.
        let cleared = set(
            &server,
            &token,
            json!({"displayName": null, "invoicePrefix": null, "logoUrl": null,
                   "portalPlanChange": null}),
        )
        .await;
        assert_eq!(cleared["displayName"], "Test Merchant");
        assert_eq!(cleared["invoicePrefix"], "INV");
        assert_eq!(cleared["portalPlanChange"], "now");
        assert_eq!(cleared["logoUrl"], Value::Null);
        assert_eq!(cleared["legalName"], "Acme Roasters AG");
        assert_eq!(cleared["brandColor"], "#0B6E4F");
        assert_eq!(get(&server, &token).await.body, cleared);
    }
);

backend_test!(
    every_field_is_refused_by_its_own_rule,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = put(
            &server,
            &token,
            json!({
                "displayName": "Acme\nCoffee",
                "legalName": "x".repeat(201),
                "address": format!("{}x", "line\n".repeat(10)),
                "country": "XX",
                "taxId": " ",
                "supportEmail": "help@acme",
                "brandColor": "#0b6e4",
                "logoUrl": "http://cdn.acme.example/logo.png",
                "invoicePrefix": "INV-",
                "portalPlanChange": "atRenewal"
            }),
        )
        .await;
        let errors = reply.problem(400);
        let fields: Vec<&str> = errors.keys().map(String::as_str).collect();
        assert_eq!(
            fields,
            [
                "address",
                "brandColor",
                "country",
                "displayName",
                "invoicePrefix",
                "legalName",
                "logoUrl",
                "portalPlanChange",
                "supportEmail",
                "taxId"
            ]
        );
        // Nothing was changed.
        assert_eq!(get(&server, &token).await.body, defaults("Test Merchant"));

        for (body, path, message) in [
            (json!({"displayName": 5}), "displayName", "must be a string"),
            (
                json!({"displayName": ""}),
                "displayName",
                "must not be empty",
            ),
            (
                json!({"displayName": "é".repeat(101)}),
                "displayName",
                "at most 100",
            ),
            (
                json!({"address": "Main\tStreet"}),
                "address",
                "control characters",
            ),
            (
                json!({"address": "x".repeat(501)}),
                "address",
                "at most 500",
            ),
            (json!({"taxId": "x".repeat(51)}), "taxId", "at most 50"),
            (json!({"country": "DEU"}), "country", "alpha-2"),
            (
                json!({"supportEmail": "Help <help@acme.example>"}),
                "supportEmail",
                "e-mail",
            ),
            (json!({"brandColor": "green"}), "brandColor", "#RRGGBB"),
            (
                json!({"logoUrl": "https://u:p@cdn.acme.example/l.png"}),
                "logoUrl",
                "credentials",
            ),
            (
                json!({"logoUrl": format!("https://cdn.acme.example/{}", "a".repeat(2048))}),
                "logoUrl",
                "at most 2048",
            ),
            (
                json!({"invoicePrefix": "ABCDEFGHIJKLM"}),
                "invoicePrefix",
                "1 to 12",
            ),
            (
                json!({"invoicePrefix": "INV_1"}),
                "invoicePrefix",
                "1 to 12",
            ),
            (
                json!({"portalPlanChange": "later"}),
                "portalPlanChange",
                "must be now or nextPeriod",
            ),
            (
                json!({"portalPlanChange": true}),
                "portalPlanChange",
                "must be a string",
            ),
        ] {
            let reply = put(&server, &token, body.clone()).await;
            let errors = reply.problem(400);
            let messages = errors[path].as_array().expect("the field's messages");
            assert!(
                messages[0].as_str().unwrap().contains(message),
                "{body}: {messages:?}"
            );
        }
        put(&server, &token, json!(["displayName"]))
            .await
            .problem(400);
    }
);

backend_test!(
    a_read_key_reads_the_settings_and_cannot_change_them,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = |scope: &'static str| {
            let (server, token) = (&server, &token);
            async move {
                let reply = server
                    .call(
                        Method::POST,
                        "/api/subscriptions/v1/api-keys",
                        Some(token),
                        Some(json!({"name": scope, "scope": scope})),
                    )
                    .await;
                reply.body["secret"].as_str().unwrap().to_string()
            }
        };
        let (read, write) = (key("read").await, key("write").await);
        assert_eq!(get(&server, &read).await.body, defaults("Test Merchant"));
        put(&server, &read, json!({"displayName": "Read Key Co"}))
            .await
            .problem(403);
        assert_eq!(
            get(&server, &token).await.body["displayName"],
            "Test Merchant"
        );
        set(&server, &write, json!({"displayName": "Write Key Co"})).await;
        assert_eq!(
            get(&server, &read).await.body["displayName"],
            "Write Key Co"
        );
    }
);

backend_test!(
    merchants_never_see_each_others_settings,
    |server: TestServer| async move {
        let token_a = server.token().await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let token_b = server.token_for(&other).await;
        set(&server, &token_a, full()).await;
        assert_eq!(
            get(&server, &token_b).await.body,
            defaults("Other Merchant")
        );
        let b = set(&server, &token_b, json!({"displayName": "Beta Books"})).await;
        assert_eq!(b["legalName"], Value::Null);
        let a = get(&server, &token_a).await.body;
        assert_eq!(a, full_answered(&a["updatedAt"]));
    }
);

backend_test!(
    concurrent_puts_of_different_fields_all_hold,
    |server: TestServer| async move {
        let token = server.token().await;
        let changes = [
            ("displayName", "Delta Dairy"),
            ("legalName", "Delta Dairy Ltd"),
            ("address", "1 High Street"),
            ("country", "GB"),
            ("taxId", "GB123456789"),
            ("supportEmail", "care@delta.example"),
            ("brandColor", "#000000"),
            ("invoicePrefix", "DD"),
        ];
        let puts = changes
            .iter()
            .map(|(field, value)| put(&server, &token, json!({ *field: value })));
        for reply in futures::future::join_all(puts).await {
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        }
        let settings = get(&server, &token).await.body;
        for (field, value) in changes {
            assert_eq!(settings[field], value, "{settings}");
        }
    }
);

backend_test!(
    the_openapi_document_states_both_operations_and_their_rules,
    |server: TestServer| async move {
        let doc = server
            .call(Method::GET, "/openapi.json", None, None)
            .await
            .body;
        let item = &doc["paths"][SETTINGS];
        assert_eq!(item["get"]["operationId"], "get_settings");
        assert_eq!(item["put"]["operationId"], "update_settings");
        for status in ["200", "400", "401", "403", "413", "415", "422", "500"] {
            assert!(item["put"]["responses"][status].is_object(), "PUT {status}");
        }
        let schemas = &doc["components"]["schemas"];
        let fields = spec::keys(&schemas["SettingsUpdate"]["properties"]);
        assert_eq!(fields, spec::keys(&full()));
        assert_eq!(
            schemas["BrandColor"]["pattern"],
            recur_domain::settings::BRAND_COLOR_PATTERN
        );
        assert_eq!(
            schemas["InvoicePrefix"]["pattern"],
            recur_domain::settings::INVOICE_PREFIX_PATTERN
        );
        assert_eq!(
            schemas["PlanChange"]["pattern"],
            "^(?:[Nn][Oo][Ww]|[Nn][Ee][Xx][Tt][Pp][Ee][Rr][Ii][Oo][Dd])$"
        );
        assert_eq!(
            spec::keys(&schemas["SettingsRecord"]["properties"]),
            spec::keys(&defaults("x"))
        );
    }
);

/// A checkout link and a portal link for a new customer of the test's merchant.
async fn page_links(server: &TestServer, token: &str) -> (String, String) {
    let customer = server.create_customer(token, "pages@example.com").await;
    let membership = server
        .create_membership(token, server.membership_body(&customer, "order-pages"))
        .await["membershipKey"]
        .clone();
    let checkout = open(
        server,
        token,
        SESSIONS,
        json!({"customerKey": customer, "membershipKey": membership}),
    )
    .await;
    let portal = open(
        server,
        token,
        "/api/subscriptions/v1/portal/session",
        json!({"customerKey": customer}),
    )
    .await;
    let link = |body: &Value, name: &str| body[name].as_str().unwrap().to_string();
    (
        link(&checkout, "checkoutRedirectUrl"),
        link(&portal, "portalRedirectUrl"),
    )
}

backend_test!(
    hosted_pages_show_the_display_name_logo_and_brand_colour,
    |server: TestServer| async move {
        let token = server.token().await;
        let visitor = Visitor::new();
        let (checkout, portal) = page_links(&server, &token).await;
        let cashier =
            open_order(&server, "hp-brand", "https://merchant.example/h", json!({})).await;
        // Unbranded: the merchant's name, recur's colours, images from recur alone.
        let plain = visitor.get(&checkout).await;
        assert!(plain.text.contains("Test Merchant"));
        assert!(!plain.text.contains("/assets/accent/") && !plain.text.contains("class=\"logo\""));
        assert!(plain.csp.contains("img-src 'self' data:;"), "{}", plain.csp);

        set(&server, &token, full()).await;
        for url in [&checkout, &portal, &cashier] {
            let page = visitor.get(url).await;
            assert_eq!(page.status, StatusCode::OK, "{url}");
            // Attribute values as a browser reads them (the templates escape `/`).
            let html = page.text.replace("&#x2f;", "/");
            assert!(html.contains("Acme Coffee"), "{url}: {html}");
            assert!(!html.contains("Test Merchant"), "{url}");
            assert!(
                html.contains(r#"<link rel="stylesheet" href="/assets/accent/0B6E4F.css">"#),
                "{url}"
            );
            assert!(
                html.contains(
                    r#"<img class="logo" src="https://cdn.acme.example/logo.png" alt="Acme Coffee""#
                ),
                "{url}"
            );
            // The logo's origin alone joins img-src; styles stay same-origin, no inline style.
            assert!(
                page.csp.starts_with(
                    "default-src 'none'; style-src 'self'; script-src 'self'; \
                     img-src 'self' data: https://cdn.acme.example; form-action 'self'"
                ),
                "{url}: {}",
                page.csp
            );
            assert!(!html.contains("style="), "{url}");
        }

        let sheet = |file: &'static str| {
            let visitor = &visitor;
            let url = format!("{}/assets/accent/{file}", server.base_url);
            async move {
                let response = visitor.client.get(url).send().await.unwrap();
                let status = response.status();
                let kind = response.headers().get("content-type").cloned();
                (status, kind, response.text().await.unwrap())
            }
        };
        let (status, kind, css) = sheet("0B6E4F.css").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(kind.unwrap(), "text/css; charset=utf-8");
        assert_eq!(
            css,
            ":root { --accent: #0B6E4F; --accent-ink: #fff; --link: #0B6E4F; }\n"
        );
        // A light colour keeps dark text on buttons and recur's link colour.
        let (_, _, light) = sheet("ffd700.css").await;
        assert_eq!(
            light,
            ":root { --accent: #FFD700; --accent-ink: #14213d; }\n"
        );
        for bad in ["0B6E4F", "0B6E4.css", "GGGGGG.css", "0B6E4F.css.css"] {
            assert_eq!(sheet(bad).await.0, StatusCode::NOT_FOUND, "{bad}");
        }
    }
);

/// The `.eml` file of the e-mail to `to` (no SMTP in the tests: messages become files).
async fn eml_to(server: &TestServer, to: &str) -> String {
    let dir = server.data_dir().join("mail");
    let find = || {
        std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".eml"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .find(|text| text.contains(&format!("To: {to}")))
    };
    eventually(|| find().is_some()).await;
    find().unwrap()
}

/// The customer `email` pays a membership at test-clock time `start`; the receipt as sent, and
/// its stored text and HTML bodies (the sent parts may be transfer-encoded).
async fn receipt_for(server: &TestServer, token: &str, email: &str, start: &str) -> [String; 3] {
    let customer = server.create_customer(token, email).await;
    let body = server.membership_body(&customer, email);
    server.active_membership(token, start, body).await;
    let sent = eml_to(server, email).await;
    let (text, html): (String, String) =
        sqlx::query_as("SELECT text_body, html_body FROM emails WHERE to_address = $1")
            .bind(email)
            .fetch_one(server.server.state.store.pool())
            .await
            .unwrap();
    [sent, text, html]
}

backend_test!(
    customer_emails_come_from_the_display_name_with_the_support_email,
    |server: TestServer| async move {
        let token = server.token().await;
        let [sent, text, html] =
            receipt_for(&server, &token, "first@example.com", "2027-03-01T00:00:00Z").await;
        assert!(
            sent.contains("Subject: Your receipt from Test Merchant"),
            "{sent}"
        );
        assert!(!sent.contains("Reply-To:"), "{sent}");
        assert!(!text.contains("Questions?") && !html.contains("Questions?"));
        assert!(text.contains("Test Merchant, billed by recur"), "{text}");

        set(&server, &token, full()).await;
        let [sent, text, html] = receipt_for(
            &server,
            &token,
            "second@example.com",
            "2027-03-02T00:00:00Z",
        )
        .await;
        assert!(
            sent.contains("Subject: Your receipt from Acme Coffee"),
            "{sent}"
        );
        assert!(sent.contains("Reply-To: help@acme.example"), "{sent}");
        for body in [&text, &html] {
            assert!(body.contains("Acme Coffee, billed by recur"), "{body}");
            assert!(!body.contains("Test Merchant"), "{body}");
        }
        assert!(
            text.contains("Questions? Write to help@acme.example."),
            "{text}"
        );
        assert!(html.contains("Questions? Write to <strong>help@acme.example</strong>."));
    }
);
