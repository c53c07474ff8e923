//! Credit is never a negative invoice (DESIGN §4): what a pause, a downgrade or an interval
//! change owes the customer back is a credit note (`CN-…`) naming the invoice that billed the
//! period it comes from, added to the membership's credit balance, which the next charges use
//! first. An interval change's new period is an invoice charged in full, minus credit.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::memberships::{actions, body_for, key, update};
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

/// Every invoice of membership `key` as `GET /invoices` lists it, newest first; each is checked
/// to have a total that is not negative.
async fn listed_invoices(server: &TestServer, token: &str, key: &str) -> Vec<Value> {
    let reply = server
        .call(
            Method::GET,
            &format!("/api/subscriptions/v1/invoices?membershipKey={key}&limit=100"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let invoices = reply.body["data"].as_array().expect("data").clone();
    for invoice in &invoices {
        let total = invoice["total"].as_str().expect("total");
        assert!(!total.starts_with('-'), "a negative invoice: {invoice}");
    }
    invoices
}

/// The invoice record `GET /invoice/{invoice_key}` answers.
async fn invoice(server: &TestServer, token: &str, invoice_key: &Value) -> Value {
    let invoice_key = invoice_key.as_str().expect("invoiceKey");
    let reply = server
        .call(
            Method::GET,
            &format!("/api/subscriptions/v1/invoice/{invoice_key}"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The stored e-mails of `kind` to `to`, oldest first: subject and text body.
async fn mails(server: &TestServer, kind: &str, to: &str) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT subject, text_body FROM emails WHERE kind = $1 AND to_address = $2 ORDER BY id",
    )
    .bind(kind)
    .bind(to)
    .fetch_all(server.server.state.store.pool())
    .await
    .unwrap()
}

/// An Active membership of a new customer `email` (order `order`) priced `pricing`, paid on
/// 2027-04-01 (a 30-day April period), with `tax_rates`.
async fn active(
    server: &TestServer,
    token: &str,
    email: &str,
    pricing: Value,
    tax_rates: Value,
) -> String {
    let mut body = body_for(server, token, email, &format!("order-{email}")).await;
    body["pricingInfo"] = pricing;
    body["taxRateIds"] = tax_rates;
    let record = server
        .active_membership(token, "2027-04-01T00:00:00Z", body)
        .await;
    key(&record)
}

backend_test!(
    a_pause_writes_a_credit_note_and_the_resume_uses_it,
    |server: TestServer| async move {
        let token = server.token().await;
        let tax = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/tax-rates",
                Some(&token),
                Some(json!({"name": "Sales tax", "percentage": "10", "inclusive": false})),
            )
            .await;
        assert_eq!(tax.status, 201, "{}", tax.body);
        let pricing = json!({"currency": "EUR", "totalAmount": "30.00"});
        let email = "cn-pause@example.com";
        let key = active(
            &server,
            &token,
            email,
            pricing,
            json!([tax.body["taxRateId"]]),
        )
        .await;
        server.advance(&token, "2027-04-11T00:00:00Z").await;
        let paused = server
            .call(
                Method::POST,
                &format!("{MEMBERSHIP}/{key}/pause"),
                Some(&token),
                Some(json!({"resumeAt": "2027-05-11T00:00:00"})),
            )
            .await;
        assert_eq!(paused.status, 200, "{}", paused.body);
        let m = &paused.body;
        // 20 of 30 days unused: 20.00 and its 2.00 of tax, credited.
        assert_eq!(m["creditBalance"], "22.00");
        let invoices = m["invoices"].as_array().unwrap();
        assert_eq!(invoices.len(), 1, "no invoice for the credit: {m}");
        let first = &invoices[0];
        assert_eq!(first["kind"], "first");
        assert_eq!(first["total"], "33.00");
        let note = &first["creditNotes"][0];
        assert_eq!(note["number"], "CN-2027-000001");
        assert_eq!(note["amount"], "22.00");
        assert_eq!(note["kind"], "credit");
        assert_eq!(
            note["reason"],
            "Pause: unused time of the current period, credited"
        );
        // The invoice record lists it; nothing was refunded.
        let document = invoice(&server, &token, &first["invoiceKey"]).await;
        assert_eq!(document["creditNotes"].as_array().unwrap().len(), 1);
        assert_eq!(document["creditNotes"][0]["number"], "CN-2027-000001");
        assert_eq!(document["status"], "Paid");
        assert_eq!(document["amountRefunded"], "0.00");
        assert_eq!(listed_invoices(&server, &token, &key).await.len(), 1);
        // The customer gets the credit note; no refund event, only the status change.
        let sent = mails(&server, "credit_note", email).await;
        assert_eq!(sent.len(), 1);
        let number = first["number"].as_str().unwrap();
        assert_eq!(
            sent[0].0,
            format!("Credit note CN-2027-000001 for invoice {number}")
        );
        assert!(sent[0].1.contains("€22.00"), "{}", sent[0].1);
        let order = format!("order-{email}");
        assert_eq!(
            actions(&server.events(&order).await),
            ["charge:Success", "status:Active", "status:Paused"]
        );

        // The resume's period (33.00) takes the credit first: 11.00 is charged.
        server.advance(&token, "2027-05-11T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        let renewal = &m["invoices"][0];
        assert_eq!(renewal["kind"], "renewal");
        assert_eq!(renewal["total"], "33.00");
        assert_eq!(renewal["creditApplied"], "22.00");
        assert_eq!(renewal["amountPaid"], "11.00");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(listed_invoices(&server, &token, &key).await.len(), 2);
    }
);

backend_test!(
    a_downgrade_writes_a_credit_note_and_the_renewal_uses_it,
    |server: TestServer| async move {
        let token = server.token().await;
        let pricing = json!({"currency": "USD", "totalAmount": "100.00"});
        let email = "cn-down@example.com";
        let key = active(&server, &token, email, pricing, json!([])).await;
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let down = update(
            &server,
            &token,
            json!({"membershipKey": key, "pricePerUnit": "60.00"}),
        )
        .await;
        assert_eq!(down.status, 200, "{}", down.body);
        // The answer is as it always was: the signed amount, nothing charged.
        assert_eq!(
            down.body["proration"],
            json!({"amount": "-20.00", "currency": "USD", "transactionId": null})
        );
        let m = &down.body["membership"];
        assert_eq!(m["creditBalance"], "20.00");
        let invoices = m["invoices"].as_array().unwrap();
        assert_eq!(invoices.len(), 1, "no invoice for the credit: {m}");
        let note = &invoices[0]["creditNotes"][0];
        assert_eq!(note["number"], "CN-2027-000001");
        assert_eq!(note["amount"], "20.00");
        assert_eq!(note["kind"], "credit");
        assert!(note["reason"]
            .as_str()
            .unwrap()
            .starts_with("Price change:"));
        assert_eq!(listed_invoices(&server, &token, &key).await.len(), 1);
        assert_eq!(mails(&server, "credit_note", email).await.len(), 1);
        assert_eq!(
            actions(&server.events(&format!("order-{email}")).await),
            ["charge:Success", "status:Active", "SUBSCRIPTION_UPDATED"]
        );

        // The renewal of 60.00 takes the 20.00 first.
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        let renewal = &m["invoices"][0];
        assert_eq!(renewal["kind"], "renewal");
        assert_eq!(renewal["total"], "60.00");
        assert_eq!(renewal["creditApplied"], "20.00");
        assert_eq!(renewal["amountPaid"], "40.00");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(listed_invoices(&server, &token, &key).await.len(), 2);
    }
);

backend_test!(
    an_interval_change_credits_the_unused_time_and_invoices_the_new_period,
    |server: TestServer| async move {
        let token = server.token().await;
        let pricing = json!({"currency": "USD", "totalAmount": "100.00"});
        let key = active(&server, &token, "cn-weekly@example.com", pricing, json!([])).await;
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let reply = update(
            &server,
            &token,
            json!({"membershipKey": key, "intervalType": "Weekly", "pricePerUnit": "10.00"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            reply.body["proration"],
            json!({"amount": "-40.00", "currency": "USD", "transactionId": null})
        );
        let m = &reply.body["membership"];
        assert_eq!(m["creditBalance"], "40.00");
        // The new week, in full, paid by the credit note of the unused half month (50.00).
        let week = &m["invoices"][0];
        assert_eq!(week["kind"], "proration");
        assert_eq!(week["status"], "Paid");
        assert!(week["number"].is_string());
        assert_eq!(week["periodStart"], "2027-04-16T00:00:00Z");
        assert_eq!(week["periodEnd"], "2027-04-23T00:00:00Z");
        assert_eq!(week["total"], "10.00");
        assert_eq!(week["creditApplied"], "10.00");
        assert_eq!(week["amountPaid"], "0.00");
        assert_eq!(week["lines"][1]["description"], "Credit applied");
        assert_eq!(week["creditNotes"], json!([]));
        let first = &m["invoices"][1];
        assert_eq!(first["kind"], "first");
        let note = &first["creditNotes"][0];
        assert_eq!(note["number"], "CN-2027-000001");
        assert_eq!(note["amount"], "50.00");
        assert_eq!(note["kind"], "credit");
        assert!(note["reason"]
            .as_str()
            .unwrap()
            .starts_with("Billing cycle change:"));
        assert_eq!(listed_invoices(&server, &token, &key).await.len(), 2);

        // The next week is paid from what is left.
        server.advance(&token, "2027-04-23T00:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["kind"], "renewal");
        assert_eq!(m["invoices"][0]["creditApplied"], "10.00");
        assert_eq!(m["creditBalance"], "30.00");
        let charges = server
            .count(
                "SELECT COUNT(*) FROM charges c JOIN memberships m ON m.id = c.membership_id \
                 WHERE m.membership_key = $1",
                &key,
            )
            .await;
        assert_eq!(charges, 1, "only the first payment reached the card");
    }
);

backend_test!(
    an_interval_change_charged_to_the_card_credits_only_once_approved,
    |server: TestServer| async move {
        let token = server.token().await;
        let pricing = json!({"currency": "EUR", "totalAmount": "30.00"});
        let yearly = json!({"intervalType": "Annually", "pricePerUnit": "300.00"});
        let email = "cn-yearly@example.com";
        let paid = active(&server, &token, email, pricing.clone(), json!([])).await;
        let declined = active(&server, &token, "cn-no@example.com", pricing, json!([])).await;
        server.advance(&token, "2027-04-16T00:00:00Z").await;

        // The new year (300.00) less the unused half month (15.00): 285.00 from the card.
        let mut body = yearly.clone();
        body["membershipKey"] = json!(paid);
        let reply = update(&server, &token, body).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["proration"]["amount"], "285.00");
        assert!(reply.body["proration"]["transactionId"].is_i64());
        let m = &reply.body["membership"];
        assert_eq!(m["creditBalance"], "0.00");
        let year = &m["invoices"][0];
        assert_eq!(year["total"], "300.00");
        assert_eq!(year["creditApplied"], "15.00");
        assert_eq!(year["amountPaid"], "285.00");
        let note = &m["invoices"][1]["creditNotes"][0];
        assert_eq!(note["number"], "CN-2027-000001");
        assert_eq!(note["amount"], "15.00");
        assert_eq!(note["kind"], "credit");
        // The receipt of the charge lists the credit note.
        let receipts = mails(&server, "receipt", email).await;
        let receipt = &receipts.last().unwrap().1;
        assert!(receipt.contains("Credit note CN-2027-000001"), "{receipt}");
        assert_eq!(listed_invoices(&server, &token, &paid).await.len(), 2);

        // Declined: nothing changes, nothing is credited (the voided invoice's own credit
        // note aside).
        let customer = server.membership(&token, &declined).await["customerKey"].clone();
        server
            .attach_card(&token, customer.as_str().unwrap(), "4000000000000002")
            .await;
        let mut body = yearly;
        body["membershipKey"] = json!(declined);
        update(&server, &token, body).await.problem(402);
        let m = server.membership(&token, &declined).await;
        assert_eq!(m["billingCycle"]["intervalType"], "Monthly");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(m["invoices"][0]["status"], "Void");
        assert_eq!(m["invoices"][0]["creditNotes"][0]["kind"], "void");
        assert_eq!(m["invoices"][1]["creditNotes"], json!([]));
        listed_invoices(&server, &token, &declined).await;
    }
);
