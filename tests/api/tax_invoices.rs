//! Taxes on invoices (DESIGN §14, §9): exclusive and inclusive rates on first invoices and
//! renewals, several rates, JPY, proration and credit, reverse charge.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::rate;
use crate::fixtures::checkout::open;
use crate::fixtures::invoices::pdf_text;
use crate::fixtures::memberships::{key, update};
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// The membership's newest invoice.
async fn newest_invoice(server: &TestServer, token: &str, key: &str) -> Value {
    server.membership(token, key).await["invoices"][0].clone()
}

fn tax_amounts(invoice: &Value) -> Vec<String> {
    invoice["taxes"]
        .as_array()
        .expect("taxes")
        .iter()
        .map(|t| t["amount"].as_str().expect("amount").to_string())
        .collect()
}

backend_test!(
    exclusive_taxes_are_added_on_first_invoice_and_renewal,
    |server: TestServer| async move {
        let token = server.token().await;
        let vat = rate(
            &server,
            &token,
            json!({"name": "VAT", "percentage": "19", "inclusive": false}),
        )
        .await;
        let extra = rate(
            &server,
            &token,
            json!({"name": "Levy", "percentage": "7.0", "inclusive": false}),
        )
        .await;
        let customer = server.create_customer(&token, "excl@example.com").await;
        let mut body = server.membership_body(&customer, "order-excl");
        body["taxRateIds"] = json!([vat, extra]);

        // The hosted checkout shows each tax of what is due today.
        let mut pending = server.membership_body(&customer, "order-excl-checkout");
        pending["taxRateIds"] = json!([vat, extra]);
        let incomplete = server.create_membership(&token, pending).await;
        let session = open(
            &server,
            &token,
            "/api/subscriptions/v1/checkout/session",
            json!({"customerKey": customer, "membershipKey": key(&incomplete)}),
        )
        .await;
        let page = Visitor::new()
            .get(session["checkoutRedirectUrl"].as_str().unwrap())
            .await;
        assert_eq!(page.status, 200);
        for shown in ["VAT 19 %", "€5.69", "Levy 7 %", "€2.10"] {
            assert!(page.text.contains(shown), "{shown}: {}", page.text);
        }
        assert_eq!(page.text.matches("data-testid=\"tax\"").count(), 2);
        assert!(page.text.contains("data-testid=\"due-today\">€37.76<"));

        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        let first = newest_invoice(&server, &token, &key).await;
        // 29.97 × 19 % = 5.6943 → 5.69; × 7 % = 2.0979 → 2.10.
        assert_eq!(first["subtotal"], "29.97");
        assert_eq!(first["discount"], "0.00");
        assert_eq!(tax_amounts(&first), ["5.69", "2.10"]);
        assert_eq!(first["taxes"][0]["taxRateId"], vat.as_str());
        assert_eq!(first["taxes"][0]["name"], "VAT");
        assert_eq!(first["taxes"][0]["percentage"], "19");
        assert_eq!(first["taxes"][0]["inclusive"], false);
        assert_eq!(first["total"], "37.76");
        assert_eq!(first["amountPaid"], "37.76");
        assert_eq!(first["reverseCharge"], false);
        let document = server
            .call(
                Method::GET,
                &format!(
                    "/api/subscriptions/v1/invoice/{}",
                    first["invoiceKey"].as_str().unwrap()
                ),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(document.status, 200, "{}", document.body);
        assert_eq!(document.body["total"], "37.76");
        assert_eq!(document.body["taxes"], first["taxes"]);
        // The webhooks' Membership object carries the taxes of its invoices.
        let events = server.events("order-excl").await;
        let invoice = &events.last().unwrap()["Membership"]["Invoices"][0];
        assert_eq!(invoice["Total"], "37.76", "{invoice}");
        assert_eq!(invoice["Discount"], "0.00");
        assert_eq!(invoice["ReverseCharge"], false);
        assert_eq!(invoice["Taxes"][0]["TaxRateId"], vat.as_str());
        assert_eq!(invoice["Taxes"][0]["Percentage"], "19");
        assert_eq!(invoice["Taxes"][1]["Amount"], "2.10");

        // A change of rates applies from the next invoice, without proration.
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        let changed = update(
            &server,
            &token,
            json!({"membershipKey": key, "taxRateIds": [extra]}),
        )
        .await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        assert_eq!(changed.body["proration"], Value::Null);
        assert_eq!(changed.body["membership"]["taxRateIds"], json!([extra]));
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let renewal = newest_invoice(&server, &token, &key).await;
        assert_eq!(renewal["kind"], "renewal");
        assert_eq!(tax_amounts(&renewal), ["2.10"]);
        assert_eq!(renewal["total"], "32.07");
        assert_eq!(renewal["amountPaid"], "32.07");
        assert_eq!(renewal["status"], "Paid");
    }
);

backend_test!(
    inclusive_taxes_are_contained_in_jpy,
    |server: TestServer| async move {
        let token = server.token().await;
        let national = rate(
            &server,
            &token,
            json!({"name": "Consumption", "percentage": "10", "inclusive": true}),
        )
        .await;
        let local = rate(
            &server,
            &token,
            json!({"name": "Local", "percentage": "8", "inclusive": true}),
        )
        .await;
        let customer = server.create_customer(&token, "jpy@example.com").await;
        let mut body = server.membership_body(&customer, "order-jpy");
        body["pricingInfo"] = json!({"currency": "JPY", "totalAmount": "1000"});
        body["taxRateIds"] = json!([national, local]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        // One divisor, 100 + 10 + 8: ¥1000 × 10 / 118 = 84.7 → 85; × 8 / 118 = 67.8 → 68.
        for invoice in [newest_invoice(&server, &token, &key).await, {
            server.advance(&token, "2027-05-01T00:00:00Z").await;
            newest_invoice(&server, &token, &key).await
        }] {
            assert_eq!(tax_amounts(&invoice), ["85", "68"], "{invoice}");
            assert_eq!(invoice["taxes"][1]["inclusive"], true);
            assert_eq!(invoice["subtotal"], "1000");
            assert_eq!(invoice["total"], "1000");
            assert_eq!(invoice["amountPaid"], "1000");
        }
        let invoices = server.membership(&token, &key).await["invoices"].clone();
        assert_eq!(invoices[0]["kind"], "renewal");
        assert_eq!(invoices[1]["kind"], "first");
    }
);

backend_test!(
    prorations_are_taxed_and_credit_their_total,
    |server: TestServer| async move {
        let token = server.token().await;
        let tax = rate(
            &server,
            &token,
            json!({"name": "Sales tax", "percentage": "10", "inclusive": false}),
        )
        .await;
        let customer = server.create_customer(&token, "prorate@example.com").await;
        let mut body = server.membership_body(&customer, "order-prorate");
        body["pricingInfo"] = json!({"currency": "USD", "totalAmount": "100.00"});
        body["taxRateIds"] = json!([tax]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let key = key(&record);
        assert_eq!(
            newest_invoice(&server, &token, &key).await["total"],
            "110.00"
        );
        server.advance(&token, "2027-04-16T00:00:00Z").await;
        // Half the period left: 50.00 more, 5.00 of tax, 55.00 charged.
        let up = update(
            &server,
            &token,
            json!({"membershipKey": key, "pricePerUnit": "200.00"}),
        )
        .await;
        assert_eq!(up.status, 200, "{}", up.body);
        assert_eq!(up.body["proration"]["amount"], "55.00");
        let invoice = &up.body["membership"]["invoices"][0];
        assert_eq!(invoice["kind"], "proration");
        assert_eq!(invoice["subtotal"], "50.00");
        assert_eq!(tax_amounts(invoice), ["5.00"]);
        assert_eq!(invoice["total"], "55.00");
        assert_eq!(invoice["amountPaid"], "55.00");
        // Back down: the credit is the taxed total.
        let down = update(
            &server,
            &token,
            json!({"membershipKey": key, "pricePerUnit": "100.00"}),
        )
        .await;
        assert_eq!(down.status, 200, "{}", down.body);
        assert_eq!(down.body["proration"]["amount"], "-55.00");
        assert_eq!(down.body["membership"]["creditBalance"], "55.00");
        // A credit note of the taxed amount on the period's (first) invoice, not an invoice.
        let invoices = down.body["membership"]["invoices"].as_array().unwrap();
        assert_eq!(invoices.len(), 2);
        assert_eq!(invoices[1]["kind"], "first");
        assert_eq!(invoices[1]["creditNotes"][0]["amount"], "55.00");

        // The renewal's taxed total is settled by the credit first; its page shows both totals.
        server.advance(&token, "2027-05-01T00:00:00Z").await;
        let renewal = newest_invoice(&server, &token, &key).await;
        assert_eq!(renewal["total"], "110.00");
        assert_eq!(renewal["creditApplied"], "55.00");
        assert_eq!(renewal["amountDue"], "55.00");
        let session = open(
            &server,
            &token,
            "/api/subscriptions/v1/portal/session",
            json!({"customerKey": customer}),
        )
        .await;
        let portal = session["portalRedirectUrl"].as_str().unwrap();
        let invoice_key = renewal["invoiceKey"].as_str().unwrap();
        let page = Visitor::new()
            .get(&format!("{portal}/invoices/{invoice_key}"))
            .await;
        assert_eq!(page.status, 200);
        assert!(
            page.text
                .contains("data-testid=\"invoice-taxed-total\">$110.00<"),
            "{}",
            page.text
        );
        assert!(page.text.contains("data-testid=\"invoice-total\">$55.00<"));
    }
);

backend_test!(
    reverse_charge_skips_eu_rates,
    |server: TestServer| async move {
        let token = server.token().await;
        let settings = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&token),
                Some(json!({"country": "DE"})),
            )
            .await;
        assert_eq!(settings.status, 200, "{}", settings.body);
        let german = rate(
            &server,
            &token,
            json!({"name": "USt", "percentage": "19", "inclusive": false, "country": "DE"}),
        )
        .await;
        let anywhere = rate(
            &server,
            &token,
            json!({"name": "Fee", "percentage": "5", "inclusive": false}),
        )
        .await;
        // A French business with an EU VAT id: the German rate is skipped.
        let mut french = server.customer_body("fr@example.com");
        french["countryCode"] = json!("FR");
        french["taxIds"] = json!([{"type": "eu_vat", "value": "FR12345678901"}]);
        let reply = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(&token),
                Some(french),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let customer = reply.body["customerKey"].as_str().unwrap().to_string();
        let mut body = server.membership_body(&customer, "order-fr");
        body["taxRateIds"] = json!([german, anywhere]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let invoice = newest_invoice(&server, &token, &key(&record)).await;
        assert_eq!(invoice["reverseCharge"], true);
        let invoice_key = invoice["invoiceKey"].as_str().unwrap();
        shows_taxes(&server, &token, &customer, invoice_key).await;
        assert_eq!(invoice["taxes"].as_array().unwrap().len(), 1, "{invoice}");
        assert_eq!(invoice["taxes"][0]["taxRateId"], anywhere.as_str());
        // 29.97 × 5 % = 1.4985 → 1.50.
        assert_eq!(invoice["total"], "31.47");
        assert_eq!(invoice["amountPaid"], "31.47");
        // A German customer (same country as the merchant) pays both.
        let domestic = server.create_customer(&token, "de@example.com").await;
        let mut body = server.membership_body(&domestic, "order-de");
        body["taxRateIds"] = json!([german, anywhere]);
        let record = server
            .active_membership(&token, "2027-04-01T00:00:00Z", body)
            .await;
        let invoice = newest_invoice(&server, &token, &key(&record)).await;
        assert_eq!(invoice["reverseCharge"], false);
        assert_eq!(tax_amounts(&invoice), ["5.69", "1.50"]);
        assert_eq!(invoice["total"], "37.16");
    }
);

/// The customer's invoice page and PDF list the tax, the taxed total and the reverse charge.
async fn shows_taxes(server: &TestServer, token: &str, customer: &str, invoice: &str) {
    let session = open(
        server,
        token,
        "/api/subscriptions/v1/portal/session",
        json!({"customerKey": customer, "returnToWebsiteLink": "https://merchant.example/account"}),
    )
    .await;
    let portal = session["portalRedirectUrl"].as_str().unwrap().to_string();
    let visitor = Visitor::new();
    let html = visitor.get(&format!("{portal}/invoices/{invoice}")).await;
    assert_eq!(html.status, 200);
    let pdf = visitor
        .client
        .get(format!("{portal}/invoices/{invoice}/pdf"))
        .send()
        .await
        .unwrap();
    let pdf = pdf_text(&pdf.bytes().await.unwrap());
    for text in ["Fee 5 %", "€1.50", "€31.47", "Reverse charge"] {
        assert!(html.text.contains(text), "page: {text}");
        assert!(pdf.contains(text), "PDF: {text} in {pdf}");
    }
    // Without credit the taxed total is the total: one line, not two.
    assert!(!html.text.contains("Total incl. taxes") && !pdf.contains("Total incl. taxes"));
    assert!(!html.text.contains("USt"), "the skipped rate is not shown");
}
