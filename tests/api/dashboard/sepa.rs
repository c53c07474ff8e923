//! SEPA Direct Debit in the dashboard (DESIGN §13, §18): a SEPA processor connected through the
//! processors page's form (a bad creditor identifier refused beside its field) and removed in
//! its own words (refused while a mandate is held by it); a customer's mandates on the
//! customer's page; a collection file made through the SEPA page's form (a refused date beside
//! its field, nothing due said) and downloaded as the pain.008 it is; a camt.054 return file
//! uploaded and applied (the same file twice, a malformed one, none, one too large); CSRF on
//! every form and another merchant's collection file as the 404 page. SQLite and PostgreSQL.

use recur::store::merchants::Mode;
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, COOKIE};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::dashboard::{keys, outcome, Browser};
use crate::fixtures::sepa::{self, assert_valid_pain008, camt054, texts, CREDITOR_ID};
use crate::fixtures::{shown, PROCESSORS};
use crate::harness::TestServer;

const PROCESSORS_PAGE: &str = "/dashboard/processors";
const SEPA_PAGE: &str = "/dashboard/sepa";

/// The SEPA connection form's fields, with the session's token.
fn sepa_form<'a>(csrf: &'a str, name: &'a str, creditor_id: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("csrfToken", csrf),
        ("name", name),
        ("creditorId", creditor_id),
        ("creditorName", ""),
        ("iban", "FR1420041010050500013M02606"),
        ("bic", "BNPAFRPPXXX"),
        ("leadDays", "3"),
    ]
}

/// On the merchant's clock at 2027-03-01 10:00 UTC: a SEPA processor (lead one day), a
/// customer with the mandate `reference` and a membership paid by it, whose debit waits for a
/// collection file. The processor's id, the customer's key and the membership's key.
async fn debit_due(server: &TestServer, token: &str, reference: &str) -> (i64, String, String) {
    server.advance(token, "2027-03-01T10:00:00Z").await;
    let processor = sepa::connect(server, token, 1).await;
    let customer = server.create_customer(token, "debtor@example.com").await;
    sepa::mandate(server, token, &customer, processor, reference).await;
    let body = server.membership_body(&customer, &format!("order-{reference}"));
    let created = server.create_membership(token, body).await;
    let key = created["membershipKey"].as_str().unwrap().to_string();
    let paid = server.pay(token, &key).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    (processor, customer, key)
}

/// The response to a download of `path` with `cookie`: status, content type, disposition, body.
async fn download(
    browser: &Browser,
    server: &TestServer,
    path: &str,
    cookie: &str,
) -> (StatusCode, String, String, String) {
    let response = browser
        .client
        .get(format!("{}{path}", server.base_url))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap();
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (content_type, disposition) = (header(CONTENT_TYPE), header(CONTENT_DISPOSITION));
    (
        response.status(),
        content_type,
        disposition,
        response.text().await.unwrap(),
    )
}

backend_matrix!(
    dashboard_connects_and_removes_a_sepa_processor,
    |backend| async move {
        let server = TestServer::start(backend).await;
        // The mandate below is signed in 2027; the session idles on the merchant's clock.
        let token = server.token().await;
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(PROCESSORS_PAGE, &cookie).await;
        assert!(page.text.contains("data-testid=\"connect-sepa\""));
        let csrf = page.csrf();

        // A creditor identifier whose check digits are wrong, a lead out of range: beside
        // their fields, what was typed kept, nothing connected.
        let mut form = sepa_form(&csrf, "Club account", "DE00ZZZ09999999999");
        form[6] = ("leadDays", "20");
        let refused = browser
            .post("/dashboard/processors/sepa", &cookie, &form)
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(!shown(&refused.text, "sepa-error-creditorId").is_empty());
        assert!(!shown(&refused.text, "sepa-error-leadDays").is_empty());
        assert!(!refused.text.contains("data-testid=\"sepa-error-iban\""));
        assert!(refused.text.contains("value=\"DE00ZZZ09999999999\""));
        assert!(refused.text.contains("value=\"Club account\""));
        assert_eq!(keys(&refused, "processor"), ["101", "102", "201", "202"]);
        // Without the form's token: refused, nothing connected.
        let mut forged = sepa_form("", "Club account", CREDITOR_ID);
        forged.remove(0);
        let forged = browser
            .post("/dashboard/processors/sepa", &cookie, &forged)
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);

        let connected = browser
            .post(
                "/dashboard/processors/sepa",
                &cookie,
                &sepa_form(&csrf, "Club account", CREDITOR_ID),
            )
            .await;
        assert_eq!(
            connected.status,
            StatusCode::SEE_OTHER,
            "{}",
            connected.text
        );
        let location = connected.location.clone().unwrap();
        assert_eq!(location, format!("{PROCESSORS_PAGE}?done=connected_sepa"));
        let page = browser.get(&location, &cookie).await;
        assert!(shown(&page.text, "done").contains("The SEPA processor is connected"));
        assert_eq!(
            keys(&page, "processor"),
            ["101", "102", "201", "202", "301"]
        );
        assert!(page.text.contains(CREDITOR_ID));
        assert!(page
            .text
            .contains("href=\"/dashboard/processors/301/remove\""));
        // The API's service did it: the creditor name is the processor's name.
        let listed = server
            .call(Method::GET, PROCESSORS, Some(&token), None)
            .await;
        let record = &listed.body["data"][4];
        assert_eq!(record["kind"], "sepa_debit", "{record}");
        assert_eq!(record["sepaDebit"]["creditorName"], "Club account");
        assert_eq!(record["sepaDebit"]["leadDays"], 3);

        // Removal in a SEPA processor's words; refused while a mandate is held by it.
        let confirm = browser
            .get("/dashboard/processors/301/remove", &cookie)
            .await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        assert!(confirm.text.contains("Remove this SEPA processor?"));
        assert!(!confirm.text.contains("Stripe"), "{}", confirm.text);
        let customer = server.create_customer(&token, "held@example.com").await;
        sepa::mandate(&server, &token, &customer, 301, "HELD-1").await;
        let held = browser
            .post(
                "/dashboard/processors/301/remove",
                &cookie,
                &[("csrfToken", &csrf)],
            )
            .await;
        assert_eq!(held.status, StatusCode::CONFLICT, "{}", held.text);
        assert_eq!(outcome(&held), Some("refused"));
        assert!(held.text.contains("mandate"));
        // One without mandates is removed.
        let second = browser
            .post(
                "/dashboard/processors/sepa",
                &cookie,
                &sepa_form(&csrf, "Second account", CREDITOR_ID),
            )
            .await;
        assert_eq!(second.status, StatusCode::SEE_OTHER, "{}", second.text);
        let removed = browser
            .post(
                "/dashboard/processors/302/remove",
                &cookie,
                &[("csrfToken", &csrf)],
            )
            .await;
        assert_eq!(
            removed.location.as_deref(),
            Some("/dashboard/processors?done=removed_sepa")
        );
        let page = browser
            .get("/dashboard/processors?done=removed_sepa", &cookie)
            .await;
        assert!(shown(&page.text, "done").contains("The SEPA processor is removed"));
        assert_eq!(
            keys(&page, "processor"),
            ["101", "102", "201", "202", "301"]
        );
        // The German strings.
        let german = browser
            .client
            .get(format!("{}{PROCESSORS_PAGE}", server.base_url))
            .header(COOKIE, &cookie)
            .header("accept-language", "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("SEPA-Einzug verbinden"), "{german}");
    }
);

backend_matrix!(
    dashboard_customer_page_lists_sepa_mandates,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let processor = sepa::connect(&server, &token, 5).await;
        let customer = server.create_customer(&token, "jorg@example.com").await;
        sepa::mandate(&server, &token, &customer, processor, "MANDATE-OLD").await;
        sepa::mandate(&server, &token, &customer, processor, "MANDATE-NEW").await;
        let without = server.create_customer(&token, "card@example.com").await;

        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser
            .get(&format!("/dashboard/customers/{customer}"), &cookie)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert_eq!(keys(&page, "mandate"), ["MANDATE-NEW", "MANDATE-OLD"]);
        assert!(page.text.contains("Jörg Müller"));
        assert_eq!(shown(&page.text, "mandate-iban"), "•••• 3000");
        assert!(page.text.contains("15 Feb 2027"), "signed");
        assert!(page.text.contains("Club account"), "the processor's name");
        assert_eq!(shown(&page.text, "mandate-status"), "In force");
        // The newest is the current payment method, and only it.
        assert_eq!(
            page.text.matches("data-testid=\"mandate-current\"").count(),
            1
        );
        let new_row = page.text.find("data-key=\"MANDATE-NEW\"").unwrap();
        let old_row = page.text.find("data-key=\"MANDATE-OLD\"").unwrap();
        let badge = page.text.find("data-testid=\"mandate-current\"").unwrap();
        assert!(new_row < badge && badge < old_row);

        let other = browser
            .get(&format!("/dashboard/customers/{without}"), &cookie)
            .await;
        assert_eq!(other.status, StatusCode::OK);
        assert!(keys(&other, "mandate").is_empty());
    }
);

backend_matrix!(
    dashboard_makes_a_collection_file_and_applies_a_return_file,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let (processor, customer, key) = debit_due(&server, &token, "DASH-1").await;
        let browser = Browser::new(&server);
        let cookie = browser.log_in(&server.merchant).await;
        let page = browser.get(SEPA_PAGE, &cookie).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page
            .text
            .contains("href=\"/dashboard/sepa\" aria-current=\"page\" data-testid=\"nav-sepa\""));
        assert!(page
            .text
            .contains(&format!("<option value=\"{processor}\"")));
        assert!(page.text.contains("data-testid=\"no-batches\""));
        let csrf = page.csrf();
        let id = processor.to_string();
        let form = |date: &'static str| {
            vec![
                ("csrfToken", csrf.clone()),
                ("paymentProcessorId", id.clone()),
                ("collectionDate", date.to_string()),
            ]
        };
        let post = |fields: Vec<(&'static str, String)>| {
            let browser = &browser;
            let cookie = &cookie;
            async move {
                let fields: Vec<(&str, &str)> =
                    fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
                browser
                    .post("/dashboard/sepa/batches", cookie, &fields)
                    .await
            }
        };

        // Without the token; a date in the past: nothing made.
        let mut forged = form("2027-03-02");
        forged.remove(0);
        assert_eq!(post(forged).await.status, StatusCode::FORBIDDEN);
        let past = post(form("2027-02-01")).await;
        assert_eq!(past.status, StatusCode::BAD_REQUEST, "{}", past.text);
        assert!(shown(&past.text, "error-collectionDate").contains("or later"));
        assert!(past.text.contains("value=\"2027-02-01\""));

        let made = post(form("2027-03-02")).await;
        assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.text);
        let location = made.location.clone().unwrap();
        let batch_id = location
            .trim_start_matches("/dashboard/sepa?made=")
            .to_string();
        assert!(batch_id.starts_with("sb_"), "{location}");
        let page = browser.get(&location, &cookie).await;
        assert!(shown(&page.text, "done").contains(&batch_id));
        assert_eq!(keys(&page, "batch"), std::slice::from_ref(&batch_id));
        assert_eq!(shown(&page.text, "batch-count"), "1");
        assert!(shown(&page.text, "batch-total").contains("29.97"));
        // Nothing more is due: said, nothing made.
        let again = post(form("2027-03-02")).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
        assert!(shown(&again.text, "error").contains("no batch was made"));
        assert_eq!(keys(&again, "batch"), std::slice::from_ref(&batch_id));

        // The download is the collection file, for the session only.
        let path = format!("/dashboard/sepa/batches/{batch_id}/pain.008");
        assert!(page.text.contains(&format!("href=\"{path}\"")));
        let (status, content_type, disposition, xml) =
            download(&browser, &server, &path, &cookie).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(content_type, "application/xml");
        assert_eq!(
            disposition,
            format!("attachment; filename=\"{batch_id}.pain.008.xml\"")
        );
        assert_eq!(texts(&xml, "MndtId"), ["DASH-1"]);
        assert_valid_pain008(&xml);
        let (anonymous, ..) = download(&browser, &server, &path, "").await;
        assert_eq!(anonymous, StatusCode::SEE_OTHER);

        // The bank returns the debit: applied once, an id not ours reported.
        let end_to_end = texts(&xml, "EndToEndId").remove(0);
        let file = camt054(&[(&end_to_end, "AC04"), ("E2E-NOT-OURS", "AM04")]);
        let upload = |csrf: &str, file: Vec<u8>| {
            let browser = &browser;
            let cookie = &cookie;
            let csrf = csrf.to_string();
            async move {
                browser
                    .post_file(
                        "/dashboard/sepa/returns",
                        cookie,
                        &[("csrfToken", &csrf)],
                        "file",
                        &file,
                    )
                    .await
            }
        };
        assert_eq!(
            upload("", file.clone().into_bytes()).await.status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            upload(&"0".repeat(64), file.clone().into_bytes())
                .await
                .status,
            StatusCode::FORBIDDEN
        );
        let applied = upload(&csrf, file.clone().into_bytes()).await;
        assert_eq!(applied.status, StatusCode::OK, "{}", applied.text);
        assert!(applied.text.contains("data-file=\"camt.054\""));
        assert_eq!(shown(&applied.text, "returns-matched"), "1");
        assert_eq!(shown(&applied.text, "returns-already"), "0");
        assert_eq!(shown(&applied.text, "returns-unknown"), "E2E-NOT-OURS");
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        let twice = upload(&csrf, file.into_bytes()).await;
        assert_eq!(shown(&twice.text, "returns-matched"), "0");
        assert_eq!(shown(&twice.text, "returns-already"), "1");
        // AC04 revoked the mandate: the customer's page says since when.
        let customer_page = browser
            .get(&format!("/dashboard/customers/{customer}"), &cookie)
            .await;
        assert!(shown(&customer_page.text, "mandate-status").starts_with("Revoked on"));

        // A malformed file, no file, a file too large: refused, nothing applied.
        let malformed = upload(&csrf, b"<Document><BkToCstmrDbtCdtNtfctn>".to_vec()).await;
        assert_eq!(
            malformed.status,
            StatusCode::BAD_REQUEST,
            "{}",
            malformed.text
        );
        assert!(!shown(&malformed.text, "returns-error").is_empty());
        assert!(!malformed.text.contains("data-testid=\"returns-applied\""));
        let none = upload(&csrf, Vec::new()).await;
        assert_eq!(none.status, StatusCode::BAD_REQUEST);
        assert!(shown(&none.text, "returns-error").contains("Choose a return file"));
        let huge = upload(&csrf, vec![b' '; 1024 * 1024 + 1]).await;
        assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", huge.text);
        assert!(shown(&huge.text, "returns-error").contains("1 MB"));
    }
);

backend_matrix!(
    dashboard_collection_files_of_another_merchant_are_not_found,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        let (processor, ..) = debit_due(&server, &token, "TENANT-1").await;
        let made = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/sepa/batches",
                Some(&token),
                Some(json!({"paymentProcessorId": processor, "collectionDate": "2027-03-02"})),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        let batch_id = made.body["batchId"].as_str().unwrap().to_string();
        let path = format!("/dashboard/sepa/batches/{batch_id}/pain.008");

        let other = server.another_merchant(Mode::Sandbox).await;
        let browser = Browser::new(&server);
        let mine = browser.log_in(&server.merchant).await;
        let theirs = browser.log_in(&other).await;
        let (status, ..) = download(&browser, &server, &path, &mine).await;
        assert_eq!(status, StatusCode::OK);
        let (status, content_type, _, body) = download(&browser, &server, &path, &theirs).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(content_type.starts_with("text/html"), "{content_type}");
        assert!(!body.contains("MndtId"));
        let unknown = "/dashboard/sepa/batches/sb_unknown/pain.008";
        assert_eq!(
            download(&browser, &server, unknown, &mine).await.0,
            StatusCode::NOT_FOUND
        );

        // Their page lists none of it and offers no SEPA processor; the merchant's processor
        // is not theirs to collect for.
        let page = browser.get(SEPA_PAGE, &theirs).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(keys(&page, "batch").is_empty());
        assert!(page.text.contains("data-testid=\"no-sepa-processor\""));
        let csrf = page.csrf();
        let id = processor.to_string();
        let refused = browser
            .post(
                "/dashboard/sepa/batches",
                &theirs,
                &[("csrfToken", &csrf), ("paymentProcessorId", &id)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(shown(&refused.text, "error-paymentProcessorId").contains("not a SEPA processor"));
        let mine_page = browser.get(SEPA_PAGE, &mine).await;
        assert_eq!(keys(&mine_page, "batch"), [batch_id]);
    }
);
