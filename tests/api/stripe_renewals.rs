//! Memberships paid and renewed through a merchant's Stripe account, against localstripe: the
//! first invoice and each renewal are off-session PaymentIntents of the invoice's amount with
//! the membership's key; a card Stripe declines is a 402 with Stripe's code, and nothing is paid.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::stripe::{customer_with_stripe_card, intents_of, stripe};
use crate::fixtures::INVOICE;
use crate::harness::TestServer;

backend_test!(
    a_membership_is_paid_and_renewed_through_stripe,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-01-10T10:00:00Z").await;
        let (customer, _) = customer_with_stripe_card(&server, &token, "4242424242424242").await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "stripe-renewal"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let paid = server.pay(&token, &key).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        assert_eq!(paid.body["status"], "Active");
        let first = intents_of(&key).await;
        assert_eq!(first.len(), 1, "{first:?}");
        assert_eq!(first[0]["status"], "succeeded");
        assert_eq!(first[0]["amount"], 2997);
        assert_eq!(first[0]["currency"], "eur");
        let invoice_key = paid.body["invoices"][0]["invoiceKey"].as_str().unwrap();
        assert_eq!(first[0]["metadata"]["invoiceKey"], invoice_key);
        assert!(first[0]["metadata"]["attemptKey"].is_string());

        server.advance(&token, "2027-02-10T11:00:00Z").await;
        let renewed = server.membership(&token, &key).await;
        assert_eq!(renewed["status"], "Active", "{renewed}");
        let intents = intents_of(&key).await;
        assert_eq!(
            intents.len(),
            2,
            "one PaymentIntent per period: {intents:?}"
        );
        assert!(intents.iter().all(|intent| intent["status"] == "succeeded"));

        // The charges are reported under the Stripe account, with the PaymentIntent's id.
        let charges: Vec<Value> = server
            .events("stripe-renewal")
            .await
            .into_iter()
            .filter(|event| event["Action"] == "TRANSACTION_DATA_UPDATE")
            .collect();
        assert_eq!(charges.len(), 2, "{charges:?}");
        for charge in &charges {
            assert_eq!(charge["PaymentProcessorId"], 301, "{charge}");
            assert_eq!(charge["PaymentProcessor"], "Stripe", "{charge}");
        }
    }
);

backend_test!(
    a_card_stripe_declines_is_a_decline_with_stripes_code,
    |server: TestServer| async move {
        let token = server.token().await;
        // Attaches, then declines every charge.
        let (customer, _) = customer_with_stripe_card(&server, &token, "4000000000000341").await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "stripe-declined"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let refused = server.pay(&token, &key).await;
        let errors = refused.problem(402);
        let reason = errors["payment"][0].as_str().unwrap();
        assert!(reason.ends_with("(card_declined)"), "{reason}");
        assert_eq!(
            server.membership(&token, &key).await["status"],
            "Incomplete"
        );
    }
);

backend_test!(
    an_invoice_paid_through_stripe_is_refunded_through_stripe,
    |server: TestServer| async move {
        let token = server.token().await;
        let (customer, _) = customer_with_stripe_card(&server, &token, "4242424242424242").await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "stripe-refund"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let paid = server.pay(&token, &key).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        let invoice = paid.body["invoices"][0]["invoiceKey"].as_str().unwrap();
        let refunded = server
            .call(
                Method::POST,
                &format!("{INVOICE}/{invoice}/refund"),
                Some(&token),
                Some(json!({"amount": "10.00", "reason": "goodwill"})),
            )
            .await;
        assert!(refunded.status.is_success(), "{}", refunded.body);
        // At Stripe: a refund of 1000 cents of the membership's PaymentIntent.
        let intent = &intents_of(&key).await[0];
        let path = format!(
            "/v1/refunds?limit=100&payment_intent={}",
            intent["id"].as_str().unwrap()
        );
        let refunds = stripe(Method::GET, &path, &[]).await;
        let ours: Vec<&Value> = refunds["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|refund| refund["payment_intent"] == intent["id"])
            .collect();
        assert_eq!(ours.len(), 1, "{refunds}");
        assert_eq!(ours[0]["amount"], 1000);
        assert_eq!(ours[0]["status"], "succeeded");
    }
);
