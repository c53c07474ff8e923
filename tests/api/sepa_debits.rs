//! SEPA Direct Debit end to end (DESIGN §18): a mandate recorded by API, a first payment that
//! makes the membership Active with its invoice Open and the customer pre-notified, a
//! collection file valid against the official pain.008.001.08 XSD (FRST, then RCUR for the
//! renewal), each debit in one file only, and the payment recorded on the collection date.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::sepa::{self, assert_valid_pain008, texts, CREDITOR_ID, DEBTOR_IBAN};
use crate::harness::TestServer;

const BATCHES: &str = "/api/subscriptions/v1/sepa/batches";

async fn batch(server: &TestServer, token: &str, body: Value) -> crate::harness::Reply {
    server
        .call(Method::POST, BATCHES, Some(token), Some(body))
        .await
}

/// How many of the membership's invoices have this status.
async fn invoices_with(server: &TestServer, key: &str, status: &str) -> i64 {
    server
        .count(
            &format!(
                "SELECT COUNT(*) FROM invoices i JOIN memberships m ON m.id = i.membership_id \
                 WHERE m.membership_key = $1 AND i.status = '{status}'"
            ),
            key,
        )
        .await
}

/// The bodies of the e-mails of this kind sent to `to`, oldest first.
async fn emails(server: &TestServer, kind: &str, to: &str) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT text_body FROM emails WHERE kind = $1 AND to_address = $2 ORDER BY id",
    )
    .bind(kind)
    .bind(to)
    .fetch_all(server.server.state.store.pool())
    .await
    .expect("emails")
}

backend_matrix!(
    a_mandate_is_debited_batched_and_collected,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        // Monday 1 March 2027.
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let processor = sepa::connect(&server, &token, 5).await;
        let email = "joerg@example.com";
        let customer = server.create_customer(&token, email).await;
        let method = sepa::mandate(&server, &token, &customer, processor, "MANDATE-0001").await;
        assert_eq!(method["type"], "sepa_debit");
        assert_eq!(method["ibanLast4"], "3000");
        assert_eq!(method["mandateReference"], "MANDATE-0001");
        assert_eq!(method["signedAt"], "2027-02-15T09:30:00Z");
        assert_eq!(method["paymentProcessorId"], processor);
        assert!(method.get("brand").is_none(), "{method}");
        assert!(
            !method.to_string().contains(DEBTOR_IBAN),
            "never the whole IBAN"
        );
        let current = server
            .call(
                Method::GET,
                &format!("/api/subscriptions/v1/customer/{customer}/payment-method"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(current.body, method);

        let created = server
            .create_membership(&token, server.membership_body(&customer, "sepa-order-1"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let paid = server.pay(&token, &key).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        assert_eq!(
            paid.body["status"], "Active",
            "a mandate's first payment activates"
        );
        assert_eq!(
            invoices_with(&server, &key, "Open").await,
            1,
            "until collected"
        );
        // Saturday 6 March is no TARGET2 day: Monday 8 March.
        let notices = emails(&server, "debit_notice", email).await;
        assert_eq!(notices.len(), 1);
        for fact in ["29.97", "2027-03-08", "MANDATE-0001", CREDITOR_ID, "3000"] {
            assert!(notices[0].contains(fact), "{fact}: {}", notices[0]);
        }
        assert!(emails(&server, "receipt", email).await.is_empty());

        // Nothing is due by today; a weekend, the past and a card processor are refused.
        let early = batch(&server, &token, json!({"paymentProcessorId": processor})).await;
        early.problem(409);
        for (body, field) in [
            (
                json!({"paymentProcessorId": processor, "collectionDate": "2027-03-06"}),
                "collectionDate",
            ),
            (
                json!({"paymentProcessorId": processor, "collectionDate": "2027-02-26"}),
                "collectionDate",
            ),
            (
                json!({"paymentProcessorId": processor, "collectionDate": "8 March"}),
                "collectionDate",
            ),
            (json!({"paymentProcessorId": 101}), "paymentProcessorId"),
            (json!({}), "paymentProcessorId"),
        ] {
            let reply = batch(&server, &token, body).await;
            assert!(reply.problem(400).contains_key(field), "{}", reply.body);
        }

        let made = batch(
            &server,
            &token,
            json!({"paymentProcessorId": processor, "collectionDate": "2027-03-08"}),
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        assert_eq!(made.body["count"], 1);
        assert_eq!(made.body["total"], "29.97");
        assert_eq!(made.body["currency"], "EUR");
        assert_eq!(made.body["collectionDate"], "2027-03-08");
        let batch_id = made.body["batchId"].as_str().unwrap().to_string();
        assert!(batch_id.starts_with("sb_"));
        // A debit is in one file only.
        let again = batch(
            &server,
            &token,
            json!({"paymentProcessorId": processor, "collectionDate": "2027-03-08"}),
        )
        .await;
        again.problem(409);
        let listed = server.call(Method::GET, BATCHES, Some(&token), None).await;
        assert_eq!(listed.body["data"][0]["batchId"], batch_id.as_str());
        assert_eq!(listed.body["data"].as_array().unwrap().len(), 1);

        let xml = sepa::document(&server, &token, &batch_id).await;
        assert_valid_pain008(&xml);
        assert_eq!(texts(&xml, "SeqTp"), ["FRST"]);
        assert_eq!(texts(&xml, "MndtId"), ["MANDATE-0001"]);
        assert_eq!(texts(&xml, "DtOfSgntr"), ["2027-02-15"]);
        assert_eq!(texts(&xml, "ReqdColltnDt"), ["2027-03-08"]);
        assert_eq!(texts(&xml, "NbOfTxs"), ["1", "1"]);
        assert_eq!(texts(&xml, "CtrlSum"), ["29.97", "29.97"]);
        assert!(
            xml.contains(r#"<InstdAmt Ccy="EUR">29.97</InstdAmt>"#),
            "{xml}"
        );
        assert_eq!(
            texts(&xml, "MsgId"),
            [made.body["messageId"].as_str().unwrap()]
        );
        assert!(texts(&xml, "IBAN").contains(&DEBTOR_IBAN.to_string()));
        assert!(xml.contains(CREDITOR_ID));
        let invoice_number: String = sqlx::query_scalar(
            "SELECT COALESCE(i.number, i.invoice_key) FROM invoices i \
             JOIN memberships m ON m.id = i.membership_id WHERE m.membership_key = $1",
        )
        .bind(&key)
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap();
        assert_eq!(texts(&xml, "Ustrd"), [invoice_number]);

        // Another merchant sees no such batch.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        server
            .call(
                Method::GET,
                &format!("{BATCHES}/{batch_id}"),
                Some(&other_token),
                None,
            )
            .await
            .problem(404);
        let theirs = server
            .call(Method::GET, BATCHES, Some(&other_token), None)
            .await;
        assert_eq!(theirs.body["data"], json!([]));

        // Paid on the collection date, not before.
        server.advance(&token, "2027-03-07T10:00:00Z").await;
        assert_eq!(invoices_with(&server, &key, "Open").await, 1);
        server.advance(&token, "2027-03-08T10:00:00Z").await;
        assert_eq!(invoices_with(&server, &key, "Paid").await, 1);
        assert_eq!(emails(&server, "receipt", email).await.len(), 1);
        let charges: Vec<String> = server
            .events("sepa-order-1")
            .await
            .iter()
            .filter(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
            .map(|e| {
                e["TransactionStatus"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(charges, ["Success"]);

        // The renewal is a debit of its own, pre-notified, then collected as RCUR.
        server.advance(&token, "2027-04-01T10:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
        assert_eq!(invoices_with(&server, &key, "Open").await, 1);
        let notices = emails(&server, "debit_notice", email).await;
        assert_eq!(notices.len(), 2);
        assert!(notices[1].contains("2027-04-06"), "{}", notices[1]);
        let renewal = batch(
            &server,
            &token,
            json!({"paymentProcessorId": processor, "collectionDate": "2027-04-06"}),
        )
        .await;
        assert_eq!(renewal.status, StatusCode::CREATED, "{}", renewal.body);
        let xml = sepa::document(&server, &token, renewal.body["batchId"].as_str().unwrap()).await;
        assert_valid_pain008(&xml);
        assert_eq!(texts(&xml, "SeqTp"), ["RCUR"]);
        server.advance(&token, "2027-04-06T10:00:00Z").await;
        assert_eq!(invoices_with(&server, &key, "Paid").await, 2);
        assert_eq!(invoices_with(&server, &key, "Open").await, 0);
    }
);

backend_matrix!(
    bad_mandates_are_refused_on_their_fields,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let processor = sepa::connect(&server, &token, 5).await;
        let customer = server.create_customer(&token, "ana@example.com").await;
        sepa::mandate(&server, &token, &customer, processor, "TAKEN-1").await;
        let path = format!("/api/subscriptions/v1/customer/{customer}/payment-method");
        let bad = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({
                    "type": "sepa_debit",
                    "paymentProcessorId": processor,
                    "iban": "DE89370400440532013001",
                    "accountHolder": "",
                    "bic": "NOTABIC",
                    "mandateReference": "TAKEN-1",
                    "signedAt": "2027-03-02T00:00:00Z",
                    "paymentMethod": "pm_123",
                })),
            )
            .await;
        let errors = bad.problem(400);
        for field in [
            "iban",
            "accountHolder",
            "bic",
            "mandateReference",
            "signedAt",
            "paymentMethod",
        ] {
            assert!(errors.contains_key(field), "{field}: {}", bad.body);
        }
        let card_processor = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({
                    "type": "sepa_debit",
                    "paymentProcessorId": 101,
                    "iban": DEBTOR_IBAN,
                    "accountHolder": "Ana",
                    "mandateReference": "with space",
                })),
            )
            .await;
        let errors = card_processor.problem(400);
        assert!(
            errors.contains_key("paymentProcessorId") && errors.contains_key("mandateReference")
        );
        let wrong_type = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({"type": "paypal", "iban": DEBTOR_IBAN})),
            )
            .await;
        assert!(wrong_type.problem(400).contains_key("type"));
        // The mandate held by the processor keeps it from being removed.
        let removal = server
            .call(
                Method::DELETE,
                &format!("{}/{processor}", crate::fixtures::PROCESSORS),
                Some(&token),
                None,
            )
            .await;
        removal.problem(409);
        // A reference is made when none is given.
        let made = server
            .call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({
                    "type": "sepa_debit",
                    "paymentProcessorId": processor,
                    "iban": "AT61 1904 3002 3457 3201",
                    "accountHolder": "Ana",
                })),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        let reference = made.body["mandateReference"].as_str().unwrap();
        assert!(
            reference.starts_with("RCR-") && reference.len() <= 35,
            "{reference}"
        );
        assert_eq!(made.body["ibanLast4"], "3201");
    }
);

backend_matrix!(
    concurrent_batches_on_two_instances_take_each_debit_once,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let processor = sepa::connect(&server, &token, 1).await;
        let debits = 6;
        sepa::mandated_members(&server, &token, processor, "race", debits).await;
        let second = server.second_process().await;
        let body = json!({"paymentProcessorId": processor, "collectionDate": "2027-03-02"});
        let (a, b, c) = tokio::join!(
            batch(&server, &token, body.clone()),
            batch(&second, &token, body.clone()),
            batch(&server, &token, body.clone()),
        );
        let mut ids = Vec::new();
        for reply in [a, b, c] {
            match reply.status {
                StatusCode::CREATED => {
                    let batch_id = reply.body["batchId"].as_str().unwrap();
                    let xml = sepa::document(&server, &token, batch_id).await;
                    assert_valid_pain008(&xml);
                    let here = texts(&xml, "EndToEndId");
                    assert_eq!(here.len() as i64, reply.body["count"].as_i64().unwrap());
                    ids.extend(here);
                }
                StatusCode::CONFLICT => {}
                other => panic!("{other}: {}", reply.body),
            }
        }
        ids.sort();
        let all = ids.len();
        ids.dedup();
        assert_eq!(all, ids.len(), "a debit in two files");
        assert_eq!(ids.len(), debits, "every due debit in a file");
    }
);

backend_matrix!(
    a_batch_racing_the_renewals_takes_each_debit_once,
    |backend| async move {
        let server = TestServer::start(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T10:00:00Z").await;
        let processor = sepa::connect(&server, &token, 1).await;
        let members = 8;
        sepa::mandated_members(&server, &token, processor, "renew", members).await;
        let first = batch(
            &server,
            &token,
            json!({"paymentProcessorId": processor, "collectionDate": "2027-03-02"}),
        )
        .await;
        assert_eq!(first.body["count"], members, "{}", first.body);
        server.advance(&token, "2027-03-02T10:00:00Z").await;

        // The renewals of 1 April run while collection files for 2 April are being made.
        let body = json!({"paymentProcessorId": processor, "collectionDate": "2027-04-02"});
        let advance = server.call(
            Method::POST,
            "/api/subscriptions/v1/test-clock/advance",
            Some(&token),
            Some(json!({"to": "2027-04-01T11:00:00Z"})),
        );
        let (advanced, a, b) = tokio::join!(
            advance,
            batch(&server, &token, body.clone()),
            batch(&server, &token, body.clone()),
        );
        assert_eq!(advanced.status, StatusCode::OK, "{}", advanced.body);
        let last = batch(&server, &token, body.clone()).await;
        let mut ids = Vec::new();
        for reply in [a, b, last] {
            match reply.status {
                StatusCode::CREATED => {
                    let xml =
                        sepa::document(&server, &token, reply.body["batchId"].as_str().unwrap())
                            .await;
                    assert_valid_pain008(&xml);
                    assert!(texts(&xml, "SeqTp").iter().all(|s| s == "RCUR"), "{xml}");
                    ids.extend(texts(&xml, "EndToEndId"));
                }
                StatusCode::CONFLICT => {}
                other => panic!("{other}: {}", reply.body),
            }
        }
        let all = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(all, ids.len(), "a debit in two files");
        assert_eq!(ids.len(), members, "every renewal debit in a file");
    }
);
