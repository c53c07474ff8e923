//! Bank return files (DESIGN §18): a camt.054 return and a pain.002 rejection each reverse
//! their debit once (invoice Open, `TRANSACTION_DATA_UPDATE` Rejected with the ISO reason
//! code, PastDue with dunning and the pay-now e-mail), `AC04` revokes the mandate, unknown
//! end-to-end ids are reported, the same file twice changes nothing, an unreadable file is
//! refused with nothing applied, and the retry after a returned `FRST` is `FRST` again.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::sepa::{self, assert_valid_pain008, camt054, texts};
use crate::harness::{Reply, TestServer};

async fn post_file(server: &TestServer, token: &str, xml: &str) -> Reply {
    server
        .call_raw(
            Method::POST,
            "/api/subscriptions/v1/sepa/returns",
            Some(token),
            "application/xml",
            xml.as_bytes().to_vec(),
        )
        .await
}

/// A pain.002 accepting `accepted` and rejecting `rejected` with `reason`.
fn pain002(accepted: &str, rejected: &str, reason: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pain.002.001.10\"><CstmrPmtStsRpt>\
         <GrpHdr><MsgId>STS-1</MsgId><CreDtTm>2027-03-09T08:00:00Z</CreDtTm></GrpHdr>\
         <OrgnlGrpInfAndSts><OrgnlMsgId>X</OrgnlMsgId><OrgnlMsgNmId>pain.008.001.08</OrgnlMsgNmId>\
         <GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>\
         <OrgnlPmtInfAndSts><OrgnlPmtInfId>X-FRST</OrgnlPmtInfId>\
         <TxInfAndSts><OrgnlEndToEndId>{accepted}</OrgnlEndToEndId><TxSts>ACCP</TxSts></TxInfAndSts>\
         <TxInfAndSts><OrgnlEndToEndId>{rejected}</OrgnlEndToEndId><TxSts>RJCT</TxSts>\
         <StsRsnInf><Rsn><Cd>{reason}</Cd></Rsn></StsRsnInf></TxInfAndSts>\
         </OrgnlPmtInfAndSts></CstmrPmtStsRpt></Document>"
    )
}

async fn status_of(server: &TestServer, token: &str, key: &str) -> String {
    server.membership(token, key).await["status"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn open_invoices(server: &TestServer, key: &str) -> i64 {
    server
        .count(
            "SELECT COUNT(*) FROM invoices i JOIN memberships m ON m.id = i.membership_id \
             WHERE m.membership_key = $1 AND i.status = 'Open'",
            key,
        )
        .await
}

backend_matrix!(returned_debits_are_reversed_once, |backend| async move {
    let server = TestServer::start(backend).await;
    let token = server.token().await;
    server.advance(&token, "2027-03-01T10:00:00Z").await;
    let processor = sepa::connect(&server, &token, 1).await;
    let mut keys = Vec::new();
    let mut customers = Vec::new();
    for (n, reference) in ["RET-A", "RET-B"].iter().enumerate() {
        let email = format!("ret{n}@example.com");
        let customer = server.create_customer(&token, &email).await;
        sepa::mandate(&server, &token, &customer, processor, reference).await;
        let created = server
            .create_membership(
                &token,
                server.membership_body(&customer, &format!("ret-{n}")),
            )
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let paid = server.pay(&token, &key).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        keys.push(key);
        customers.push((customer, email));
    }
    let made = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/sepa/batches",
            Some(&token),
            Some(json!({"paymentProcessorId": processor, "collectionDate": "2027-03-02"})),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let xml = sepa::document(&server, &token, made.body["batchId"].as_str().unwrap()).await;
    let ids = texts(&xml, "EndToEndId");
    let references = texts(&xml, "MndtId");
    let id_of = |reference: &str| {
        let at = references.iter().position(|r| r == reference).unwrap();
        ids[at].clone()
    };
    let (a, b) = (id_of("RET-A"), id_of("RET-B"));

    // A rejection before the collection date: the debit is never paid.
    let rejected = post_file(&server, &token, &pain002(&a, &b, "AC04")).await;
    assert_eq!(rejected.status, StatusCode::OK, "{}", rejected.body);
    assert_eq!(
        rejected.body,
        json!({"file": "pain.002", "matched": 1, "alreadyApplied": 0, "unknown": []})
    );
    assert_eq!(status_of(&server, &token, &keys[1]).await, "PastDue");
    let method = server
        .call(
            Method::GET,
            &format!(
                "/api/subscriptions/v1/customer/{}/payment-method",
                customers[1].0
            ),
            Some(&token),
            None,
        )
        .await;
    assert!(
        method.body["revokedAt"].is_string(),
        "AC04 revokes: {}",
        method.body
    );

    // A's debit is collected on its date, then returned by the bank.
    server.advance(&token, "2027-03-02T10:00:00Z").await;
    assert_eq!(open_invoices(&server, &keys[0]).await, 0);
    assert_eq!(
        open_invoices(&server, &keys[1]).await,
        1,
        "a rejected debit is never paid"
    );
    let file = camt054(&[(&a, "AM04"), ("E2E-NOT-OURS", "AC01")]);
    let returned = post_file(&server, &token, &file).await;
    assert_eq!(returned.status, StatusCode::OK, "{}", returned.body);
    assert_eq!(
        returned.body,
        json!({"file": "camt.054", "matched": 1, "alreadyApplied": 0, "unknown": ["E2E-NOT-OURS"]})
    );
    assert_eq!(status_of(&server, &token, &keys[0]).await, "PastDue");
    assert_eq!(open_invoices(&server, &keys[0]).await, 1);
    let events = server.events("ret-0").await;
    let charges: Vec<&str> = events
        .iter()
        .filter(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
        .map(|e| e["TransactionStatus"].as_str().unwrap())
        .collect();
    assert_eq!(charges, ["Success", "Rejected"]);
    let rejection = events
        .iter()
        .rev()
        .find(|e| e["Action"] == "TRANSACTION_DATA_UPDATE")
        .unwrap();
    assert!(rejection.to_string().contains("AM04"), "{rejection}");
    let failed = server
        .count(
            "SELECT COUNT(*) FROM emails WHERE kind = 'payment_failed' AND to_address = $1",
            &customers[0].1,
        )
        .await;
    assert_eq!(failed, 1, "the pay-now e-mail");

    // The same files again change nothing.
    let again = post_file(&server, &token, &file).await;
    assert_eq!(
        again.body,
        json!({"file": "camt.054", "matched": 0, "alreadyApplied": 1, "unknown": ["E2E-NOT-OURS"]})
    );
    let again = post_file(&server, &token, &pain002(&a, &b, "AC04")).await;
    assert_eq!(again.body["alreadyApplied"], 1);
    assert_eq!(again.body["matched"], 0);

    // Unreadable files are refused with nothing applied.
    let doctype = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>{}",
        camt054(&[(&a, "&x;")]).trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
    );
    for bad in [
        "<Document><BkToCstmrDbtCdtNtfctn>".to_string(),
        "not xml at all".to_string(),
        doctype,
        "<Document><Other/></Document>".to_string(),
    ] {
        let reply = post_file(&server, &token, &bad).await;
        assert!(reply.problem(400).contains_key("file"), "{}", reply.body);
    }

    // Dunning retries A by a new debit; after a returned FRST it is FRST again.
    server.advance(&token, "2027-03-03T11:00:00Z").await;
    let retry = server
        .call(
            Method::POST,
            "/api/subscriptions/v1/sepa/batches",
            Some(&token),
            Some(json!({"paymentProcessorId": processor, "collectionDate": "2027-03-05"})),
        )
        .await;
    assert_eq!(retry.status, StatusCode::CREATED, "{}", retry.body);
    assert_eq!(retry.body["count"], 1, "B's revoked mandate takes no debit");
    let xml = sepa::document(&server, &token, retry.body["batchId"].as_str().unwrap()).await;
    assert_valid_pain008(&xml);
    assert_eq!(texts(&xml, "MndtId"), ["RET-A"]);
    assert_eq!(texts(&xml, "SeqTp"), ["FRST"]);
    server.advance(&token, "2027-03-05T11:00:00Z").await;
    assert_eq!(status_of(&server, &token, &keys[0]).await, "Active");
    assert_eq!(open_invoices(&server, &keys[0]).await, 0);
});
