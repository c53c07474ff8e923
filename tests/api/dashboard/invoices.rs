//! An invoice from the dashboard, as the portal shows it: the printable page and the PDF, for the
//! merchant's own invoices only.

use recur::store::merchants::Mode;
use reqwest::StatusCode;

use crate::backend_test;
use crate::fixtures::dashboard::Browser;
use crate::harness::TestServer;

backend_test!(
    dashboard_invoices_open_as_a_page_and_a_pdf,
    |server: TestServer| async move {
        let api = server.token().await;
        let customer_key = server.create_customer(&api, "ada@example.com").await;
        let body = server.membership_body(&customer_key, "order-1");
        let record = server
            .active_membership(&api, "2031-01-01T00:00:00Z", body)
            .await;
        let membership_key = record["membershipKey"].as_str().unwrap().to_string();
        let invoice_key = record["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;

        // The membership page links the invoice and its PDF.
        let page = browser
            .get(&format!("/dashboard/memberships/{membership_key}"), &mine)
            .await;
        let page_url = format!("/dashboard/invoices/{invoice_key}");
        let pdf_url = format!("{page_url}/pdf");
        assert!(
            page.text.contains(&format!("href=\"{page_url}\"")),
            "{}",
            page.text
        );
        assert!(page.text.contains(&format!("href=\"{pdf_url}\"")));

        let invoice = browser.get(&page_url, &mine).await;
        assert_eq!(invoice.status, StatusCode::OK, "{}", invoice.text);
        assert!(invoice.text.contains(&invoice_key));
        assert!(invoice.text.contains("Ada Lovelace") && invoice.text.contains("29.97"));
        assert!(invoice
            .text
            .contains(&format!("href=\"/dashboard/memberships/{membership_key}\"")));
        assert!(invoice.csp.contains("default-src 'none'") || invoice.csp.contains("script-src"));
        let pdf = browser.get(&pdf_url, &mine).await;
        assert_eq!(pdf.status, StatusCode::OK);
        assert!(pdf.text.starts_with("%PDF-"), "a PDF");

        // Another merchant's session finds neither; without a session, the login.
        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        for path in [&page_url, &pdf_url] {
            let refused = browser.get(path, &theirs).await;
            assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
            assert!(!refused.text.contains("Ada Lovelace"));
            let anonymous = browser.get(path, "").await;
            assert_eq!(anonymous.location.as_deref(), Some("/dashboard/login"));
        }
        let unknown = browser.get(&format!("{page_url}x"), &mine).await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    }
);

backend_test!(
    dashboard_invoice_list_filters_by_status,
    |server: TestServer| async move {
        let api = server.token().await;
        let ada = server.create_customer(&api, "ada@example.com").await;
        let body = server.membership_body(&ada, "order-1");
        let paid = server
            .active_membership(&api, "2031-01-01T00:00:00Z", body)
            .await;
        let paid_key = paid["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let (grace, _) = server
            .past_due_membership(
                &api,
                "grace@example.com",
                "order-2",
                "2031-01-01T00:00:00Z",
                "2031-02-01T00:00:00Z",
            )
            .await;
        let open = crate::fixtures::lists::page(
            &server,
            &api,
            &format!("/invoices?customerKey={grace}&status=Open"),
        )
        .await;
        let open_key = open["data"][0]["invoiceKey"].as_str().unwrap().to_string();
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let listed = |text: &str, key: &str| text.contains(&format!("/dashboard/invoices/{key}\""));

        let all = browser.get("/dashboard/invoices", &mine).await;
        assert_eq!(all.status, StatusCode::OK, "{}", all.text);
        assert!(listed(&all.text, &paid_key) && listed(&all.text, &open_key));
        assert!(all.text.contains("data-testid=\"nav-invoices\""));
        let only_paid = browser.get("/dashboard/invoices?status=Paid", &mine).await;
        assert!(listed(&only_paid.text, &paid_key) && !listed(&only_paid.text, &open_key));
        assert!(only_paid
            .text
            .contains("aria-current=\"page\" data-testid=\"filter-Paid\""));
        let only_open = browser.get("/dashboard/invoices?status=Open", &mine).await;
        assert!(!listed(&only_open.text, &paid_key) && listed(&only_open.text, &open_key));
        for bad in ["status=Nope", "cursor=abc", "status=Paid&status=Open"] {
            let page = browser
                .get(&format!("/dashboard/invoices?{bad}"), &mine)
                .await;
            assert_eq!(page.status, StatusCode::BAD_REQUEST, "{bad}");
            assert!(page.text.contains("<html"), "{bad}: an HTML page");
        }

        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        let foreign = browser.get("/dashboard/invoices", &theirs).await;
        assert_eq!(foreign.status, StatusCode::OK);
        assert!(!listed(&foreign.text, &paid_key) && !listed(&foreign.text, &open_key));
    }
);

backend_test!(
    dashboard_invoices_list_their_credit_notes_with_their_pdfs,
    |server: TestServer| async move {
        let api = server.token().await;
        let customer_key = server.create_customer(&api, "grace@example.com").await;
        let body = server.membership_body(&customer_key, "order-cn");
        let record = server
            .active_membership(&api, "2031-01-01T00:00:00Z", body)
            .await;
        let invoice_key = record["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let refund = server
            .call(
                reqwest::Method::POST,
                &format!("/api/subscriptions/v1/invoice/{invoice_key}/refund"),
                Some(&api),
                Some(serde_json::json!({"amount": "9.99", "reason": "one seat"})),
            )
            .await;
        assert_eq!(refund.status, StatusCode::CREATED, "{}", refund.body);
        let note_key = refund.body["creditNoteKey"].as_str().unwrap().to_string();
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;

        let invoice = browser
            .get(&format!("/dashboard/invoices/{invoice_key}"), &mine)
            .await;
        assert_eq!(invoice.status, StatusCode::OK, "{}", invoice.text);
        let pdf_url = format!("/dashboard/credit-notes/{note_key}/pdf");
        for shown in ["INV-2031-000001", "CN-2031-000001", "one seat", &pdf_url] {
            assert!(invoice.text.contains(shown), "{shown}: {}", invoice.text);
        }
        let pdf = browser.get(&pdf_url, &mine).await;
        assert_eq!(pdf.status, StatusCode::OK);
        assert!(pdf.text.starts_with("%PDF-"), "a PDF");
        assert!(
            pdf.text.contains("(Credit note CN-2031-000001)"),
            "its title"
        );

        let other = server.another_merchant(Mode::Sandbox).await;
        let theirs = browser.log_in(&other).await;
        assert_eq!(
            browser.get(&pdf_url, &theirs).await.status,
            StatusCode::NOT_FOUND
        );
        let anonymous = browser.get(&pdf_url, "").await;
        assert_eq!(anonymous.location.as_deref(), Some("/dashboard/login"));
    }
);
