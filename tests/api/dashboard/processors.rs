//! The dashboard's processors page (DESIGN §17) against localstripe: the sandbox set listed, a
//! Stripe account connected (its last four and webhook URL shown, its secrets never, not even in
//! a form refused), keys refused beside their fields by recur's rules (localstripe accepts every
//! `sk_` key, so a key Stripe itself refuses is covered by the client's unit tests), Stripe out
//! of reach told on the page, the default changed (back to the sandbox gateways too), an account
//! renamed and its keys replaced (a key of the wrong mode refused unquoted), removal
//! after a confirmation and refused while a customer's card is held; CSRF and another merchant's
//! processor as the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{keys, outcome, Answer, Browser};
use crate::fixtures::stripe::customer_with_stripe_card;
use crate::fixtures::{shown, PROCESSORS};
use crate::harness::TestServer;

const PAGE: &str = "/dashboard/processors";
const SECRET_KEY: &str = "sk_test_51DashSecretKey9876";
const WEBHOOK_SECRET: &str = "whsec_DashWebhookSecret0123";

/// The connection form's fields, with the session's token.
fn connect_form<'a>(csrf: &'a str, name: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("csrfToken", csrf),
        ("name", name),
        ("secretKey", SECRET_KEY),
        ("publishableKey", "pk_test_51DashPublishable"),
        ("webhookSecret", WEBHOOK_SECRET),
    ]
}

/// Neither secret, nor the secret part of the key, is anywhere on `page`.
fn shows_no_secret(page: &Answer) {
    for secret in [
        SECRET_KEY,
        WEBHOOK_SECRET,
        SECRET_KEY.trim_start_matches("sk_test_"),
        WEBHOOK_SECRET.trim_start_matches("whsec_"),
    ] {
        assert!(!page.text.contains(secret), "{secret} in {}", page.text);
    }
}

/// The processors the page lists that are the default.
fn defaults(page: &Answer) -> Vec<String> {
    keys(page, "processor")
        .into_iter()
        .filter(|id| {
            page.text
                .contains(&format!("data-key=\"{id}\" data-default=\"true\""))
        })
        .collect()
}

/// The merchant's processors as the API lists them.
async fn api_list(server: &TestServer, token: &str) -> Vec<Value> {
    let reply = server
        .call(Method::GET, PROCESSORS, Some(token), None)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["data"].as_array().unwrap().clone()
}

backend_test!(
    dashboard_processors_page_lists_the_sandbox_set,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let anonymous = browser.get(PAGE, "").await;
        assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
        assert_eq!(anonymous.location.as_deref(), Some("/dashboard/login"));

        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(PAGE, &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("data-testid=\"nav-processors\""));
        assert!(page
            .text
            .contains("href=\"/dashboard/processors\" aria-current=\"page\""));
        assert_eq!(keys(&page, "processor"), ["101", "102", "201", "202"]);
        assert_eq!(defaults(&page), ["101"], "the sandbox gateways take cards");
        assert!(page.text.contains("Sandbox card gateway"));
        assert!(page.text.contains("Sandbox alternative method"));
        // Nothing to make the default, nothing to remove, a form to connect Stripe.
        assert!(!page.text.contains("data-testid=\"make-default\""));
        assert!(!page.text.contains("data-testid=\"remove-link\""));
        assert!(page.text.contains("data-testid=\"connect-stripe\""));
        assert!(page.text.contains("placeholder=\"sk_test_…\""));
        // The German strings.
        let german = browser
            .client
            .get(format!("{}{PAGE}", server.base_url))
            .header("cookie", &cookie)
            .header("accept-language", "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("Stripe-Konto verbinden"), "{german}");
    }
);

backend_test!(
    dashboard_connects_a_stripe_account_and_never_shows_its_secrets,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        let connected = browser
            .post(PAGE, &cookie, &connect_form(&csrf, "Stripe EU"))
            .await;
        assert_eq!(
            connected.status,
            StatusCode::SEE_OTHER,
            "{}",
            connected.text
        );
        let location = connected.location.clone().unwrap();
        assert_eq!(location, format!("{PAGE}?done=connected"));
        shows_no_secret(&connected);

        let page = browser.get(&location, &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        shows_no_secret(&page);
        assert!(shown(&page.text, "done").contains("The Stripe account is connected"));
        assert_eq!(
            keys(&page, "processor"),
            ["101", "102", "201", "202", "301"]
        );
        assert_eq!(defaults(&page), ["101"], "not made the default");
        assert_eq!(shown(&page.text, "processor-last4"), "9876");
        assert_eq!(shown(&page.text, "processor-mode"), "test");
        assert!(page.text.contains("Stripe EU"));
        assert!(page.text.contains("pk_test_51DashPublishable"));
        let webhook_url = format!("{}/webhooks/stripe/301", server.base_url);
        assert!(
            page.text.contains(&format!(
                "value=\"{webhook_url}\" data-testid=\"webhook-url\""
            )),
            "{}",
            page.text
        );
        // The Stripe account can be made the default and removed; the sandbox set again.
        assert!(page
            .text
            .contains("action=\"/dashboard/processors/301/default\""));
        assert!(page
            .text
            .contains("href=\"/dashboard/processors/301/remove\""));
        assert!(!page
            .text
            .contains("action=\"/dashboard/processors/101/default\""));

        // The API's service did it: the same record, the key sealed.
        let token = server.token().await;
        let listed = api_list(&server, &token).await;
        let record = &listed[4];
        assert_eq!(record["name"], "Stripe EU");
        assert_eq!(record["stripe"]["secretKeyLast4"], "9876");
        assert_eq!(record["stripe"]["webhookUrl"], webhook_url.as_str());
        let plain = server
            .count(
                "SELECT COUNT(*) FROM stripe_accounts WHERE secret_key_sealed = $1",
                SECRET_KEY,
            )
            .await;
        assert_eq!(plain, 0, "stored sealed");

        // "Make default" ticked: the new account takes new cards at once.
        let mut form = connect_form(&csrf, "Stripe US");
        form.push(("default", "true"));
        let second = browser.post(PAGE, &cookie, &form).await;
        assert_eq!(second.status, StatusCode::SEE_OTHER, "{}", second.text);
        let page = browser.get(PAGE, &cookie).await;
        assert_eq!(defaults(&page), ["302"]);
        assert!(page
            .text
            .contains("action=\"/dashboard/processors/101/default\""));
        assert!(page.text.contains("Make the sandbox gateways the default"));
        shows_no_secret(&page);
    }
);

backend_test!(
    dashboard_refuses_keys_beside_their_fields_without_showing_them_back,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        // A live key for a sandbox merchant, a secret key where the publishable one goes.
        let live_key = "sk_live_51DashLiveKey5555";
        let refused = browser
            .post(
                PAGE,
                &cookie,
                &[
                    ("csrfToken", &csrf),
                    ("name", "Typed name"),
                    ("secretKey", live_key),
                    ("publishableKey", "sk_test_51Swapped"),
                    ("webhookSecret", WEBHOOK_SECRET),
                    ("default", "true"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert_eq!(
            shown(&refused.text, "error-secretKey"),
            "must start with sk_test_"
        );
        assert!(refused
            .text
            .contains("data-testid=\"error-publishableKey\""));
        assert!(!refused.text.contains("data-testid=\"error-webhookSecret\""));
        assert!(!refused.text.contains("data-testid=\"error-name\""));
        // The name, the publishable key and the box come back; the secrets do not.
        assert!(refused.text.contains("value=\"Typed name\""));
        assert!(refused.text.contains("value=\"sk_test_51Swapped\""));
        assert!(refused.text.contains("value=\"true\" checked"));
        shows_no_secret(&refused);
        assert!(!refused.text.contains(live_key));
        assert!(!refused.text.contains("DashLiveKey5555"));

        let blank = browser.post(PAGE, &cookie, &[("csrfToken", &csrf)]).await;
        assert_eq!(blank.status, StatusCode::BAD_REQUEST);
        for field in ["name", "secretKey", "publishableKey", "webhookSecret"] {
            assert!(
                blank
                    .text
                    .contains(&format!("data-testid=\"error-{field}\"")),
                "{field}: {}",
                blank.text
            );
        }
        let token = server.token().await;
        assert_eq!(api_list(&server, &token).await.len(), 4, "nothing stored");
    }
);

backend_matrix!(
    dashboard_tells_when_stripe_is_out_of_reach,
    |backend| async move {
        // Nothing listens on the discard port of this host.
        let server =
            TestServer::start_with(backend, &[("RECUR_STRIPE_API_BASE", "http://127.0.0.1:9")])
                .await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        let page = browser
            .post(PAGE, &cookie, &connect_form(&csrf, "Down"))
            .await;
        assert_eq!(
            page.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            page.text
        );
        let told = shown(&page.text, "error");
        assert!(told.contains("Stripe could not check the key"), "{told}");
        assert!(told.contains("nothing was stored, try again"), "{told}");
        assert!(page.text.contains("value=\"Down\""));
        shows_no_secret(&page);
        let token = server.token().await;
        assert_eq!(api_list(&server, &token).await.len(), 4, "nothing stored");
    }
);

backend_test!(
    dashboard_changes_the_default_and_removes_accounts,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        let connected = browser
            .post(PAGE, &cookie, &connect_form(&csrf, "Stripe"))
            .await;
        assert_eq!(
            connected.status,
            StatusCode::SEE_OTHER,
            "{}",
            connected.text
        );
        let token_field = [("csrfToken", csrf.as_str())];

        let made = browser
            .post(&format!("{PAGE}/301/default"), &cookie, &token_field)
            .await;
        assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.text);
        assert_eq!(
            made.location.as_deref(),
            Some("/dashboard/processors?done=default")
        );
        let page = browser.get(&format!("{PAGE}?done=default"), &cookie).await;
        assert_eq!(defaults(&page), ["301"]);
        assert!(shown(&page.text, "done").contains("default card processor is changed"));

        // Only the first sandbox gateway stands for the sandbox set; a wallet takes no cards.
        for id in ["102", "201"] {
            let refused = browser
                .post(&format!("{PAGE}/{id}/default"), &cookie, &token_field)
                .await;
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{id}: {}",
                refused.text
            );
            assert!(refused.text.contains("data-testid=\"error\""), "{id}");
        }
        assert_eq!(defaults(&browser.get(PAGE, &cookie).await), ["301"]);
        let back = browser
            .post(&format!("{PAGE}/101/default"), &cookie, &token_field)
            .await;
        assert_eq!(back.status, StatusCode::SEE_OTHER, "{}", back.text);
        assert_eq!(defaults(&browser.get(PAGE, &cookie).await), ["101"]);
        let made = browser
            .post(&format!("{PAGE}/301/default"), &cookie, &token_field)
            .await;
        assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.text);

        // Removal: a confirmation page, then the account is gone and the sandbox gateways take
        // cards again. The sandbox set cannot be removed.
        let sandbox = browser.get(&format!("{PAGE}/101/remove"), &cookie).await;
        assert_eq!(sandbox.status, StatusCode::NOT_FOUND);
        let sandbox = browser
            .post(&format!("{PAGE}/101/remove"), &cookie, &token_field)
            .await;
        assert_eq!(sandbox.status, StatusCode::NOT_FOUND);
        let confirm = browser.get(&format!("{PAGE}/301/remove"), &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        assert!(confirm
            .text
            .contains("action=\"/dashboard/processors/301/remove\""));
        assert!(confirm.text.contains("Remove this Stripe account?"));
        let removed = browser
            .post(&format!("{PAGE}/301/remove"), &cookie, &token_field)
            .await;
        assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.text);
        assert_eq!(
            removed.location.as_deref(),
            Some("/dashboard/processors?done=removed")
        );
        let page = browser.get(&format!("{PAGE}?done=removed"), &cookie).await;
        assert_eq!(keys(&page, "processor"), ["101", "102", "201", "202"]);
        assert_eq!(defaults(&page), ["101"]);
        assert!(shown(&page.text, "done").contains("removed"));
        let again = browser
            .post(&format!("{PAGE}/301/remove"), &cookie, &token_field)
            .await;
        assert_eq!(again.status, StatusCode::NOT_FOUND);

        // An account holding a customer's card is not removed: the reason, 409.
        let token = server.token().await;
        let (_, held) = customer_with_stripe_card(&server, &token, "4242424242424242").await;
        let refused = browser
            .post(&format!("{PAGE}/{held}/remove"), &cookie, &token_field)
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
        assert_eq!(outcome(&refused), Some("refused"));
        assert!(refused
            .text
            .contains("cannot be removed while it is in use"));
        assert!(refused
            .text
            .contains("href=\"/dashboard/processors\" data-testid=\"back\""));
        assert_eq!(api_list(&server, &token).await.len(), 5);
    }
);

backend_test!(
    dashboard_processor_forms_need_their_token,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let token = server.token().await;
        let body = json!({
            "kind": "stripe", "name": "Stripe", "secretKey": SECRET_KEY,
            "publishableKey": "pk_test_51Dash", "webhookSecret": WEBHOOK_SECRET,
        });
        let created = server
            .call(Method::POST, PROCESSORS, Some(&token), Some(body))
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

        let zeros = "0".repeat(64);
        for form in [
            connect_form(&zeros, "Forged"),
            vec![("name", "No token"), ("secretKey", SECRET_KEY)],
        ] {
            let forged = browser.post(PAGE, &cookie, &form).await;
            assert_eq!(forged.status, StatusCode::FORBIDDEN);
            shows_no_secret(&forged);
        }
        for path in ["301/default", "301/remove", "101/default"] {
            let path = format!("{PAGE}/{path}");
            let missing = browser.post(&path, &cookie, &[]).await;
            assert_eq!(missing.status, StatusCode::FORBIDDEN, "{path}");
            let forged = browser.post(&path, &cookie, &[("csrfToken", &zeros)]).await;
            assert_eq!(forged.status, StatusCode::FORBIDDEN, "{path}");
            // Without a session: the login.
            let anonymous = browser.post(&path, "", &[("csrfToken", &zeros)]).await;
            assert_eq!(anonymous.status, StatusCode::SEE_OTHER, "{path}");
        }
        let listed = api_list(&server, &token).await;
        assert_eq!(listed.len(), 5, "nothing connected, nothing removed");
        assert_eq!(listed[4]["default"], false, "not made the default");
    }
);

backend_test!(
    dashboard_another_merchants_processor_is_not_found,
    |server: TestServer| async move {
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let created = server
            .call(
                Method::POST,
                PROCESSORS,
                Some(&other_token),
                Some(json!({
                    "kind": "stripe", "name": "Theirs", "secretKey": SECRET_KEY,
                    "publishableKey": "pk_test_51Theirs", "webhookSecret": WEBHOOK_SECRET,
                })),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        let theirs = created.body["paymentProcessorId"].as_i64().unwrap();

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(PAGE, &cookie).await;
        assert_eq!(keys(&page, "processor"), ["101", "102", "201", "202"]);
        assert!(!page.text.contains("Theirs"));
        let csrf = page.csrf();
        let token_field = [("csrfToken", csrf.as_str())];
        for id in [theirs.to_string(), "999".to_string(), "abc".to_string()] {
            let confirm = browser.get(&format!("{PAGE}/{id}/remove"), &cookie).await;
            assert_eq!(confirm.status, StatusCode::NOT_FOUND, "{id}");
            for action in ["default", "remove"] {
                let posted = browser
                    .post(&format!("{PAGE}/{id}/{action}"), &cookie, &token_field)
                    .await;
                assert_eq!(posted.status, StatusCode::NOT_FOUND, "{id} {action}");
            }
        }
        let still = api_list(&server, &other_token).await;
        assert_eq!(still.len(), 5, "theirs stays");
        assert_eq!(still[4]["default"], false);
    }
);

/// Delivers a Stripe event to account 301's webhook URL, signed now with `secret`: the status.
async fn signed_event(server: &TestServer, secret: &str, id: &str) -> StatusCode {
    let body = json!({"id": id, "type": "customer.created", "data": {"object": {}}}).to_string();
    let now = chrono::Utc::now().timestamp();
    let signature = recur_domain::stripe_signature::sign(secret, now, body.as_bytes());
    reqwest::Client::new()
        .post(format!("{}/webhooks/stripe/301", server.base_url))
        .header("Stripe-Signature", format!("t={now},v1={signature}"))
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
}

backend_test!(
    dashboard_replaces_the_webhook_signing_secret,
    |server: TestServer| async move {
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        let connected = browser
            .post(PAGE, &cookie, &connect_form(&csrf, "Stripe"))
            .await;
        assert_eq!(
            connected.status,
            StatusCode::SEE_OTHER,
            "{}",
            connected.text
        );
        let replace = format!("{PAGE}/301/webhook-secret");

        // A secret of the wrong shape is refused, and not shown back.
        let wrong = "sk_test_NotAWebhookSecret42";
        let refused = browser
            .post(
                &replace,
                &cookie,
                &[("csrfToken", csrf.as_str()), ("webhookSecret", wrong)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(!refused.text.contains(wrong), "{}", refused.text);
        assert_eq!(
            signed_event(&server, WEBHOOK_SECRET, "evt_old").await,
            StatusCode::OK
        );

        let new_secret = "whsec_ReplacedOnThePage77";
        let replaced = browser
            .post(
                &replace,
                &cookie,
                &[("csrfToken", csrf.as_str()), ("webhookSecret", new_secret)],
            )
            .await;
        assert_eq!(replaced.status, StatusCode::SEE_OTHER, "{}", replaced.text);
        assert_eq!(
            replaced.location.as_deref(),
            Some("/dashboard/processors?done=secret")
        );
        let page = browser.get(PAGE, &cookie).await;
        assert!(!page.text.contains(new_secret));
        assert_eq!(
            signed_event(&server, new_secret, "evt_new").await,
            StatusCode::OK
        );
        assert_eq!(
            signed_event(&server, WEBHOOK_SECRET, "evt_stale").await,
            StatusCode::BAD_REQUEST
        );
        let missing = browser
            .post(&replace, &cookie, &[("webhookSecret", new_secret)])
            .await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN, "no form token");
    }
);

backend_test!(
    dashboard_renames_an_account_and_replaces_its_keys,
    |server: TestServer| async move {
        let token = server.token().await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let csrf = browser.get(PAGE, &cookie).await.csrf();
        browser
            .post(PAGE, &cookie, &connect_form(&csrf, "Stripe"))
            .await;
        let change = format!("{PAGE}/301/keys");

        // A live key for a sandbox merchant is refused, and not shown back; nothing changes.
        let live = "sk_live_51NotForTheSandbox";
        let refused = browser
            .post(
                &change,
                &cookie,
                &[
                    ("csrfToken", csrf.as_str()),
                    ("name", "Renamed"),
                    ("secretKey", live),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(!refused.text.contains(live), "{}", refused.text);
        assert_eq!(
            api_list(&server, &token).await.last().unwrap()["name"],
            "Stripe"
        );

        let new_key = "sk_test_51RotatedKey4321";
        let changed = browser
            .post(
                &change,
                &cookie,
                &[
                    ("csrfToken", csrf.as_str()),
                    ("name", "Stripe EU"),
                    ("secretKey", new_key),
                    ("publishableKey", "pk_test_51RotatedPublishable"),
                ],
            )
            .await;
        assert_eq!(changed.status, StatusCode::SEE_OTHER, "{}", changed.text);
        assert_eq!(
            changed.location.as_deref(),
            Some("/dashboard/processors?done=changed")
        );
        let account = api_list(&server, &token).await.last().unwrap().clone();
        assert_eq!(account["name"], "Stripe EU");
        assert_eq!(account["stripe"]["secretKeyLast4"], "4321");
        assert_eq!(
            account["stripe"]["publishableKey"],
            "pk_test_51RotatedPublishable"
        );
        let page = browser.get(PAGE, &cookie).await;
        assert!(!page.text.contains(new_key));
        shows_no_secret(&page);

        // Blank fields keep what is stored.
        let kept = browser
            .post(
                &change,
                &cookie,
                &[("csrfToken", csrf.as_str()), ("name", "Stripe EU 2")],
            )
            .await;
        assert_eq!(kept.status, StatusCode::SEE_OTHER, "{}", kept.text);
        let account = api_list(&server, &token).await.last().unwrap().clone();
        assert_eq!(account["name"], "Stripe EU 2");
        assert_eq!(account["stripe"]["secretKeyLast4"], "4321");
    }
);
