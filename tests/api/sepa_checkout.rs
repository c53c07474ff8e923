//! The hosted checkout's SEPA Direct Debit form (DESIGN §18): offered for euro memberships of
//! a merchant with a SEPA processor, with the mandate text naming the creditor and its
//! identifier; refused fields shown beside them with nothing stored; a signed mandate kept
//! with its consent's client address and user agent, the membership Active and the customer
//! pre-notified.

use reqwest::StatusCode;
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::checkout::open;
use crate::fixtures::sepa::{self, CREDITOR_ID};
use crate::fixtures::SESSIONS;
use crate::harness::TestServer;
use crate::visitor::Visitor;

/// A checkout link for a new membership of a new customer, in `currency`.
async fn link(server: &TestServer, token: &str, email: &str, currency: &str) -> (String, String) {
    let customer = server.create_customer(token, email).await;
    let mut body = server.membership_body(&customer, &format!("order-{email}"));
    body["pricingInfo"]["currency"] = json!(currency);
    let key = server.create_membership(token, body).await["membershipKey"]
        .as_str()
        .unwrap()
        .to_string();
    let session = open(
        server,
        token,
        SESSIONS,
        json!({"customerKey": customer, "membershipKey": key}),
    )
    .await;
    (
        key,
        session["checkoutRedirectUrl"].as_str().unwrap().to_string(),
    )
}

backend_matrix!(the_checkout_takes_a_sepa_mandate, |backend| async move {
    let server = TestServer::start(backend).await;
    let token = server.token().await;
    server.advance(&token, "2027-03-01T10:00:00Z").await;
    let visitor = Visitor::new();

    // Without a SEPA processor no mandate is offered.
    let (_, url) = link(&server, &token, "before@example.com", "EUR").await;
    assert!(!visitor
        .get(&url)
        .await
        .text
        .contains("data-testid=\"sepa-form\""));

    sepa::connect(&server, &token, 5).await;
    // Not for other currencies.
    let (_, usd) = link(&server, &token, "usd@example.com", "USD").await;
    assert!(!visitor
        .get(&usd)
        .await
        .text
        .contains("data-testid=\"sepa-form\""));

    let (key, url) = link(&server, &token, "signer@example.com", "EUR").await;
    let page = visitor.get(&url).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text.contains("data-testid=\"sepa-form\""),
        "{}",
        page.text
    );
    assert!(page.text.contains(CREDITOR_ID));
    assert!(
        page.text.contains("Sportverein Müller &amp; Söhne e.V."),
        "the creditor is named"
    );
    let action = format!("{url}/sepa");
    let csrf = page.csrf();

    // Every refused field beside it, nothing stored.
    let refused = visitor
        .post(
            &action,
            &[
                ("csrfToken", &csrf),
                ("accountHolder", ""),
                ("iban", "DE00 1234"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    for field in ["error-iban", "error-accountHolder", "error-consent"] {
        assert!(refused.text.contains(field), "{field}");
    }
    assert!(
        !refused.text.contains("DE00 1234"),
        "the IBAN typed is not shown back"
    );
    let stored = server
            .count(
                "SELECT COUNT(*) FROM sepa_mandates m JOIN payment_methods p ON p.id = m.payment_method_id \
                 JOIN customers c ON c.id = p.customer_id WHERE c.email = $1",
                "signer@example.com",
            )
            .await;
    assert_eq!(stored, 0);
    // A post without the page's token is refused.
    let forged = visitor
        .post(
            &action,
            &[
                ("csrfToken", "x"),
                ("accountHolder", "Ada"),
                ("iban", sepa::DEBTOR_IBAN),
                ("consent", "on"),
            ],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let signed = visitor
        .client
        .post(&action)
        .header("user-agent", "Mozilla/5.0 (recur test)")
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("accountHolder", "Ada Lovelace"),
            ("iban", "de89 3704 0044 0532 0130 00"),
            ("consent", "on"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), StatusCode::SEE_OTHER);
    assert_eq!(server.membership(&token, &key).await["status"], "Active");
    let (agent, address): (String, String) = sqlx::query_as(
        "SELECT m.consent_user_agent, m.consent_address FROM sepa_mandates m \
             JOIN payment_methods p ON p.id = m.payment_method_id \
             JOIN customers c ON c.id = p.customer_id WHERE c.email = $1",
    )
    .bind("signer@example.com")
    .fetch_one(server.server.state.store.pool())
    .await
    .unwrap();
    assert_eq!(agent, "Mozilla/5.0 (recur test)");
    assert_eq!(address, "127.0.0.1");
    let notices = server
        .count(
            "SELECT COUNT(*) FROM emails WHERE kind = 'debit_notice' AND to_address = $1",
            "signer@example.com",
        )
        .await;
    assert_eq!(notices, 1);
    let done = visitor.get(&url).await;
    assert_eq!(done.status, StatusCode::OK);
    assert!(
        !done.text.contains("data-testid=\"sepa-form\""),
        "nothing left to pay"
    );
});
