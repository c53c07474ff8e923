//! The invoice PDF as a person reads it: fetched from the portal for a customer whose name is
//! neither Latin-1 nor Latin, then turned into text with `pdftotext` and into an image with
//! `pdftoppm` (Debian `poppler-utils`, which `scripts/test` installs).

use std::path::PathBuf;

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_test;
use crate::fixtures::checkout::open;
use crate::fixtures::invoices::{pdf_text, poppler};
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// The first page of `pdf` as a PNG (`pdftoppm -png`), and the share of its pixels that are not
/// white in a grey rendering of the same page.
fn pdf_png(pdf: &[u8]) -> (Vec<u8>, f64) {
    let png = poppler("pdftoppm", &["-png", "-r", "80", "-singlefile", "-"], pdf);
    let pgm = poppler("pdftoppm", &["-gray", "-r", "80", "-singlefile", "-"], pdf);
    // Binary PGM: "P5", width, height, maxval, one whitespace, then one byte per pixel.
    let header: Vec<&[u8]> = pgm.splitn(5, |b| b.is_ascii_whitespace()).collect();
    assert_eq!(header[0], b"P5");
    let pixels = header[4];
    let inked = pixels.iter().filter(|&&p| p < 200).count();
    (png, inked as f64 / pixels.len() as f64)
}

/// `<target>/screenshots`, where the tests' images go.
fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("screenshots")
}

backend_test!(
    an_invoice_pdf_prints_any_name_and_reads_back_as_text,
    |server: TestServer| async move {
        let token = server.token().await;
        let settings = server
            .call(
                Method::PUT,
                "/api/subscriptions/v1/merchant/settings",
                Some(&token),
                Some(json!({
                    "displayName": "Nordlicht Studio",
                    "legalName": "Nordlicht Studio GmbH",
                    "address": "Torstraße 109\n10119 Berlin",
                    "country": "DE",
                    "taxId": "DE811907980"
                })),
            )
            .await;
        assert_eq!(settings.status, StatusCode::OK, "{}", settings.body);
        let mut body = server.customer_body("julia@example.com");
        body["firstName"] = json!("Łódź Ελένη");
        body["lastName"] = json!("Юлия");
        let created = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/customer",
                Some(&token),
                Some(body),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        let customer = created.body["customerKey"].as_str().unwrap().to_string();
        let vat = crate::fixtures::catalog::rate(
            &server,
            &token,
            json!({"name": "VAT", "percentage": "19", "inclusive": false, "country": "DE"}),
        )
        .await;
        let mut membership = server.membership_body(&customer, "order-1");
        membership["taxRateIds"] = json!([vat]);
        let active = server
            .active_membership(&token, "2027-01-10T09:00:00Z", membership)
            .await;
        let invoice = active["invoices"][0]["invoiceKey"].as_str().unwrap();
        let session = open(
            &server,
            &token,
            "/api/subscriptions/v1/portal/session",
            json!({"customerKey": customer}),
        )
        .await;
        let portal = session["portalRedirectUrl"].as_str().unwrap();
        let reply = Visitor::new()
            .client
            .get(format!("{portal}/invoices/{invoice}/pdf"))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), StatusCode::OK);
        assert_eq!(reply.headers()["content-type"], "application/pdf");
        let pdf = reply.bytes().await.unwrap();
        // A subset of two faces (about 28 KB), not the 1.4 MB of both files.
        assert!(pdf.len() < 40_000, "{} bytes", pdf.len());

        let text = pdf_text(&pdf);
        for expected in [
            "Nordlicht Studio GmbH",
            "Torstraße 109",
            "Łódź Ελένη Юлия",
            "julia@example.com",
            "Gold plan",
            "€29.97",
            "VAT 19 %",
            "€5.69",
            "€35.66",
            "10 Jan 2027 – 10 Feb 2027",
            "INV-2027-000001",
        ] {
            assert!(text.contains(expected), "{expected} in {text}");
        }
        assert!(!text.contains('?'), "nothing replaced: {text}");

        let (png, inked) = pdf_png(&pdf);
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(inked > 0.002 && inked < 0.2, "{inked} of the page inked");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("invoice-pdf.png"), png).unwrap();
    }
);
