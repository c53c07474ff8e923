//! Cancellation (DESIGN §3): no retries and no new cycles; open invoices with nothing failed
//! behind them are voided, while the renewal invoice whose charge failed stays Open and can still
//! be paid through a checkout session for the Canceled membership, which stays Canceled.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::charges;
use crate::fixtures::{MEMBERSHIP, SESSIONS};
use crate::harness::TestServer;
use crate::visitor::Visitor;

async fn cancel(server: &TestServer, token: &str, key: &str) -> Value {
    let reply = server
        .call(
            Method::POST,
            &format!("{MEMBERSHIP}/cancel/{key}"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// `Action` of each event of `order` (status changes with their status), oldest first.
async fn actions(server: &TestServer, order: &str) -> Vec<String> {
    server
        .events(order)
        .await
        .iter()
        .map(|e| match e["Action"].as_str().unwrap() {
            "SUBSCRIPTION_STATUS_CHANGED" => format!("status:{}", e["Membership"]["Status"]),
            "TRANSACTION_DATA_UPDATE" => format!("charge:{}", e["TransactionStatus"]),
            other => other.to_string(),
        })
        .collect()
}

backend_test!(
    cancel_leaves_a_failed_renewal_open_and_payable,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, key) = server
            .past_due_membership(
                &token,
                "c1@example.com",
                "cancel-1",
                "2027-03-01T00:00:00Z",
                "2027-04-01T00:00:00Z",
            )
            .await;

        let canceled = cancel(&server, &token, &key).await;
        assert_eq!(canceled["status"], "Canceled");
        assert_eq!(canceled["nextBillingDate"], Value::Null);
        let invoices = canceled["invoices"].as_array().unwrap();
        assert_eq!(invoices[0]["status"], "Open", "the failed renewal stays");
        assert_eq!(invoices[1]["status"], "Paid", "paid invoices stay");

        // No retry (1, 3, 5 days after the failure) and no new cycle runs.
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        assert_eq!(charges(&server, &key).await, 2, "first payment, renewal");
        assert_eq!(server.invoice_periods(&key).await.len(), 2);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["status"], "Open", "{m}");
        let canceled_notices = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'canceled' AND to_address = $1",
                "c1@example.com",
            )
            .await;
        assert_eq!(canceled_notices, 1);
        let before = actions(&server, "cancel-1").await;
        assert_eq!(
            before.last().map(String::as_str),
            Some("status:\"Canceled\"")
        );

        // The customer's portal offers to pay it.
        let portal = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/portal/session",
                Some(&token),
                Some(json!({"customerKey": customer})),
            )
            .await;
        let portal_url = portal.body["portalRedirectUrl"]
            .as_str()
            .unwrap()
            .to_string();
        // Its one membership's card: the "Pay now" button of the overdue invoice.
        let pay_button = ">Pay now</button>";
        let visitor = Visitor::new();
        assert!(visitor.get(&portal_url).await.text.contains(pay_button));

        // A checkout session for the Canceled membership collects the open invoice.
        let session = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": key})),
            )
            .await;
        assert_eq!(session.status, StatusCode::CREATED, "{}", session.body);
        let url = session.body["checkoutRedirectUrl"].as_str().unwrap();
        let page = visitor.get(url).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("29.97"), "{}", page.text);
        let paid = visitor.pay(url, "5555 5555 5555 4444").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let done = visitor.get(url).await;
        assert!(done.text.contains("Payment received"), "{}", done.text);

        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Canceled", "{m}");
        assert_eq!(m["invoices"][0]["status"], "Paid", "{m}");
        assert_eq!(m["invoices"][0]["amountPaid"], "29.97", "{m}");
        assert_eq!(m["nextBillingDate"], Value::Null);
        let after = actions(&server, "cancel-1").await;
        assert_eq!(
            after[before.len()..],
            ["charge:\"Success\"".to_string()],
            "the payment's transaction event and no status change"
        );
        let receipts = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'receipt' AND to_address = $1",
                "c1@example.com",
            )
            .await;
        assert_eq!(receipts, 2, "first payment and the paid invoice");
        // Nothing is left to pay, and the engine still leaves the membership alone.
        assert!(!visitor.get(&portal_url).await.text.contains(pay_button));
        let again = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": key})),
            )
            .await;
        again.problem(409);
        server.advance(&token, "2027-08-01T00:00:00Z").await;
        assert_eq!(charges(&server, &key).await, 3);
    }
);

backend_test!(
    cancel_voids_a_first_invoice_and_leaves_nothing_to_pay,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        let customer = server.create_customer(&token, "c2@example.com").await;
        // Never attempted: no invoice exists yet, and none is left after the cancel.
        let untouched = server
            .create_membership(&token, server.membership_body(&customer, "cancel-2a"))
            .await["membershipKey"]
            .as_str()
            .unwrap()
            .to_string();
        let canceled = cancel(&server, &token, &untouched).await;
        assert_eq!(canceled["status"], "Canceled");
        assert_eq!(canceled["invoices"], json!([]));

        // A declined first payment leaves the first invoice Open while Incomplete; it bills a
        // period that never started, so cancel voids it (as expiry does).
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        let declined = server
            .create_membership(&token, server.membership_body(&customer, "cancel-2b"))
            .await["membershipKey"]
            .as_str()
            .unwrap()
            .to_string();
        server.pay(&token, &declined).await.problem(402);
        let m = server.membership(&token, &declined).await;
        assert_eq!(m["invoices"][0]["status"], "Open", "{m}");
        let canceled = cancel(&server, &token, &declined).await;
        assert_eq!(canceled["status"], "Canceled");
        assert_eq!(canceled["invoices"][0]["status"], "Void", "{canceled}");
        for key in [&untouched, &declined] {
            server
                .call(
                    Method::POST,
                    SESSIONS,
                    Some(&token),
                    Some(json!({"customerKey": customer, "membershipKey": key})),
                )
                .await
                .problem(409);
        }
    }
);
