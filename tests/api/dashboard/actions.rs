//! The membership page's actions (issue 30): cancel, refund an invoice with an optional amount,
//! re-send an event with its endpoint deliveries, each confirmed first and posted with the
//! session's form token; the outcome page (done, refused with the reason); the pay-now link to
//! copy; another merchant's membership, invoice or event is the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::dashboard::{outcome, Browser};
use crate::fixtures::webhooks::{at, new_endpoint};
use crate::harness::TestServer;
use crate::receivers::WebhookReceiver;

const START: &str = "2027-03-01T00:00:00Z";

/// An Active membership (EUR 29.97 a month, from `START`) of a new customer: its key and the key
/// of its paid first invoice.
async fn paid(
    server: &TestServer,
    token: &str,
    order: &str,
    body: Option<Value>,
) -> (String, String) {
    let customer = server
        .create_customer(token, &format!("{order}@example.com"))
        .await;
    let mut membership = server.membership_body(&customer, order);
    if let Some(Value::Object(fields)) = body {
        for (name, value) in fields {
            membership[name] = value;
        }
    }
    let record = server.active_membership(token, START, membership).await;
    let field = |value: &Value| value.as_str().unwrap().to_string();
    (
        field(&record["membershipKey"]),
        field(&record["invoices"][0]["invoiceKey"]),
    )
}

async fn refunded(server: &TestServer, token: &str, invoice: &str) -> Value {
    let reply = server
        .call(
            Method::GET,
            &format!("/api/subscriptions/v1/invoice/{invoice}"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["amountRefunded"].clone()
}

backend_test!(
    dashboard_cancel_is_confirmed_then_done,
    |server: TestServer| async move {
        let api = server.token().await;
        let (key, _) = paid(&server, &api, "cancel-1", None).await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page_path = format!("/dashboard/memberships/{key}");
        let shown = browser.get(&page_path, &cookie).await;
        assert!(shown.text.contains(&format!("href=\"{page_path}/cancel\"")));
        let confirm = browser.get(&format!("{page_path}/cancel"), &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        assert!(confirm.text.contains("Cancel this membership?"));
        assert!(confirm
            .text
            .contains(&format!("action=\"{page_path}/cancel\"")));
        assert_eq!(server.membership(&api, &key).await["status"], "Active");

        let forged = browser
            .post(
                &format!("{page_path}/cancel"),
                &cookie,
                &[("csrfToken", "0".repeat(64).as_str())],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(server.membership(&api, &key).await["status"], "Active");

        let done = browser
            .post(
                &format!("{page_path}/cancel"),
                &cookie,
                &[("csrfToken", confirm.csrf().as_str())],
            )
            .await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
        assert_eq!(outcome(&done), Some("done"));
        assert!(done.text.contains("The membership is canceled."));
        assert_eq!(server.membership(&api, &key).await["status"], "Canceled");
        let after = browser.get(&page_path, &cookie).await;
        assert!(!after.text.contains("data-testid=\"cancel-link\""));
    }
);

backend_test!(
    dashboard_cancel_of_an_expired_membership_is_refused_with_the_reason,
    |server: TestServer| async move {
        let api = server.token().await;
        let customer = server.create_customer(&api, "expired@example.com").await;
        server.advance(&api, "2027-03-01T08:00:00Z").await;
        let body = server.membership_body(&customer, "expired-1");
        let record = server.create_membership(&api, body).await;
        let key = record["membershipKey"].as_str().unwrap().to_string();
        server.advance(&api, "2027-03-02T07:00:00Z").await;
        assert_eq!(server.membership(&api, &key).await["status"], "Expired");
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page_path = format!("/dashboard/memberships/{key}");
        let page = browser.get(&page_path, &cookie).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(!page.text.contains("data-testid=\"cancel-link\""));
        let refused = browser
            .post(
                &format!("{page_path}/cancel"),
                &cookie,
                &[("csrfToken", page.csrf().as_str())],
            )
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
        assert_eq!(outcome(&refused), Some("refused"));
        assert!(refused
            .text
            .contains("a Expired membership cannot be canceled"));
        assert_eq!(server.membership(&api, &key).await["status"], "Expired");
    }
);

backend_test!(
    dashboard_refund_takes_an_amount_and_refuses_what_is_not_left,
    |server: TestServer| async move {
        let api = server.token().await;
        let (key, invoice) = paid(&server, &api, "refund-1", None).await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let path = format!("/dashboard/memberships/{key}/invoices/{invoice}/refund");
        let shown = browser
            .get(&format!("/dashboard/memberships/{key}"), &cookie)
            .await;
        assert!(
            shown.text.contains(&format!("href=\"{path}\"")),
            "{}",
            shown.text
        );
        let form = browser.get(&path, &cookie).await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.text);
        assert!(form.text.contains("data-testid=\"refundable\">€29.97<"));
        let csrf = form.csrf();
        let post = |amount: &'static str, csrf: String| {
            let (browser, cookie, path) = (&browser, &cookie, &path);
            async move {
                browser
                    .post(path, cookie, &[("csrfToken", &csrf), ("amount", amount)])
                    .await
            }
        };

        let forged = post("10", "0".repeat(64)).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        for (amount, why) in [("ten", "must be a number"), ("40", "")] {
            let refused = post(amount, csrf.clone()).await;
            assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{amount}");
            assert!(refused.text.contains("data-testid=\"amount-error\""));
            assert!(refused.text.contains(why), "{}", refused.text);
            assert!(refused.text.contains(&format!("value=\"{amount}\"")));
        }
        assert_eq!(refunded(&server, &api, &invoice).await, json!("0.00"));

        let part = post("10", csrf.clone()).await;
        assert_eq!(part.status, StatusCode::OK, "{}", part.text);
        assert_eq!(outcome(&part), Some("done"));
        assert!(part.text.contains("€10.00 was refunded."), "{}", part.text);
        assert_eq!(refunded(&server, &api, &invoice).await, json!("10.00"));
        let again = browser.get(&path, &cookie).await;
        assert!(again.text.contains("data-testid=\"refundable\">€19.97<"));
        let rest = post("", csrf.clone()).await;
        assert!(rest.text.contains("€19.97 was refunded."), "{}", rest.text);
        assert_eq!(refunded(&server, &api, &invoice).await, json!("29.97"));
        // Nothing left: the 409's reason, not a 500.
        let none_left = post("", csrf.clone()).await;
        assert_eq!(none_left.status, StatusCode::CONFLICT);
        assert_eq!(outcome(&none_left), Some("refused"));
        assert!(none_left.text.contains("the invoice is fully refunded"));
        let shown = browser
            .get(&format!("/dashboard/memberships/{key}"), &cookie)
            .await;
        assert!(!shown.text.contains("data-testid=\"refund-link\""));
    }
);

backend_matrix!(
    dashboard_resend_reaches_the_url_and_the_endpoints,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = TestServer::start_with_owned(backend, &receiver.settings()).await;
        let api = server.token().await;
        let base = &receiver.url;
        new_endpoint(&server, &api, &format!("{base}/kept"), json!(null)).await;
        let own = json!({"webhookUrl": format!("{base}/own")});
        let (key, _) = paid(&server, &api, "resend-1", Some(own)).await;
        server.advance(&api, START).await;
        let sent = at(&receiver, "/hooks/own").len();
        assert!(sent > 0);
        let kept = at(&receiver, "/hooks/kept").len();
        let action_id = at(&receiver, "/hooks/own")[0]
            .header("webhook-id")
            .to_string();

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser
            .get(&format!("/dashboard/memberships/{key}"), &cookie)
            .await;
        let path = format!("/dashboard/memberships/{key}/events/{action_id}/resend");
        assert!(
            page.text.contains(&format!("href=\"{path}\"")),
            "{}",
            page.text
        );
        let confirm = browser.get(&path, &cookie).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        let forged = browser
            .post(&path, &cookie, &[("csrfToken", "0".repeat(64).as_str())])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        server.advance(&api, "2027-03-01T00:05:00Z").await;
        assert_eq!(at(&receiver, "/hooks/own").len(), sent, "nothing re-sent");

        let done = browser
            .post(&path, &cookie, &[("csrfToken", confirm.csrf().as_str())])
            .await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
        assert_eq!(outcome(&done), Some("done"));
        server.advance(&api, "2027-03-01T00:05:00Z").await;
        let own_now = at(&receiver, "/hooks/own");
        assert_eq!(own_now.len(), sent + 1);
        assert_eq!(own_now[sent].header("webhook-id"), action_id);
        let kept_now = at(&receiver, "/hooks/kept");
        assert_eq!(kept_now.len(), kept + 1, "the endpoint's delivery too");
        assert_eq!(kept_now[kept].header("webhook-id"), action_id);
        let unknown = browser
            .get(
                &format!("/dashboard/memberships/{key}/events/evt_unknown/resend"),
                &cookie,
            )
            .await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    }
);

backend_test!(
    dashboard_shows_the_open_pay_now_link,
    |server: TestServer| async move {
        let api = server.token().await;
        let customer = server.create_customer(&api, "paynow-1@example.com").await;
        let mut body = server.membership_body(&customer, "paynow-1");
        body["chargeEmitterQueue"] = json!([{"transactionStatus": "Rejected"}]);
        let record = server.active_membership(&api, START, body).await;
        server
            .attach_card(&api, &customer, "4242424242424242")
            .await;
        let key = record["membershipKey"].as_str().unwrap().to_string();
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let path = format!("/dashboard/memberships/{key}");
        let before = browser.get(&path, &cookie).await;
        assert!(!before.text.contains("data-testid=\"pay-now-link\""));
        server.advance(&api, "2027-04-01T00:00:00Z").await;
        assert_eq!(server.membership(&api, &key).await["status"], "PastDue");
        // A month on the merchant's clock ended the session.
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(&path, &cookie).await;
        let at = page
            .text
            .find("readonly value=\"")
            .expect("the pay-now link")
            + 16;
        let link = page.text[at..].split('"').next().unwrap().to_string();
        assert!(
            link.starts_with(&format!("{}/checkout/", server.base_url)),
            "{link}"
        );
        // It is the link of the e-mail: it opens the checkout of the failed renewal.
        let checkout = reqwest::get(&link).await.unwrap();
        assert_eq!(checkout.status(), StatusCode::OK);
        assert!(checkout.text().await.unwrap().contains("€29.97"));
    }
);

backend_test!(
    dashboard_actions_on_another_merchants_records_are_not_found,
    |server: TestServer| async move {
        let api = server.token().await;
        let (key, invoice) = paid(&server, &api, "tenant-1", None).await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let theirs = browser.log_in(&other).await;
        let action_id: String = sqlx::query_scalar(
            "SELECT action_id FROM events WHERE order_id = $1 ORDER BY id LIMIT 1",
        )
        .bind("tenant-1")
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        let base = format!("/dashboard/memberships/{key}");
        for path in [
            format!("{base}/cancel"),
            format!("{base}/invoices/{invoice}/refund"),
            format!("{base}/events/{action_id}/resend"),
        ] {
            assert_eq!(
                browser.get(&path, &mine).await.status,
                StatusCode::OK,
                "{path}"
            );
            let page = browser.get(&path, &theirs).await;
            assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
            let csrf = browser.get("/dashboard/customers", &theirs).await.csrf();
            let posted = browser
                .post(&path, &theirs, &[("csrfToken", &csrf), ("amount", "")])
                .await;
            assert_eq!(posted.status, StatusCode::NOT_FOUND, "{path}");
        }
        assert_eq!(server.membership(&api, &key).await["status"], "Active");
        assert_eq!(refunded(&server, &api, &invoice).await, json!("0.00"));
        // An invoice of another membership is not this membership's.
        let (second, _) = paid(&server, &api, "tenant-2", None).await;
        let crossed = browser
            .get(
                &format!("/dashboard/memberships/{second}/invoices/{invoice}/refund"),
                &mine,
            )
            .await;
        assert_eq!(crossed.status, StatusCode::NOT_FOUND);
    }
);
