//! The pay-now link of the "payment failed" e-mail (DESIGN §3): a hosted checkout for the open
//! invoice, paid with the saved card (one button, through the identity check when the card asks
//! for one) or a new card, working for 30 days, well past the dunning schedule, and after a
//! cancel. The e-mail outbox never holds the link's token: the mailer puts it in. Also pay-now
//! checkouts the merchant opens, and their race with a dunning retry.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::checkout::open;
use crate::fixtures::memberships::charges;
use crate::fixtures::SESSIONS;
use crate::harness::TestServer;
use crate::receivers::eventually;
use crate::visitor::Visitor;

/// A membership of a new customer paid on March 1, 2027 with the success card, then `card`
/// attached; the queue rejects its first `rejections` recurring attempts. Returns its key.
async fn membership(
    server: &TestServer,
    token: &str,
    email: &str,
    rejections: usize,
    card: &str,
) -> String {
    let customer = server.create_customer(token, email).await;
    let mut body = server.membership_body(&customer, email);
    body["chargeEmitterQueue"] =
        Value::Array(vec![json!({"transactionStatus": "Rejected"}); rejections]);
    let record = server
        .active_membership(token, "2027-03-01T00:00:00Z", body)
        .await;
    server.attach_card(token, &customer, card).await;
    record["membershipKey"].as_str().unwrap().to_string()
}

/// The pay-now link of the "payment failed" e-mail to `to`, as the mailer wrote it (`.eml`).
async fn emailed_link(server: &TestServer, to: &str) -> String {
    let (id, text, html): (i64, String, String) = sqlx::query_as(
        "SELECT id, text_body, html_body FROM emails WHERE kind = 'payment_failed' \
         AND to_address = $1",
    )
    .bind(to)
    .fetch_one(server.server.state.store.pool())
    .await
    .unwrap();
    let path = server
        .data_dir()
        .join("mail")
        .join(format!("email-{id}.eml"));
    eventually(|| path.exists()).await;
    // Quoted-printable soft line breaks are the only encoding a link's characters get.
    let sent = std::fs::read_to_string(&path).unwrap().replace("=\r\n", "");
    let link = regex::Regex::new(r"http://[0-9.:]+/checkout/[0-9a-f]{64}")
        .unwrap()
        .find(&sent)
        .unwrap_or_else(|| panic!("no link in {sent}"))
        .as_str()
        .to_string();
    assert!(sent.contains("Pay now"), "{sent}");
    let token = link.rsplit('/').next().unwrap();
    for stored in [&text, &html] {
        assert!(!stored.contains(token), "the outbox holds the link's token");
        assert!(stored.contains("Pay now"), "{stored}");
    }
    link
}

async fn pay_now_charges(server: &TestServer, key: &str, last4: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
         JOIN payment_methods p ON p.id = c.payment_method_id WHERE m.membership_key = $1 \
         AND c.kind = 'pay_now' AND c.status = 'Success' AND p.last4 = $2",
    )
    .bind(key)
    .bind(last4)
    .fetch_one(server.server.state.store.pool())
    .await
    .unwrap()
}

backend_test!(
    the_payment_failed_email_links_to_a_saved_card_payment,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = membership(&server, &token, "pn1@example.com", 1, "4242424242424242").await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        let link = emailed_link(&server, "pn1@example.com").await;

        let visitor = Visitor::new();
        let page = visitor.get(&link).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("€29.97"), "{}", page.text);
        assert!(page.text.contains("•••• 4242"), "the saved card is offered");
        assert!(page.csp.contains("form-action 'self'"), "{}", page.csp);
        let forged = visitor
            .post(
                &format!("{link}/saved"),
                &[("csrfToken", "0".repeat(64).as_str())],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
        assert_eq!(pay_now_charges(&server, &key, "4242").await, 0);
        let paid = visitor
            .post(
                &format!("{link}/saved"),
                &[("csrfToken", page.csrf().as_str())],
            )
            .await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(m["invoices"][0]["status"], "Paid", "{m}");
        assert_eq!(pay_now_charges(&server, &key, "4242").await, 1);
        // Paid on the page: the notification names the checkout session and the customer's
        // address; the rejected renewal before it had no customer present.
        let notices: Vec<Value> = server
            .events("pn1@example.com")
            .await
            .into_iter()
            .filter(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
            .collect();
        let (renewal, pay_now) = (&notices[notices.len() - 2], &notices[notices.len() - 1]);
        let session_id = pay_now["CascadingInfo"]["SessionId"].as_str().unwrap();
        assert!(uuid::Uuid::parse_str(session_id).is_ok(), "{session_id}");
        assert_eq!(pay_now["ClientIP"], "127.0.0.1");
        assert_eq!(renewal["TransactionStatus"], "Rejected");
        assert_eq!(renewal["CascadingInfo"]["SessionId"], Value::Null);
        assert_eq!(renewal["ClientIP"], Value::Null);
        let done = visitor.get(&link).await;
        assert!(done.text.contains("Payment successful"), "{}", done.text);

        // The link works for 30 days after the failure, then shows the expired page.
        server.advance(&token, "2027-04-30T23:59:59Z").await;
        assert_eq!(visitor.get(&link).await.status, StatusCode::OK);
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        assert_eq!(visitor.get(&link).await.status, StatusCode::GONE);
    }
);

backend_test!(
    the_pay_now_link_outlives_dunning_and_takes_a_new_card,
    |server: TestServer| async move {
        let token = server.token().await;
        let key = membership(&server, &token, "pn2@example.com", 4, "4000000000000002").await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        let link = emailed_link(&server, "pn2@example.com").await;
        // The renewal and its three retries are rejected: Unpaid after five days.
        server.advance(&token, "2027-04-06T00:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Unpaid");

        let visitor = Visitor::new();
        let page = visitor.get(&link).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("€29.97"), "{}", page.text);
        // The saved card is the decline card: test cards decide pay-now payments.
        let declined = visitor
            .post(
                &format!("{link}/saved"),
                &[("csrfToken", page.csrf().as_str())],
            )
            .await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        assert!(declined.text.contains("declined"), "{}", declined.text);
        assert_eq!(server.membership(&token, &key).await["status"], "Unpaid");
        // A new card pays, and becomes the saved card.
        let paid = visitor.pay(&link, "5555 5555 5555 4444").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(m["invoices"][0]["status"], "Paid", "{m}");
        assert_eq!(pay_now_charges(&server, &key, "4444").await, 1);
        let saved: String = sqlx::query_scalar(
            "SELECT p.last4 FROM payment_methods p JOIN customers c ON c.id = p.customer_id \
             WHERE c.email = $1 AND p.attached_at IS NOT NULL ORDER BY p.attached_at DESC, p.id DESC",
        )
        .bind("pn2@example.com")
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        assert_eq!(saved, "4444");
    }
);

backend_test!(
    a_canceled_membership_keeps_its_pay_now_link,
    |server: TestServer| async move {
        let token = server.token().await;
        // The saved card asks the customer to confirm their identity when they are present.
        let key = membership(&server, &token, "pn3@example.com", 1, "4000000000003220").await;
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        let link = emailed_link(&server, "pn3@example.com").await;
        let canceled = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(canceled.body["status"], "Canceled", "{}", canceled.body);
        let visitor = Visitor::new();
        let page = visitor.get(&link).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let paid = visitor
            .post(
                &format!("{link}/saved"),
                &[("csrfToken", page.csrf().as_str())],
            )
            .await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let challenge = visitor.get(&link).await;
        assert!(challenge.text.contains("•••• 3220"), "{}", challenge.text);
        assert_eq!(
            server.membership(&token, &key).await["invoices"][0]["status"],
            "Open"
        );
        let confirmed = visitor
            .post(
                &format!("{link}/confirm"),
                &[
                    ("csrfToken", challenge.csrf().as_str()),
                    ("action", "confirm"),
                ],
            )
            .await;
        assert_eq!(
            confirmed.status,
            StatusCode::SEE_OTHER,
            "{}",
            confirmed.text
        );
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Canceled", "{m}");
        assert_eq!(m["invoices"][0]["status"], "Paid", "{m}");
    }
);

backend_test!(
    the_pay_now_link_settles_a_past_due_membership,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, key) = server
            .past_due_membership(
                &token,
                "a@example.com",
                "order-1",
                "2027-01-10T09:00:00Z",
                "2027-02-10T10:00:00Z",
            )
            .await;
        let session = open(
            &server,
            &token,
            SESSIONS,
            json!({"customerKey": customer, "membershipKey": key}),
        )
        .await;
        let url = session["checkoutRedirectUrl"].as_str().unwrap();
        let visitor = Visitor::new();
        let page = visitor.get(url).await;
        assert!(page.text.contains("Pay your overdue invoice"));
        let paid = visitor.pay(url, "5555 5555 5555 4444").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        let record = server.membership(&token, &key).await;
        assert_eq!(record["status"], "Active");
        assert_eq!(record["invoices"][0]["status"], "Paid");
        let before = charges(&server, &key).await;
        // Dunning stopped: no retry runs on the old schedule.
        server.advance(&token, "2027-02-17T10:00:00Z").await;
        assert_eq!(charges(&server, &key).await, before);
        // The next renewal charges the new card.
        server.advance(&token, "2027-03-10T10:00:00Z").await;
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
                     JOIN payment_methods p ON p.id = c.payment_method_id \
                     WHERE m.membership_key = $1 AND c.kind = 'renewal' AND p.last4 = '4444' \
                     AND c.status = 'Success'",
                    &key,
                )
                .await,
            1
        );
    }
);

backend_test!(
    pay_now_posts_racing_a_dunning_retry_charge_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, key) = server
            .past_due_membership(
                &token,
                "a@example.com",
                "order-1",
                "2027-01-10T09:00:00Z",
                "2027-02-10T10:00:00Z",
            )
            .await;
        // Opened after the failure so that the link outlives the retry a day later.
        server.advance(&token, "2027-02-10T12:00:00Z").await;
        let session = open(
            &server,
            &token,
            SESSIONS,
            json!({"customerKey": customer, "membershipKey": key}),
        )
        .await;
        let url = session["checkoutRedirectUrl"].as_str().unwrap();
        let visitor = Visitor::new();
        let csrf = visitor.get(url).await.csrf();
        let form = [
            ("csrfToken", csrf.as_str()),
            ("cardNumber", "5555 5555 5555 4444"),
            ("expiry", "12/34"),
            ("cvc", "123"),
            ("holder", "Ada Lovelace"),
        ];
        // Eight submissions of the pay-now form while the first dunning retry falls due.
        let posts = futures::future::join_all((0..8).map(|_| visitor.post(url, &form)));
        let retry = server.call(
            Method::POST,
            "/api/subscriptions/v1/test-clock/advance",
            Some(&token),
            Some(json!({"to": "2027-02-11T10:00:00Z"})),
        );
        let (pages, advanced) = tokio::join!(posts, retry);
        assert_eq!(advanced.status, StatusCode::OK, "{}", advanced.body);
        for page in &pages {
            assert!(
                page.status == StatusCode::SEE_OTHER || page.status == StatusCode::OK,
                "{}: {}",
                page.status,
                page.text
            );
        }
        let record = server.membership(&token, &key).await;
        assert_eq!(record["status"], "Active");
        assert_eq!(record["creditBalance"], "0.00");
        let paid = server
            .count(
                "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
                 WHERE m.membership_key = $1 AND c.status = 'Success' AND c.kind <> 'first'",
                &key,
            )
            .await;
        assert_eq!(paid, 1, "the open invoice was paid once");
    }
);
