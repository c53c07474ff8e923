//! Checkout and portal sessions, and the hosted pages behind them, over plain HTTP (the browser
//! tests drive the same pages in Chromium).

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::backend_test;
use crate::fixtures::checkout::open;
use crate::fixtures::memberships::charges;
use crate::fixtures::SESSIONS;
use crate::harness::TestServer;
use crate::visitor::Visitor;

const PORTAL: &str = "/api/subscriptions/v1/portal/session";

/// A customer with an Incomplete membership and a checkout link for it.
async fn checkout_link(server: &TestServer, token: &str, email: &str) -> (String, String, String) {
    let customer = server.create_customer(token, email).await;
    let membership = server
        .create_membership(token, server.membership_body(&customer, "order-1"))
        .await["membershipKey"]
        .as_str()
        .unwrap()
        .to_string();
    let session = open(
        server,
        token,
        SESSIONS,
        json!({"customerKey": customer, "membershipKey": membership,
               "returnToWebsiteLink": "https://merchant.example/thanks"}),
    )
    .await;
    let url = session["checkoutRedirectUrl"].as_str().unwrap().to_string();
    (customer, membership, url)
}

backend_test!(
    checkout_and_portal_sessions_are_told_apart,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, membership, url) = checkout_link(&server, &token, "a@example.com").await;
        assert!(
            url.starts_with(&format!("{}/checkout/", server.base_url)),
            "{url}"
        );
        let random = url.rsplit('/').next().unwrap();
        assert_eq!(random.len(), 40);
        assert!(random.chars().all(|c| c.is_ascii_alphanumeric()));

        let checkout = open(
            &server,
            &token,
            SESSIONS,
            json!({"customerKey": customer, "membershipKey": membership}),
        )
        .await;
        assert!(checkout["sessionId"].as_str().unwrap().starts_with("cs_"));
        assert_ne!(checkout["checkoutRedirectUrl"].as_str().unwrap(), url);
        let expires =
            chrono::DateTime::parse_from_rfc3339(checkout["expiresAt"].as_str().unwrap()).unwrap();
        let hours = (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes();
        assert!((23 * 60..=24 * 60).contains(&hours), "{hours} minutes");

        for (path, body) in [
            (SESSIONS, json!({"customerKey": customer})),
            (PORTAL, json!({"customerKey": customer})),
        ] {
            let portal = open(&server, &token, path, body).await;
            assert!(portal["sessionId"].as_str().unwrap().starts_with("ps_"));
            assert!(portal.get("checkoutRedirectUrl").is_none());
            let link = portal["portalRedirectUrl"].as_str().unwrap();
            assert!(link.starts_with(&format!("{}/portal/", server.base_url)));
            let expires =
                chrono::DateTime::parse_from_rfc3339(portal["expiresAt"].as_str().unwrap())
                    .unwrap();
            let minutes = (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes();
            assert!((58..=60).contains(&minutes), "{minutes} minutes");
        }
        let reply = server
            .call(
                Method::POST,
                PORTAL,
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": membership})),
            )
            .await;
        assert!(reply.problem(400).contains_key("membershipKey"));
    }
);

backend_test!(
    session_requests_are_validated_and_scoped_to_the_merchant,
    |server: TestServer| async move {
        let token = server.token().await;
        let reply = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"membershipKey": "sub_1", "returnToWebsiteLink": "http://merchant.example"})),
            )
            .await;
        let errors = reply.problem(400);
        for field in ["customerKey", "membershipKey", "returnToWebsiteLink"] {
            assert!(errors.contains_key(field), "{field}: {errors:?}");
        }
        let reply = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"customerKey": "cstmr_nope"})),
            )
            .await;
        assert!(reply.problem(400).contains_key("customerKey"));

        let (customer, membership, _) = checkout_link(&server, &token, "a@example.com").await;
        let other_customer = server.create_customer(&token, "b@example.com").await;
        let reply = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&token),
                Some(json!({"customerKey": other_customer, "membershipKey": membership})),
            )
            .await;
        assert_eq!(
            reply.problem(400)["membershipKey"][0],
            "belongs to another customer"
        );

        // Another merchant sees neither the customer nor the membership.
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let other_token = server.token_for(&other).await;
        let reply = server
            .call(
                Method::POST,
                SESSIONS,
                Some(&other_token),
                Some(json!({"customerKey": customer, "membershipKey": membership})),
            )
            .await;
        let errors = reply.problem(400);
        assert!(errors.contains_key("customerKey") && errors.contains_key("membershipKey"));

        let reply = server
            .call(
                Method::POST,
                SESSIONS,
                None,
                Some(json!({"customerKey": customer})),
            )
            .await;
        reply.problem(401);
    }
);

backend_test!(
    a_membership_with_nothing_to_pay_is_a_conflict,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        let active = server
            .active_membership(
                &token,
                "2027-01-10T09:00:00Z",
                server.membership_body(&customer, "order-1"),
            )
            .await;
        let key = active["membershipKey"].as_str().unwrap();
        let body = json!({"customerKey": customer, "membershipKey": key});
        let reply = server
            .call(Method::POST, SESSIONS, Some(&token), Some(body.clone()))
            .await;
        reply.problem(409);
        let canceled = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{key}"),
                Some(&token),
                None,
            )
            .await;
        assert_eq!(canceled.status, StatusCode::OK);
        let reply = server
            .call(Method::POST, SESSIONS, Some(&token), Some(body))
            .await;
        reply.problem(409);
    }
);

backend_test!(
    paying_twice_never_charges_twice,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, membership, url) = checkout_link(&server, &token, "a@example.com").await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("€29.97"), "the amount due today");
        assert!(page.csp.contains("frame-ancestors 'none'"), "{}", page.csp);
        assert!(
            page.csp
                .contains("form-action 'self' https://merchant.example"),
            "the form may end on the return link: {}",
            page.csp
        );
        let csrf = page.csrf();
        let form = [
            ("csrfToken", csrf.as_str()),
            ("cardNumber", "4242 4242 4242 4242"),
            ("expiry", "12/34"),
            ("cvc", "123"),
            ("holder", "Ada Lovelace"),
        ];
        // A double click: two posts at once.
        let (a, b) = tokio::join!(visitor.post(&url, &form), visitor.post(&url, &form));
        let locations: Vec<_> = [&a, &b].iter().map(|p| p.location.clone()).collect();
        assert!(
            locations.contains(&Some("https://merchant.example/thanks".into())),
            "{locations:?}"
        );
        // A reload of the form, and a second tab.
        let again = visitor.post(&url, &form).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert_eq!(charges(&server, &membership).await, 1, "one charge");
        let record = server.membership(&token, &membership).await;
        assert_eq!(record["status"], "Active");
        assert_eq!(record["invoices"][0]["status"], "Paid");
        let done = visitor.get(&url).await;
        assert!(done.text.contains("Payment successful"), "{}", done.text);
        // One receipt e-mail and one status-change event, in the payment's transaction.
        let customer_key = record["customerKey"].as_str().unwrap();
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM emails e JOIN customers c ON c.id = e.customer_id \
                     WHERE c.customer_key = $1 AND e.kind = 'receipt'",
                    customer_key,
                )
                .await,
            1
        );
        let events = server.events("order-1").await;
        assert!(
            events
                .iter()
                .any(|e| e["Action"] == "SUBSCRIPTION_STATUS_CHANGED"),
            "{events:?}"
        );
        // The card is now the customer's payment method for renewals.
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM payment_methods p JOIN customers c ON c.id = p.customer_id \
                     WHERE c.customer_key = $1 AND p.attached_at IS NOT NULL AND p.last4 = '4242'",
                    record["customerKey"].as_str().unwrap(),
                )
                .await,
            1
        );
    }
);

backend_test!(
    card_errors_and_declines_leave_the_membership_incomplete,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, membership, url) = checkout_link(&server, &token, "a@example.com").await;
        server
            .attach_card(&token, &customer, "5555555555554444")
            .await;
        let visitor = Visitor::new();
        let csrf = visitor.get(&url).await.csrf();
        let page = visitor
            .post(
                &url,
                &[
                    ("csrfToken", csrf.as_str()),
                    ("cardNumber", "4242 4242 4242 4241"),
                    ("expiry", "01/20"),
                    ("cvc", "12"),
                    ("holder", " "),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST);
        for message in [
            "Enter a valid card number.",
            "This card has expired.",
            "3 digits, or 4 for American Express",
            "Enter the name shown on the card.",
        ] {
            assert!(page.text.contains(message), "{message}");
        }
        assert!(!page.text.contains("4242 4242 4242 4241"), "never echoed");

        let declined = visitor.pay(&url, "4000 0000 0000 0002").await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        assert!(declined.text.contains("Your card was declined."));
        let insufficient = visitor.pay(&url, "4000000000009995").await;
        assert!(insufficient.text.contains("insufficient funds"));
        assert_eq!(
            server.membership(&token, &membership).await["status"],
            "Incomplete"
        );
        // The declined cards did not replace the saved one.
        assert_eq!(
            server
                .count(
                    "SELECT COUNT(*) FROM payment_methods p JOIN customers c ON c.id = p.customer_id \
                     WHERE c.customer_key = $1 AND p.attached_at IS NOT NULL",
                    &customer,
                )
                .await,
            1
        );
        // The customer tries again with a good card.
        let paid = visitor.pay(&url, "4242424242424242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        assert_eq!(
            server.membership(&token, &membership).await["status"],
            "Active"
        );
    }
);

backend_test!(
    the_challenge_card_asks_the_customer_to_confirm,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, membership, url) = checkout_link(&server, &token, "a@example.com").await;
        let visitor = Visitor::new();
        let step = visitor.pay(&url, "4000 0000 0000 3220").await;
        assert_eq!(step.status, StatusCode::SEE_OTHER);
        let challenge = visitor.get(&url).await;
        assert!(challenge.text.contains("Confirm it"), "{}", challenge.text);
        assert!(challenge.text.contains("•••• 3220"));
        assert_eq!(
            charges(&server, &membership).await,
            0,
            "nothing charged yet"
        );
        let csrf = challenge.csrf();
        let failed = visitor
            .post(
                &format!("{url}/confirm"),
                &[("csrfToken", &csrf), ("action", "fail")],
            )
            .await;
        assert_eq!(failed.status, StatusCode::PAYMENT_REQUIRED);
        assert!(failed.text.contains("could not confirm"));
        assert_eq!(
            server.membership(&token, &membership).await["status"],
            "Incomplete"
        );

        visitor.pay(&url, "4000 0000 0000 3220").await;
        let csrf = visitor.get(&url).await.csrf();
        let confirmed = visitor
            .post(
                &format!("{url}/confirm"),
                &[("csrfToken", &csrf), ("action", "confirm")],
            )
            .await;
        assert_eq!(
            confirmed.location.as_deref(),
            Some("https://merchant.example/thanks")
        );
        assert_eq!(
            server.membership(&token, &membership).await["status"],
            "Active"
        );
        assert_eq!(charges(&server, &membership).await, 1);
    }
);

backend_test!(
    forms_from_other_sites_are_refused,
    |server: TestServer| async move {
        let token = server.token().await;
        let (_, membership, url) = checkout_link(&server, &token, "a@example.com").await;
        let visitor = Visitor::new();
        let csrf = visitor.get(&url).await.csrf();
        let form = [
            ("csrfToken", csrf.as_str()),
            ("cardNumber", "4242424242424242"),
            ("expiry", "12/34"),
            ("cvc", "123"),
            ("holder", "Ada"),
        ];
        let cross_site = visitor
            .client
            .post(&url)
            .header("sec-fetch-site", "cross-site")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
        let mut forged = form;
        forged[0].1 = "0000";
        assert_eq!(
            visitor.post(&url, &forged).await.status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            server.membership(&token, &membership).await["status"],
            "Incomplete"
        );
        let malformed = visitor
            .client
            .post(&url)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            malformed.headers()["content-type"],
            "application/problem+json"
        );
    }
);

backend_test!(
    expired_and_unknown_links_show_a_clear_page,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-03-01T08:00:00Z").await;
        let (customer, _, url) = checkout_link(&server, &token, "a@example.com").await;
        let portal = open(&server, &token, PORTAL, json!({"customerKey": customer})).await;
        let portal = portal["portalRedirectUrl"].as_str().unwrap().to_string();
        let visitor = Visitor::new();
        assert_eq!(visitor.get(&portal).await.status, StatusCode::OK);
        server.advance(&token, "2027-03-01T09:00:01Z").await;
        let gone = visitor.get(&portal).await;
        assert_eq!(gone.status, StatusCode::GONE, "a portal link lasts an hour");
        assert!(gone.text.contains("no longer valid"));
        assert_eq!(visitor.get(&url).await.status, StatusCode::OK);
        server.advance(&token, "2027-03-02T08:00:01Z").await;
        assert_eq!(visitor.get(&url).await.status, StatusCode::GONE, "24 hours");
        for bad in [
            format!("{}/checkout/not-a-token", server.base_url),
            url.replace("/checkout/", "/portal/"),
        ] {
            assert_eq!(visitor.get(&bad).await.status, StatusCode::GONE, "{bad}");
        }
    }
);

backend_test!(
    the_portal_shows_invoices_replaces_the_card_and_cancels,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "a@example.com").await;
        let active = server
            .active_membership(
                &token,
                "2027-01-10T09:00:00Z",
                server.membership_body(&customer, "order-1"),
            )
            .await;
        let key = active["membershipKey"].as_str().unwrap().to_string();
        let invoice = active["invoices"][0]["invoiceKey"]
            .as_str()
            .unwrap()
            .to_string();
        let session = open(
            &server,
            &token,
            PORTAL,
            json!({"customerKey": customer, "returnToWebsiteLink": "https://merchant.example/account"}),
        )
        .await;
        let portal = session["portalRedirectUrl"].as_str().unwrap().to_string();
        let visitor = Visitor::new();
        let page = visitor.get(&portal).await;
        assert_eq!(page.status, StatusCode::OK);
        for text in [
            "Gold plan",
            "€29.97",
            "Active",
            "10 Feb 2027",
            &invoice,
            "href=\"https:&#x2f;&#x2f;merchant.example&#x2f;account\"",
            "•••• 4242",
        ] {
            assert!(page.text.contains(text), "{text}");
        }
        let html = visitor.get(&format!("{portal}/invoices/{invoice}")).await;
        assert_eq!(html.status, StatusCode::OK);
        assert!(
            html.text.contains("10 Jan 2027 – 10 Feb 2027"),
            "service period"
        );
        let pdf = visitor
            .client
            .get(format!("{portal}/invoices/{invoice}/pdf"))
            .send()
            .await
            .unwrap();
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        let bytes = pdf.bytes().await.unwrap();
        assert!(bytes.starts_with(b"%PDF-"));
        let number = active["invoices"][0]["number"].as_str().unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains(number));

        // Someone else's invoice is not shown.
        let stranger = server.create_customer(&token, "b@example.com").await;
        let theirs = server
            .active_membership(
                &token,
                "2027-01-10T09:30:00Z",
                server.membership_body(&stranger, "order-2"),
            )
            .await;
        let their_invoice = theirs["invoices"][0]["invoiceKey"].as_str().unwrap();
        assert_eq!(
            visitor
                .get(&format!("{portal}/invoices/{their_invoice}"))
                .await
                .status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            visitor
                .get(&format!("{portal}/invoices/{their_invoice}/pdf"))
                .await
                .status,
            StatusCode::NOT_FOUND
        );

        // Replace the card: a declined card is refused, a good one replaces it.
        let card_page = format!("{portal}/payment-method");
        let refused = visitor.pay(&card_page, "4000000000000002").await;
        assert_eq!(refused.status, StatusCode::PAYMENT_REQUIRED);
        let replaced = visitor.pay(&card_page, "5555 5555 5555 4444").await;
        assert_eq!(
            replaced.location,
            Some(format!(
                "{}?done=card",
                portal.trim_start_matches(&server.base_url)
            ))
        );
        let page = visitor.get(&portal).await;
        assert!(page.text.contains("•••• 4444"));

        // Cancel: a confirmation page, then at once.
        let cancel_url = format!("{portal}/memberships/{key}/cancel");
        let confirm = visitor.get(&cancel_url).await;
        assert!(confirm.text.contains("takes effect immediately"));
        let forged = visitor.post(&cancel_url, &[("csrfToken", "nope")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
        let done = visitor
            .post(&cancel_url, &[("csrfToken", &confirm.csrf())])
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        assert_eq!(server.membership(&token, &key).await["status"], "Canceled");
        // A stranger's membership cannot be canceled through this portal.
        let their_key = theirs["membershipKey"].as_str().unwrap();
        let other = visitor
            .post(
                &format!("{portal}/memberships/{their_key}/cancel"),
                &[("csrfToken", &confirm.csrf())],
            )
            .await;
        assert_eq!(other.status, StatusCode::NOT_FOUND);
        assert_eq!(
            server.membership(&token, their_key).await["status"],
            "Active"
        );
    }
);
