//! The customer's credit-note e-mail (DESIGN §9): a succeeded refund sends one naming the credit
//! note, the amount credited, the invoice it credits, the reason and a signed link to its PDF
//! (signed as the mailer sends it: the outbox holds no working link); a failed refund sends none.
//! A finalized invoice voided by a change that sends its own e-mail (a cancellation) lists its
//! credit note there; voided otherwise (an expiry), it gets a credit-note e-mail.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::invoices::pdf_text;
use crate::fixtures::INVOICE;
use crate::harness::TestServer;
use crate::receivers::eventually;

/// The stored e-mails of `kind` to `to`: id, subject, text and HTML bodies, oldest first.
async fn stored(server: &TestServer, kind: &str, to: &str) -> Vec<(i64, String, String, String)> {
    sqlx::query_as(
        "SELECT id, subject, text_body, html_body FROM emails WHERE kind = $1 \
         AND to_address = $2 ORDER BY id",
    )
    .bind(kind)
    .bind(to)
    .fetch_all(server.server.state.store.pool())
    .await
    .unwrap()
}

/// The e-mail `id` as the mailer wrote it (`.eml`), its quoted-printable encoding undone as far
/// as links need.
async fn sent(server: &TestServer, id: i64) -> String {
    let path = server
        .data_dir()
        .join("mail")
        .join(format!("email-{id}.eml"));
    eventually(|| path.exists()).await;
    std::fs::read_to_string(&path)
        .unwrap()
        .replace("=\r\n", "")
        .replace("=3D", "=")
}

/// The signed credit-note PDF links in `text`.
fn pdf_links(text: &str) -> Vec<String> {
    regex::Regex::new(
        r"http://[0-9.:]+/documents/credit-notes/cn_[A-Za-z0-9]+/pdf\?[A-Za-z0-9=&;_.-]+",
    )
    .unwrap()
    .find_iter(text)
    .map(|m| m.as_str().replace("&amp;", "&"))
    .collect()
}

/// A Paid invoice of a new customer `email`: its key.
async fn paid_invoice(server: &TestServer, token: &str, email: &str) -> String {
    let customer = server.create_customer(token, email).await;
    let record = server
        .active_membership(
            token,
            "2027-03-01T00:00:00Z",
            server.membership_body(&customer, email),
        )
        .await;
    record["invoices"][0]["invoiceKey"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn refund(server: &TestServer, token: &str, key: &str, body: Value) -> Value {
    let reply = server
        .call(
            Method::POST,
            &format!("{INVOICE}/{key}/refund"),
            Some(token),
            Some(body),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

backend_test!(
    a_refund_emails_its_credit_note_with_a_pdf_link,
    |server: TestServer| async move {
        let token = server.token().await;
        let to = "cnm-1@example.com";
        let key = paid_invoice(&server, &token, to).await;
        let done = refund(
            &server,
            &token,
            &key,
            json!({"amount": "10.00", "reason": "a seat was never used"}),
        )
        .await;
        assert_eq!(done["status"], "Succeeded");

        let mails = stored(&server, "credit_note", to).await;
        assert_eq!(mails.len(), 1, "one credit-note e-mail");
        let (id, subject, text, html) = &mails[0];
        assert_eq!(
            subject,
            "Credit note CN-2027-000001 for invoice INV-2027-000001"
        );
        for body in [text, html] {
            for shown in [
                "CN-2027-000001",
                "10.00",
                "INV-2027-000001",
                "a seat was never used",
                "Test Merchant",
            ] {
                assert!(body.contains(shown), "{shown}: {body}");
            }
            assert!(!body.contains("signature="), "the outbox holds no link");
        }

        // As sent, both parts carry the signed link; it works without a token.
        let message = sent(&server, *id).await;
        let links = pdf_links(&message);
        assert_eq!(links.len(), 2, "text and HTML: {message}");
        assert_eq!(links[0], links[1]);
        let response = reqwest::get(&links[0]).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "application/pdf"
        );
        let pdf = pdf_text(&response.bytes().await.unwrap());
        assert!(pdf.contains("CN-2027-000001"), "{pdf}");

        // Without a reason, the e-mail gives none.
        refund(&server, &token, &key, json!({"amount": "1.00"})).await;
        let mails = stored(&server, "credit_note", to).await;
        assert_eq!(mails.len(), 2);
        assert!(mails[1].2.contains("CN-2027-000002"), "{}", mails[1].2);
        assert!(!mails[1].2.contains("Reason"), "{}", mails[1].2);
    }
);

backend_test!(
    a_failed_refund_sends_no_credit_note_email,
    |server: TestServer| async move {
        let token = server.token().await;
        let to = "cnm-2@example.com";
        let key = paid_invoice(&server, &token, to).await;
        // The processor holds less of the charge than recur believes: it refuses the refund.
        sqlx::query(
            "UPDATE sandbox_charges SET amount = 100 WHERE kind = 'charge' AND reference IN \
             (SELECT c.processor_reference FROM charges c JOIN invoices i \
             ON i.id = c.invoice_id WHERE i.invoice_key = $1)",
        )
        .bind(&key)
        .execute(server.server.state.store.pool())
        .await
        .unwrap();
        let done = refund(&server, &token, &key, json!({"amount": "5.00"})).await;
        assert_eq!(done["status"], "Failed", "{done}");
        assert!(stored(&server, "credit_note", to).await.is_empty());
        assert_eq!(
            server
                .count("SELECT COUNT(*) FROM emails WHERE kind = $1", "credit_note")
                .await,
            0
        );
    }
);

backend_test!(
    a_voided_invoice_lists_its_credit_note_in_the_cancellation_or_its_own_email,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-06-01T00:00:00Z").await;
        // Two memberships whose first charge is declined: finalized, numbered, Open.
        let mut keys = Vec::new();
        for to in ["cnm-3@example.com", "cnm-4@example.com"] {
            let customer = server.create_customer(&token, to).await;
            server
                .attach_card(&token, &customer, "4000000000000002")
                .await;
            let created = server
                .create_membership(&token, server.membership_body(&customer, to))
                .await;
            let key = created["membershipKey"].as_str().unwrap().to_string();
            assert_eq!(
                server.pay(&token, &key).await.status,
                StatusCode::PAYMENT_REQUIRED
            );
            keys.push(key);
        }

        // Canceled: the cancellation e-mail lists the credit note; no second e-mail.
        let reply = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{}", keys[0]),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let canceled = stored(&server, "canceled", "cnm-3@example.com").await;
        assert_eq!(canceled.len(), 1);
        let (id, _, text, _) = &canceled[0];
        assert!(
            text.contains("Credit note CN-2027-000001 for invoice INV-2027-000001"),
            "{text}"
        );
        assert!(text.contains("the membership was canceled"), "{text}");
        assert!(stored(&server, "credit_note", "cnm-3@example.com")
            .await
            .is_empty());
        assert_eq!(pdf_links(&sent(&server, *id).await).len(), 2);

        // Expired unpaid: its own credit-note e-mail.
        server.advance(&token, "2027-06-02T00:00:00Z").await;
        assert_eq!(
            server.membership(&token, &keys[1]).await["status"],
            "Expired"
        );
        let mails = stored(&server, "credit_note", "cnm-4@example.com").await;
        assert_eq!(mails.len(), 1);
        assert_eq!(
            mails[0].1,
            "Credit note CN-2027-000002 for invoice INV-2027-000002"
        );
        assert!(
            mails[0].2.contains("the membership expired unpaid"),
            "{}",
            mails[0].2
        );
    }
);
