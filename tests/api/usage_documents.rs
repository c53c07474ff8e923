//! A renewal's usage lines (DESIGN §19) in every document that shows the invoice, on both
//! databases: the invoice record, the portal's invoice page, its PDF (signed `pdfUrl`, read back
//! with `pdftotext`), the receipt e-mail, and the webhook that carries the membership's invoices.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::checkout::open;
use crate::fixtures::invoices::pdf_text;
use crate::fixtures::usage::{count_events, invoice, meter, metered_price, recorded};
use crate::fixtures::webhooks::server_with;
use crate::harness::{Backend, TestServer};
use crate::receivers::{eventually, WebhookReceiver};
use crate::visitor::Visitor;

/// The usage lines of the renewal: description, meter code, quantity, amount.
const USAGE_LINES: [(&str, &str, &str, &str); 2] = [
    ("API calls × 1000", "api_calls", "1000", "4.00"),
    ("Storage GB × 15.75", "storage", "15.75", "2.88"),
];

/// An Active membership (from 2030-01-01) of a new customer `email`, notifying `webhook`,
/// billing API calls at 0.004 and storage above 10 GB at 0.50 beside its fixed price, with
/// January's usage recorded (1,000 calls, 15.75 GB) and renewed on 2030-02-01. Returns the
/// customer's key and the renewal invoice's record.
async fn renewed_with_usage(
    server: &TestServer,
    token: &str,
    email: &str,
    webhook: &str,
) -> (String, Value) {
    server.advance(token, "2030-01-01T00:00:00Z").await;
    let calls = meter(
        server,
        token,
        json!({"code": "api_calls", "name": "API calls", "aggregation": "count"}),
    )
    .await;
    let storage = meter(
        server,
        token,
        json!({"code": "storage", "name": "Storage GB", "aggregation": "sum", "property": "gb"}),
    )
    .await;
    let per_call = metered_price(server, token, &calls, json!({"unitAmount": "0.004"})).await;
    let per_gb = metered_price(
        server,
        token,
        &storage,
        json!({"tiersMode": "graduated", "tiers": [
            {"upTo": 10, "unitAmount": "0"}, {"upTo": null, "unitAmount": "0.50"}]}),
    )
    .await;
    let customer = server.create_customer(token, email).await;
    let mut body = server.membership_body(&customer, "usage-docs-1");
    body["webhookUrl"] = json!(webhook);
    body["meteredPriceIds"] = json!([per_call, per_gb]);
    let m = server
        .active_membership(token, "2030-01-01T00:00:00Z", body)
        .await;
    let key = m["membershipKey"].as_str().unwrap().to_string();
    server.advance(token, "2030-01-20T00:00:00Z").await;
    let calls_events = count_events("call", 1000, &key, "api_calls", "2030-01-10T00:00:00");
    assert_eq!(recorded(server, token, calls_events).await, (1000, 0));
    let gb = json!([
        {"transactionId": "gb-1", "membershipKey": key, "code": "storage",
            "timestamp": "2030-01-11T00:00:00", "properties": {"gb": 12.5}},
        {"transactionId": "gb-2", "membershipKey": key, "code": "storage",
            "timestamp": "2030-01-12T00:00:00", "properties": {"gb": "3.25"}}
    ]);
    assert_eq!(recorded(server, token, gb).await, (2, 0));
    server.advance(token, "2030-02-01T00:00:01Z").await;
    let renewed = server.membership(token, &key).await;
    let renewal = renewed["invoices"][0]["invoiceKey"].as_str().unwrap();
    (customer, invoice(server, token, renewal).await)
}

/// Asserts that `text` shows each usage line's description next to its amount as `amount`
/// formats it, in order, after the fixed price's line.
fn shows_usage_lines(text: &str, what: &str, amount: impl Fn(&str) -> String) {
    let mut from = text
        .find("Gold plan")
        .unwrap_or_else(|| panic!("the fixed price's line in the {what}: {text}"));
    for (description, _, _, value) in USAGE_LINES {
        let at = text[from..]
            .find(description)
            .unwrap_or_else(|| panic!("{description} in the {what}: {text}"))
            + from;
        let shown = amount(value);
        let price = text[at..]
            .find(&shown)
            .unwrap_or_else(|| panic!("{shown} after {description} in the {what}: {text}"));
        // The amount is the line's own: no other line starts between them.
        assert!(
            !text[at + description.len()..at + price].contains(" × "),
            "{description} and {shown} apart in the {what}: {text}"
        );
        from = at + price;
    }
}

backend_matrix!(
    usage_lines_show_on_every_document_of_the_invoice,
    |backend: Backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let token = server.token().await;
        let email = "usage-docs@example.com";
        let (customer, record) = renewed_with_usage(&server, &token, email, &receiver.url).await;
        let invoice_key = record["invoiceKey"].as_str().unwrap().to_string();
        let number = record["number"].as_str().unwrap().to_string();
        assert_eq!(record["status"], "Paid", "{record}");

        // The record: one line per meter after the fixed price's.
        let lines = record["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 3, "{record}");
        assert!(lines[0].get("meterCode").is_none() && lines[0].get("quantity").is_none());
        for (line, (description, code, quantity, amount)) in lines[1..].iter().zip(USAGE_LINES) {
            assert_eq!(line["description"], description, "{record}");
            assert_eq!(line["meterCode"], code);
            assert_eq!(line["quantity"], quantity);
            assert_eq!(line["amount"], amount);
        }
        assert_eq!(record["subtotal"], "36.85");

        // The portal's invoice page.
        let session = open(
            &server,
            &token,
            "/api/subscriptions/v1/portal/session",
            json!({"customerKey": customer}),
        )
        .await;
        let portal = session["portalRedirectUrl"].as_str().unwrap();
        let visitor = Visitor::new();
        let page = visitor
            .get(&format!("{portal}/invoices/{invoice_key}"))
            .await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains(&number), "{}", page.text);
        shows_usage_lines(&page.text, "invoice page", |a| format!("€{a}"));

        // The PDF behind the record's signed link, without a token.
        let pdf = visitor
            .client
            .get(record["pdfUrl"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(pdf.status(), StatusCode::OK);
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        let text = pdf_text(&pdf.bytes().await.unwrap());
        assert!(text.contains(&number), "{text}");
        shows_usage_lines(&text, "PDF", |a| format!("€{a}"));

        // The renewal's receipt, text and HTML.
        let (text_body, html_body): (String, String) = sqlx::query_as(
            "SELECT text_body, html_body FROM emails WHERE kind = 'receipt' \
             AND to_address = $1 AND text_body LIKE $2",
        )
        .bind(email)
        .bind(format!("%{number}%"))
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        shows_usage_lines(&text_body, "receipt", |a| format!("€{a}"));
        assert!(text_body.contains("API calls × 1000: €4.00"), "{text_body}");
        shows_usage_lines(&html_body, "HTML receipt", |a| format!("€{a}"));

        // The webhook of the renewal's charge carries the invoice with its lines.
        let charged = || {
            receiver.received().iter().map(|r| r.json()).find(|body| {
                body["Action"] == "TRANSACTION_DATA_UPDATE"
                    && body["SubscriptionInvoiceId"] == invoice_key.as_str()
            })
        };
        eventually(|| charged().is_some()).await;
        let payload = charged().unwrap();
        let invoices = payload["Membership"]["Invoices"].as_array().unwrap();
        let billed = invoices
            .iter()
            .find(|i| i["InvoiceId"] == invoice_key.as_str())
            .unwrap_or_else(|| panic!("the renewal in {payload}"));
        let lines = billed["Lines"]
            .as_array()
            .unwrap_or_else(|| panic!("Lines in {billed}"));
        assert_eq!(lines.len(), 3, "{billed}");
        assert_eq!(lines[0]["Description"], record["lines"][0]["description"]);
        assert_eq!(lines[0]["Amount"], "29.97");
        assert_eq!(lines[0]["MeterCode"], Value::Null);
        assert_eq!(lines[0]["Quantity"], Value::Null);
        for (line, (description, code, quantity, amount)) in lines[1..].iter().zip(USAGE_LINES) {
            assert_eq!(line["Description"], description, "{billed}");
            assert_eq!(line["MeterCode"], code);
            assert_eq!(line["Quantity"], quantity);
            assert_eq!(line["Amount"], amount);
        }
        assert_eq!(billed["Subtotal"], "36.85");
    }
);
