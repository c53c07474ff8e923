//! Refunds of subscription invoices (DESIGN §9): the invoice record, partial and full refunds,
//! 400 over what is left, 409 before the amount when the invoice is not Paid, the `Refund`
//! transaction notification, one refund ledger and one `TransactionId` sequence shared with
//! cashier orders, and parallel refunds that never give back more than was paid.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::backend_test;
use crate::fixtures::cashier::{card, notices, open_order, pay, secret_post, visitor};
use crate::fixtures::INVOICE;
use crate::harness::{Reply, TestServer};
use crate::receivers::WebhookReceiver;

async fn refund(server: &TestServer, token: &str, invoice: &str, body: Option<Value>) -> Reply {
    server
        .call(
            Method::POST,
            &format!("{INVOICE}/{invoice}/refund"),
            Some(token),
            body,
        )
        .await
}

async fn invoice(server: &TestServer, token: &str, invoice: &str) -> Reply {
    server
        .call(
            Method::GET,
            &format!("{INVOICE}/{invoice}"),
            Some(token),
            None,
        )
        .await
}

/// An Active membership (EUR 29.97 a month) and the key of its paid first invoice.
async fn paid_invoice(server: &TestServer, token: &str, order: &str) -> (String, String) {
    let customer = server
        .create_customer(token, &format!("{order}@example.com"))
        .await;
    let record = server
        .active_membership(
            token,
            "2027-03-01T00:00:00Z",
            server.membership_body(&customer, order),
        )
        .await;
    let key = record["membershipKey"].as_str().unwrap().to_string();
    let invoice = record["invoices"][0]["invoiceKey"]
        .as_str()
        .unwrap()
        .to_string();
    (key, invoice)
}

backend_test!(
    a_paid_invoice_is_refunded_in_parts_then_in_full,
    |server: TestServer| async move {
        let token = server.token().await;
        let (membership, key) = paid_invoice(&server, &token, "refund-1").await;

        let before = invoice(&server, &token, &key).await;
        assert_eq!(before.status, StatusCode::OK, "{}", before.body);
        assert_eq!(before.body["invoiceKey"], key.as_str());
        assert_eq!(before.body["membershipKey"], membership.as_str());
        assert!(before.body["customerKey"]
            .as_str()
            .unwrap()
            .starts_with("cstmr_"));
        assert_eq!(before.body["status"], "Paid");
        assert_eq!(before.body["amountPaid"], "29.97");
        assert_eq!(before.body["amountRefunded"], "0.00");
        assert_eq!(before.body["refunds"], json!([]));

        let partial = refund(
            &server,
            &token,
            &key,
            Some(json!({"amount": "10.00", "reason": "  a seat was never used "})),
        )
        .await;
        assert_eq!(partial.status, StatusCode::CREATED, "{}", partial.body);
        let first = &partial.body;
        assert!(first["refundKey"].as_str().unwrap().starts_with("rfnd_"));
        assert_eq!(first["refundKey"].as_str().unwrap().len(), 5 + 24);
        assert_eq!(first["invoiceKey"], key.as_str());
        assert_eq!(first["amount"], "10.00");
        assert_eq!(first["currency"], "EUR");
        assert_eq!(first["status"], "Succeeded");
        assert_eq!(first["reason"], "a seat was never used");

        // A partially refunded invoice stays Paid and shows what was given back.
        let after = invoice(&server, &token, &key).await.body;
        assert_eq!(after["status"], "Paid");
        assert_eq!(after["amountRefunded"], "10.00");
        assert_eq!(after["refunds"][0]["refundKey"], first["refundKey"]);

        // More than is left: 400 on amount, nothing written.
        let over = refund(&server, &token, &key, Some(json!({"amount": 19.98}))).await;
        assert!(over.problem(400).contains_key("amount"), "{}", over.body);
        for bad in [json!(0), json!("-1.00"), json!("1.001"), json!("ten")] {
            let reply = refund(&server, &token, &key, Some(json!({"amount": bad}))).await;
            assert!(reply.problem(400).contains_key("amount"), "{bad}");
        }
        let long = refund(
            &server,
            &token,
            &key,
            Some(json!({"reason": "x".repeat(501)})),
        )
        .await;
        assert!(long.problem(400).contains_key("reason"));

        // Without a body: everything left.
        let rest = refund(&server, &token, &key, None).await;
        assert_eq!(rest.status, StatusCode::CREATED, "{}", rest.body);
        assert_eq!(rest.body["amount"], "19.97");
        assert_eq!(rest.body["reason"], Value::Null);

        // Fully refunded: 409, checked before the amount.
        let done = refund(&server, &token, &key, Some(json!({"amount": "1.00"}))).await;
        done.problem(409);
        let done = refund(&server, &token, &key, Some(json!({"amount": "ten"}))).await;
        done.problem(409);

        let after = invoice(&server, &token, &key).await.body;
        assert_eq!(after["amountRefunded"], "29.97");
        assert_eq!(after["refunds"].as_array().unwrap().len(), 2);
        let m = server.membership(&token, &membership).await;
        assert_eq!(m["status"], "Active", "a refund does not change the status");
        assert_eq!(m["invoices"][0]["amountRefunded"], "29.97");

        // Each refund is a `Refund` transaction of the subscription, in its own TransactionId.
        let notices = notices(&server, "refund-1").await;
        let kinds: Vec<(&str, &str, &Value)> = notices
            .iter()
            .map(|n| {
                (
                    n["TransactionType"].as_str().unwrap(),
                    n["TransactionStatus"].as_str().unwrap(),
                    &n["Amount"],
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("PayIn", "Success", &json!(29.97)),
                ("Refund", "Success", &json!(10.0)),
                ("Refund", "Success", &json!(19.97)),
            ]
        );
        for notice in &notices[1..] {
            assert_eq!(notice["IsSubscriptionTransaction"], true);
            assert_eq!(notice["PlanKey"], membership.as_str());
            assert_eq!(notice["SubscriptionInvoiceId"], key.as_str());
            assert_eq!(notice["Currency"], "EUR");
            assert_eq!(notice["Membership"]["Status"], "Active");
            assert!(notice["UsdAmount"].is_number());
            assert!(notice["CreditNote"]["CreditNoteKey"]
                .as_str()
                .is_some_and(|k| k.starts_with("cn_")));
        }
        // Beyond the spec: the credit note each succeeded refund wrote.
        assert_eq!(notices[1]["CreditNote"]["Number"], "CN-2027-000001");
        assert_eq!(notices[1]["CreditNote"]["Amount"], json!(10.0));
        assert_eq!(notices[2]["CreditNote"]["Number"], "CN-2027-000002");
        assert!(notices[0].get("CreditNote").is_none(), "a charge has none");
        assert_eq!(
            notices[2]["Membership"]["Invoices"][0]["AmountRefunded"],
            "29.97"
        );
        let ids: Vec<i64> = notices
            .iter()
            .map(|n| n["TransactionId"].as_i64().unwrap())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert_eq!(notices[1]["TransactionId"], first["transactionId"]);
    }
);

backend_test!(
    only_a_paid_invoice_of_the_merchant_can_be_refunded,
    |server: TestServer| async move {
        let token = server.token().await;
        // A renewal whose charge failed leaves an Open invoice.
        let (_, key) = server
            .past_due_membership(
                &token,
                "open@example.com",
                "refund-open",
                "2027-03-01T00:00:00Z",
                "2027-04-01T00:00:00Z",
            )
            .await;
        let m = server.membership(&token, &key).await;
        let open = m["invoices"][0]["invoiceKey"].as_str().unwrap();
        assert_eq!(m["invoices"][0]["status"], "Open");
        // 409, even with an amount that would be a 400.
        refund(&server, &token, open, Some(json!({"amount": "ten"})))
            .await
            .problem(409);
        refund(&server, &token, open, None).await.problem(409);
        // A JSON `null` body is no body (the document describes the body as optional).
        refund(&server, &token, open, Some(Value::Null))
            .await
            .problem(409);

        // Unknown and another merchant's invoices are 404 for reading and refunding.
        let paid = m["invoices"][1]["invoiceKey"].as_str().unwrap();
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        invoice(&server, &other_token, paid).await.problem(404);
        refund(&server, &other_token, paid, None).await.problem(404);
        invoice(&server, &token, "in_nope").await.problem(404);
        refund(&server, &token, "in_nope", None).await.problem(404);
        let unauthenticated = server
            .call(Method::GET, &format!("{INVOICE}/{paid}"), None, None)
            .await;
        assert_eq!(unauthenticated.status, StatusCode::UNAUTHORIZED);
    }
);

backend_test!(
    a_repeated_idempotency_key_refunds_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, key) = paid_invoice(&server, &token, "refund-idem").await;
        let send = || async {
            let response = server
                .client
                .post(format!("{}{INVOICE}/{key}/refund", server.base_url))
                .bearer_auth(&token)
                .header("Idempotency-Key", "refund-idem-1")
                .json(&json!({"amount": "5.00"}))
                .send()
                .await
                .unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        };
        let (first_status, first) = send().await;
        let (second_status, second) = send().await;
        assert_eq!(first_status, StatusCode::CREATED);
        assert_eq!(second_status, StatusCode::CREATED);
        assert_eq!(first["refundKey"], second["refundKey"]);
        let after = invoice(&server, &token, &key).await.body;
        assert_eq!(after["amountRefunded"], "5.00");
        assert_eq!(after["refunds"].as_array().unwrap().len(), 1);
    }
);

backend_test!(
    parallel_refunds_never_give_back_more_than_was_paid,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, key) = paid_invoice(&server, &token, "refund-race").await;
        let replies = futures::future::join_all(
            (0..8).map(|_| refund(&server, &token, &key, Some(json!({"amount": "20.00"})))),
        )
        .await;
        let created = replies
            .iter()
            .filter(|r| r.status == StatusCode::CREATED)
            .count();
        assert_eq!(created, 1, "{replies:?}");
        assert!(replies
            .iter()
            .all(|r| r.status == StatusCode::CREATED || r.status == StatusCode::BAD_REQUEST));
        let after = invoice(&server, &token, &key).await.body;
        assert_eq!(after["amountRefunded"], "20.00");
        // The processor gave back exactly what the ledger shows.
        let given_back = server
            .count(
                "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM sandbox_charges \
                 WHERE kind = 'refund' AND outcome = 'approved' AND idempotency_key LIKE $1",
                "refund:rfnd_%",
            )
            .await;
        assert_eq!(given_back, 2000);
    }
);

backend_matrix!(
    refunds_share_one_ledger_and_one_transaction_id_sequence_with_cashier_orders,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = TestServer::start_with_owned(backend, &receiver.settings()).await;
        let token = server.token().await;
        let (_, key) = paid_invoice(&server, &token, "refund-shared").await;
        let subscription = refund(&server, &token, &key, Some(json!({"amount": "1.00"}))).await;
        assert_eq!(subscription.status, StatusCode::CREATED);

        let url = open_order(&server, "hp-shared", &receiver.url, json!({})).await;
        pay(&visitor(), &url, card("4242424242424242", "101")).await;
        let cashier = secret_post(
            &server,
            "/api/payment/refund",
            &json!({"orderId": "hp-shared", "amount": "2.00"}),
        )
        .await;
        assert_eq!(cashier.status, StatusCode::CREATED, "{}", cashier.body);
        let second = refund(&server, &token, &key, Some(json!({"amount": "3.00"}))).await;

        // Every refund, of either kind, is in the one ledger, under its TransactionId.
        let pool = server.server.state.store.pool();
        let refunds: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM refunds")
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!(refunds, 3);
        let cashier_id = cashier.body["transactionId"].as_i64().unwrap();
        let in_ledger: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM refunds WHERE id = $1 AND cashier_payment_id IS NOT NULL \
             AND status = 'Succeeded' AND amount = 200",
        )
        .bind(cashier_id)
        .fetch_one(pool)
        .await
        .unwrap();
        assert_eq!(in_ledger, 1);

        // No TransactionId is used twice: charges, cashier transactions and subscription refunds
        // draw from one sequence, in the order they happened.
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM charges UNION ALL SELECT id FROM cashier_transactions \
             UNION ALL SELECT id FROM refunds WHERE invoice_id IS NOT NULL",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}");
        let first = subscription.body["transactionId"].as_i64().unwrap();
        let last = second.body["transactionId"].as_i64().unwrap();
        assert!(
            first < cashier_id && cashier_id < last,
            "{first} {cashier_id} {last}"
        );
    }
);

backend_test!(
    a_refund_whose_answer_was_lost_is_completed_once,
    |server: TestServer| async move {
        use recur::processor::RefundRequest;
        use recur::store::{charges, invoices, refunds};

        let token = server.token().await;
        let (_, key) = paid_invoice(&server, &token, "refund-lost").await;
        let state = &server.server.state;
        let pool = state.store.pool();
        let merchant_id = server.merchant.merchant_id;
        let stored = invoices::by_key(pool, merchant_id, &key)
            .await
            .unwrap()
            .unwrap();
        let charge = charges::approved_for_invoice(pool, stored.id)
            .await
            .unwrap()
            .unwrap();
        // Step one committed a Pending refund, the processor gave the money back, and the
        // process died before recording the answer.
        let now = chrono::DateTime::parse_from_rfc3339("2027-03-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let mut tx = state.store.begin().await.unwrap();
        let pending = refunds::insert_pending(
            &mut tx,
            &refunds::NewRefund {
                merchant_id,
                refund_key: "rfnd_lostlostlostlostlostlost",
                refunded: refunds::Refunded::Invoice {
                    invoice_id: stored.id,
                    charge_id: charge.id,
                },
                idempotency_key: "refund:rfnd_lostlostlostlostlostlost",
                amount: 500,
                currency: "EUR",
                reason: None,
            },
            now,
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        state
            .processor
            .refund(RefundRequest {
                merchant_id,
                idempotency_key: &pending.idempotency_key,
                charge_reference: charge.processor_reference.as_deref().unwrap(),
                amount: 500,
                currency: "EUR",
            })
            .await
            .unwrap();

        // The reserved amount counts while the refund is Pending.
        let over = refund(&server, &token, &key, Some(json!({"amount": "25.00"}))).await;
        assert!(over.problem(400).contains_key("amount"));

        // Recovery asks the processor again with the same key and records its first answer.
        let recovered = recur::billing::refunds::recover_pending(state, None, now, now)
            .await
            .unwrap();
        assert_eq!(recovered, 1);
        let again = recur::billing::refunds::recover_pending(state, None, now, now)
            .await
            .unwrap();
        assert_eq!(again, 0);
        let after = invoice(&server, &token, &key).await.body;
        assert_eq!(after["amountRefunded"], "5.00");
        assert_eq!(after["refunds"][0]["status"], "Succeeded");
        let given_back = server
            .count(
                "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM sandbox_charges \
                 WHERE kind = 'refund' AND outcome = 'approved' AND idempotency_key = $1",
                "refund:rfnd_lostlostlostlostlostlost",
            )
            .await;
        assert_eq!(given_back, 500, "given back once");
        let refunds_notified = notices(&server, "refund-lost")
            .await
            .iter()
            .filter(|n| n["TransactionType"] == "Refund")
            .count();
        assert_eq!(refunds_notified, 1);
    }
);
