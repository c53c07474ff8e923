//! Who sells and who buys, on every invoice (DESIGN §13, §14): the seller's legal name, address,
//! country and tax id from the merchant settings, the customer's address and VAT id, on the
//! invoice page, in its PDF, and in the footer of the invoice e-mails.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_test;
use crate::fixtures::checkout::open;
use crate::fixtures::invoices::pdf_text;
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// The invoice page and PDF of `customer`'s first invoice, seen in the portal.
async fn invoice_page_and_pdf(
    server: &TestServer,
    token: &str,
    customer: &str,
    invoice: &str,
) -> (String, String) {
    let session = open(
        server,
        token,
        "/api/subscriptions/v1/portal/session",
        json!({"customerKey": customer}),
    )
    .await;
    let portal = session["portalRedirectUrl"].as_str().unwrap();
    let visitor = Visitor::new();
    let page = visitor.get(&format!("{portal}/invoices/{invoice}")).await;
    assert_eq!(page.status, StatusCode::OK);
    let pdf = visitor
        .client
        .get(format!("{portal}/invoices/{invoice}/pdf"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    (page.text, pdf_text(&pdf))
}

/// The text and HTML bodies of the e-mail sent to `email`.
async fn email_bodies(server: &TestServer, email: &str) -> (String, String) {
    sqlx::query_as("SELECT text_body, html_body FROM emails WHERE to_address = $1")
        .bind(email)
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap()
}

/// A paid membership of a new customer `email`; the customer's and the invoice's keys.
async fn paid(server: &TestServer, token: &str, email: &str, start: &str) -> (String, String) {
    let customer = server.create_customer(token, email).await;
    let active = server
        .active_membership(token, start, server.membership_body(&customer, email))
        .await;
    let invoice = active["invoices"][0]["invoiceKey"].as_str().unwrap();
    (customer, invoice.to_string())
}

backend_test!(
    invoices_name_the_seller_and_the_buyer,
    |server: TestServer| async move {
        let token = server.token().await;

        // No settings: the seller is the merchant's name, with no address or tax id.
        let (customer, invoice) =
            paid(&server, &token, "first@example.com", "2027-03-01T00:00:00Z").await;
        let (html, pdf) = invoice_page_and_pdf(&server, &token, &customer, &invoice).await;
        assert!(html.contains("<strong>Test Merchant</strong>"), "{html}");
        assert!(!html.contains("Tax ID"));
        assert!(
            pdf.contains("From") && pdf.contains("Test Merchant"),
            "{pdf}"
        );
        let (text, _) = email_bodies(&server, "first@example.com").await;
        assert!(
            text.ends_with("Test Merchant, billed by recur\nTest Merchant\n"),
            "{text}"
        );

        let reply = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&token),
                Some(json!({
                    "displayName": "Acme Coffee",
                    "legalName": "Acme Kaffee Rösterei GmbH",
                    "address": "Hauptstraße 5\n80331 München",
                    "country": "de",
                    "taxId": "DE811907980",
                    "supportEmail": "help@acme.example"
                })),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let (customer, invoice) = paid(
            &server,
            &token,
            "second@example.com",
            "2027-03-02T00:00:00Z",
        )
        .await;
        let (html, pdf) = invoice_page_and_pdf(&server, &token, &customer, &invoice).await;
        for expected in [
            "<strong>Acme Kaffee Rösterei GmbH</strong><br>Hauptstraße 5<br>80331 München<br>DE<br>Tax ID: DE811907980",
            // The customer (harness): address, country and the EU VAT id from `taxIds`.
            "Ada Lovelace<br>second@example.com<br>Main Street 1<br>10115 Berlin<br>DE<br>VAT ID: DE123456789",
        ] {
            assert!(html.contains(expected), "{expected} in {html}");
        }
        for expected in [
            "Acme Coffee",
            "Acme Kaffee Rösterei GmbH",
            "Hauptstraße 5",
            "80331 München",
            "Tax ID: DE811907980",
            "Ada Lovelace",
            "Main Street 1",
            "VAT ID: DE123456789",
            "INV-2027-000002",
            "€29.97",
            "2 Mar 2027 – 2 Apr 2027",
        ] {
            assert!(pdf.contains(expected), "{expected} in {pdf}");
        }

        // The receipt's footer: legal name, address and support e-mail.
        let (text, html) = email_bodies(&server, "second@example.com").await;
        assert!(
            text.ends_with(
                "Acme Coffee, billed by recur\n\
                 Acme Kaffee Rösterei GmbH, Hauptstraße 5, 80331 München, DE\n\
                 help@acme.example\n"
            ),
            "{text}"
        );
        assert!(
            html.contains(
                "Acme Kaffee Rösterei GmbH · Hauptstraße 5, 80331 München, DE · help@acme.example</p>"
            ),
            "{html}"
        );
    }
);
