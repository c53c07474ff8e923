//! Credit notes (DESIGN §9): each succeeded refund writes one, numbered `CN-{YYYY}-{NNNNNN}`;
//! voiding a finalized invoice writes one for its amount while the invoice keeps its number; an
//! unnumbered invoice voids without one. The invoice record lists them with signed `pdfUrl`s
//! that work without a token, and a forged or altered link is the 404 page. Parallel refunds, in
//! one process or two on PostgreSQL, take every credit-note number once.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::invoices::pdf_text;
use crate::fixtures::INVOICE;
use crate::harness::TestServer;

async fn invoice(server: &TestServer, token: &str, key: &str) -> Value {
    let reply = server
        .call(Method::GET, &format!("{INVOICE}/{key}"), Some(token), None)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// `GET url` without any credentials: its status, content type and body.
async fn fetch(url: &str) -> (StatusCode, String, Vec<u8>) {
    let response = reqwest::get(url).await.expect("GET");
    let status = response.status();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, kind, response.bytes().await.unwrap().to_vec())
}

backend_test!(
    refunds_write_numbered_credit_notes_with_signed_pdfs,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "cn-1@example.com").await;
        let record = server
            .active_membership(
                &token,
                "2027-03-01T00:00:00Z",
                server.membership_body(&customer, "cn-1"),
            )
            .await;
        let key = record["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();

        let mut keys = Vec::new();
        for (amount, reason) in [("10.00", "a seat was never used"), ("5.00", "goodwill")] {
            let reply = server
                .call(
                    Method::POST,
                    &format!("{INVOICE}/{key}/refund"),
                    Some(&token),
                    Some(json!({"amount": amount, "reason": reason})),
                )
                .await;
            assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
            let note = reply.body["creditNoteKey"].as_str().expect("creditNoteKey");
            assert!(note.starts_with("cn_") && note.len() == 3 + 24, "{note}");
            keys.push(note.to_string());
        }

        let body = invoice(&server, &token, &key).await;
        assert_eq!(body["number"], "INV-2027-000001");
        let notes = body["creditNotes"].as_array().expect("creditNotes");
        assert_eq!(notes.len(), 2, "{body}");
        assert_eq!(notes[0]["creditNoteKey"], keys[0].as_str());
        assert_eq!(notes[0]["number"], "CN-2027-000001");
        assert_eq!(notes[0]["amount"], "10.00");
        assert_eq!(notes[0]["reason"], "a seat was never used");
        assert_eq!(notes[0]["kind"], "refund");
        assert_eq!(notes[0]["createdAt"], "2027-03-01T00:00:00Z");
        assert_eq!(notes[1]["number"], "CN-2027-000002");
        assert_eq!(body["refunds"][1]["creditNoteKey"], keys[1].as_str());

        // The links work without a token; the PDFs say what they document.
        let (status, kind, pdf) = fetch(body["pdfUrl"].as_str().unwrap()).await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/pdf"));
        assert!(pdf_text(&pdf).contains("INV-2027-000001"));
        let note_url = notes[0]["pdfUrl"].as_str().unwrap();
        let (status, kind, pdf) = fetch(note_url).await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/pdf"));
        let text = pdf_text(&pdf);
        for shown in ["CN-2027-000001", "INV-2027-000001", "a seat was never used"] {
            assert!(text.contains(shown), "{shown}: {text}");
        }

        // The portal's invoice page lists them with their signed links.
        let session = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/portal/session",
                Some(&token),
                Some(json!({"customerKey": customer})),
            )
            .await;
        let portal = session.body["portalRedirectUrl"]
            .as_str()
            .unwrap()
            .to_string();
        let visitor = crate::visitor::Visitor::new();
        let page = visitor.get(&format!("{portal}/invoices/{key}")).await;
        assert_eq!(page.status, StatusCode::OK);
        for shown in [
            "INV-2027-000001",
            "CN-2027-000001",
            "CN-2027-000002",
            "goodwill",
        ] {
            assert!(page.text.contains(shown), "{shown}: {}", page.text);
        }
        assert!(page
            .text
            .contains(&format!("credit-notes&#x2f;{}&#x2f;pdf?", keys[0])));

        // The membership record's invoices carry them too, in the single read and in the list.
        let membership = record["membershipKey"].as_str().unwrap();
        let read = server.membership(&token, membership).await;
        let listed = crate::fixtures::lists::page(&server, &token, "/memberships").await;
        for invoices in [&read["invoices"], &listed["data"][0]["invoices"]] {
            let first = invoices.as_array().unwrap().last().unwrap();
            assert_eq!(first["number"], "INV-2027-000001");
            assert_eq!(
                first["creditNotes"][0]["number"], "CN-2027-000001",
                "{first}"
            );
            assert_eq!(first["creditNotes"][1]["reason"], "goodwill");
            assert!(first["creditNotes"][0]["pdfUrl"]
                .as_str()
                .unwrap()
                .contains("/documents/credit-notes/"));
        }

        // The receipt e-mail names the invoice by its number.
        let receipts = server
            .count(
                "SELECT COUNT(*) FROM emails WHERE kind = 'receipt' AND text_body LIKE $1",
                "%Invoice INV-2027-000001%",
            )
            .await;
        assert_eq!(receipts, 1);

        // An altered signature, another document under the same signature, or a later expiry:
        // the 404 page.
        let forged = note_url.replace("signature=", "signature=0");
        let swapped = note_url.replace(&keys[0], &keys[1]);
        let extended = note_url.replace("expires=", "expires=9");
        for url in [forged, swapped, extended] {
            assert_eq!(fetch(&url).await.0, StatusCode::NOT_FOUND, "{url}");
        }
        // The OpenAPI document describes them.
        let doc = server
            .call(Method::GET, "/openapi.json", None, None)
            .await
            .body;
        let schemas = &doc["components"]["schemas"];
        assert!(
            schemas["CreditNoteRecord"]["properties"]["pdfUrl"].is_object(),
            "{schemas}"
        );
        assert!(schemas["RefundRecord"]["properties"]["creditNoteKey"].is_object());
        assert!(schemas["InvoiceRecord"]["properties"]["number"].is_object());

        // Another merchant's token cannot read them by key either.
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        let foreign = server
            .call(
                Method::GET,
                &format!("{INVOICE}/{key}"),
                Some(&other_token),
                None,
            )
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    }
);

backend_test!(
    voiding_a_finalized_invoice_writes_a_credit_note_and_keeps_its_number,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        // Declined: the first invoice is finalized (numbered) and stays Open.
        let customer = server.create_customer(&token, "cn-2@example.com").await;
        server
            .attach_card(&token, &customer, "4000000000000002")
            .await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "cn-2"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        assert_eq!(
            server.pay(&token, &key).await.status,
            StatusCode::PAYMENT_REQUIRED
        );
        // Never attempted: no number, and voiding it writes nothing.
        let quiet = server.create_customer(&token, "cn-3@example.com").await;
        let unattempted = server
            .create_membership(&token, server.membership_body(&quiet, "cn-3"))
            .await;
        let unattempted = unattempted["membershipKey"].as_str().unwrap().to_string();

        for membership in [&key, &unattempted] {
            let reply = server
                .call(
                    Method::POST,
                    &format!("/api/subscriptions/v1/membership/cancel/{membership}"),
                    Some(&token),
                    None,
                )
                .await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        }
        let voided = server.membership(&token, &key).await["invoices"][0].clone();
        assert_eq!(voided["status"], "Void");
        assert_eq!(voided["number"], "INV-2027-000001");
        let body = invoice(&server, &token, voided["invoiceKey"].as_str().unwrap()).await;
        let notes = body["creditNotes"].as_array().unwrap();
        assert_eq!(notes.len(), 1, "{body}");
        assert_eq!(notes[0]["number"], "CN-2027-000001");
        assert_eq!(notes[0]["kind"], "void");
        assert_eq!(notes[0]["amount"], "29.97");
        assert_eq!(notes[0]["reason"], "the membership was canceled");
        assert_eq!(
            server
                .count("SELECT COUNT(*) FROM credit_notes WHERE kind = $1", "void")
                .await,
            1,
            "the unnumbered invoice voided without a credit note"
        );
    }
);

backend_test!(
    parallel_refunds_in_one_or_two_processes_number_their_credit_notes_without_gaps,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut invoices = Vec::new();
        for i in 0..8 {
            let customer = server
                .create_customer(&token, &format!("cn-race-{i}@example.com"))
                .await;
            let record = server
                .active_membership(
                    &token,
                    "2027-09-01T00:00:00Z",
                    server.membership_body(&customer, &format!("cn-race-{i}")),
                )
                .await;
            invoices.push(
                record["invoices"][0]["invoiceKey"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        // Two processes on PostgreSQL; on SQLite (one process per file) one.
        let second = match server.server.state.store.backend() {
            recur::store::Backend::Postgres => Some(server.second_process().await),
            recur::store::Backend::Sqlite => None,
        };
        let other = second.as_ref().unwrap_or(&server);
        let token = &token;
        let replies = futures::future::join_all(invoices.iter().enumerate().map(|(i, key)| {
            let target = if i % 2 == 0 { &server } else { other };
            let path = format!("{INVOICE}/{key}/refund");
            async move {
                target
                    .call(
                        Method::POST,
                        &path,
                        Some(token),
                        Some(json!({"amount": "1.00"})),
                    )
                    .await
            }
        }))
        .await;
        let mut numbers = Vec::new();
        for (reply, key) in replies.iter().zip(&invoices) {
            assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
            let body = invoice(&server, token, key).await;
            numbers.push(
                body["creditNotes"][0]["number"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        crate::fixtures::invoices::assert_gap_free(&numbers, "CN");
    }
);
