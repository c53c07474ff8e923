//! What Stripe's webhooks report about payments recur made (DESIGN §17), against localstripe:
//! a refund the merchant made in Stripe's dashboard is recorded once with its credit note,
//! whatever event arrives and however often, and a refund recur made itself is not recorded a
//! second time; a dispute marks the invoice `disputed` and tells the merchant once with a
//! `Chargeback` notification. The events are signed as Stripe documents them (localstripe sends
//! neither type); the refunds they announce are read from localstripe.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::stripe::{customer_with_stripe_card, event, intents_of, stripe};
use crate::fixtures::INVOICE;
use crate::harness::TestServer;

/// An Active membership paid through Stripe: (membership key, invoice key, PaymentIntent id,
/// processor id).
async fn paid_through_stripe(
    server: &TestServer,
    token: &str,
    order: &str,
) -> (String, String, String, i64) {
    let (customer, processor) = customer_with_stripe_card(server, token, "4242424242424242").await;
    let created = server
        .create_membership(token, server.membership_body(&customer, order))
        .await;
    let key = created["membershipKey"].as_str().unwrap().to_string();
    let paid = server.pay(token, &key).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    let invoice = paid.body["invoices"][0]["invoiceKey"]
        .as_str()
        .unwrap()
        .to_string();
    let intent = intents_of(&key).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    (key, invoice, intent, processor)
}

/// A Stripe Charge object of the PaymentIntent, as `charge.refunded` carries it.
fn charge_object(intent: &str, refunded: i64) -> Value {
    json!({"id": format!("ch_of_{intent}"), "object": "charge", "payment_intent": intent,
           "amount": 2997, "amount_refunded": refunded, "refunded": refunded == 2997,
           "currency": "eur", "status": "succeeded"})
}

backend_test!(
    a_refund_made_in_stripes_dashboard_is_recorded_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, invoice, intent, processor) =
            paid_through_stripe(&server, &token, "dashboard-refund").await;

        // The merchant refunds 10.00 in Stripe's dashboard.
        let made = stripe(
            Method::POST,
            "/v1/refunds",
            &[("payment_intent", &intent), ("amount", "1000")],
        )
        .await;
        assert_eq!(made["status"], "succeeded", "{made}");
        let object = charge_object(&intent, 1000);
        let outcome = event(
            &server,
            processor,
            "evt_refund_1",
            "charge.refunded",
            object.clone(),
        )
        .await;
        assert_eq!(outcome, "handled");
        let record = server.membership(&token, &key).await;
        let paid = &record["invoices"][0];
        assert_eq!(paid["invoiceKey"], invoice.as_str());
        assert_eq!(paid["amountRefunded"], "10.00", "{paid}");
        assert_eq!(paid["creditNotes"].as_array().unwrap().len(), 1, "{paid}");
        let stored: String =
            sqlx::query_scalar("SELECT processor_reference FROM refunds WHERE amount = 1000")
                .fetch_one(server.server.state.store.pool())
                .await
                .unwrap();
        assert_eq!(stored, made["id"].as_str().unwrap());

        // The same event again, and another event about the same refund: nothing new.
        assert_eq!(
            event(
                &server,
                processor,
                "evt_refund_1",
                "charge.refunded",
                object.clone()
            )
            .await,
            "repeated"
        );
        event(
            &server,
            processor,
            "evt_refund_2",
            "charge.refunded",
            object,
        )
        .await;

        // A refund recur made itself (metadata refundKey) is recorded by recur once, not again
        // when Stripe reports it.
        let ours = server
            .call(
                Method::POST,
                &format!("{INVOICE}/{invoice}/refund"),
                Some(&token),
                Some(json!({"amount": "5.00"})),
            )
            .await;
        assert!(ours.status.is_success(), "{}", ours.body);
        event(
            &server,
            processor,
            "evt_refund_3",
            "charge.refunded",
            charge_object(&intent, 1500),
        )
        .await;
        let record = server.membership(&token, &key).await;
        let paid = &record["invoices"][0];
        assert_eq!(paid["amountRefunded"], "15.00", "{paid}");
        assert_eq!(paid["creditNotes"].as_array().unwrap().len(), 2, "{paid}");
        let refunds: Vec<Value> = server
            .events("dashboard-refund")
            .await
            .into_iter()
            .filter(|n| n["TransactionType"] == "Refund")
            .collect();
        assert_eq!(refunds.len(), 2, "{refunds:?}");
        assert!(
            refunds.iter().all(|n| n["PaymentProcessorId"] == processor),
            "{refunds:?}"
        );
    }
);

backend_test!(
    a_dispute_marks_the_invoice_and_tells_the_merchant_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, _, intent, processor) =
            paid_through_stripe(&server, &token, "disputed-order").await;
        let dispute = json!({"id": "dp_1Disputed", "object": "dispute", "amount": 2997,
            "charge": format!("ch_of_{intent}"), "payment_intent": intent, "currency": "eur",
            "reason": "fraudulent", "status": "needs_response"});
        let outcome = event(
            &server,
            processor,
            "evt_dispute_1",
            "charge.dispute.created",
            dispute.clone(),
        )
        .await;
        assert_eq!(outcome, "handled");
        event(
            &server,
            processor,
            "evt_dispute_2",
            "charge.dispute.created",
            dispute,
        )
        .await;
        let record = server.membership(&token, &key).await;
        assert_eq!(record["invoices"][0]["disputed"], true, "{record}");
        assert_eq!(record["status"], "Active");
        let chargebacks: Vec<Value> = server
            .events("disputed-order")
            .await
            .into_iter()
            .filter(|n| n["TransactionType"] == "Chargeback")
            .collect();
        assert_eq!(chargebacks.len(), 1, "{chargebacks:?}");
        assert_eq!(chargebacks[0]["ExternalTransactionId"], "dp_1Disputed");
        assert_eq!(chargebacks[0]["DeclineReasonCode"], "fraudulent");
        assert_eq!(chargebacks[0]["Amount"], 29.97);

        // A dispute of a payment recur did not make changes nothing.
        let foreign = json!({"id": "dp_2Foreign", "object": "dispute", "amount": 500,
            "charge": "ch_unknown", "payment_intent": null, "reason": "general"});
        assert_eq!(
            event(
                &server,
                processor,
                "evt_dispute_3",
                "charge.dispute.created",
                foreign
            )
            .await,
            "handled"
        );
    }
);
