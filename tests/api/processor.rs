//! The sandbox processor behind the `Processor` trait: test-card behaviours, the
//! `chargeEmitterQueue` directive, and idempotent charges, refunds and payouts.

use recur::processor::{ChargeOutcome, ChargeRequest, PayoutRequest, RefundRequest};
use recur_domain::card::CardNumber;
use recur_domain::membership::charge_directive;

use crate::backend_test;
use crate::harness::TestServer;

fn declined_code(outcome: &ChargeOutcome) -> Option<&str> {
    match outcome {
        ChargeOutcome::Declined { code, .. } => Some(code),
        ChargeOutcome::Approved { .. } => None,
    }
}

backend_test!(
    charges_refunds_and_payouts_are_idempotent,
    |server: TestServer| async move {
        let processor = &server.server.state.processor;
        let merchant_id = server.merchant.merchant_id;
        let card = |n: &str| CardNumber::parse(n).unwrap();
        let good = processor
            .tokenize(merchant_id, &card("4242424242424242"))
            .await
            .unwrap();
        let bad = processor
            .tokenize(merchant_id, &card("4000000000000002"))
            .await
            .unwrap();
        let poor = processor
            .tokenize(merchant_id, &card("4000000000009995"))
            .await
            .unwrap();
        let charge = |key: &'static str, token: String, directive| {
            let processor = processor.clone();
            async move {
                processor
                    .charge(ChargeRequest {
                        merchant_id,
                        idempotency_key: key,
                        token: &token,
                        amount: 1000,
                        currency: "EUR",
                        gateway: None,
                        directive,
                    })
                    .await
                    .unwrap()
            }
        };
        let first = charge("k1", good.clone(), None).await;
        let ChargeOutcome::Approved { reference } = &first else {
            panic!("{first:?}")
        };
        assert_eq!(
            charge("k1", good.clone(), None).await,
            first,
            "a repeated key answers the same"
        );
        assert_eq!(
            declined_code(&charge("k2", bad.clone(), None).await),
            Some("card_declined")
        );
        assert_eq!(
            declined_code(&charge("k3", poor.clone(), None).await),
            Some("insufficient_funds")
        );
        let rejected = charge_directive("Rejected", None).unwrap();
        let succeed = charge_directive("Success", None).unwrap();
        let forced = charge("k4", good.clone(), Some(&rejected)).await;
        assert!(
            matches!(&forced, ChargeOutcome::Declined { reason, .. } if reason == "Insufficient funds.")
        );
        assert!(matches!(
            charge("k5", bad.clone(), Some(&succeed)).await,
            ChargeOutcome::Approved { .. }
        ));

        let refund = |key: &'static str, charge_reference: String, amount: i64| {
            let processor = processor.clone();
            async move {
                processor
                    .refund(RefundRequest {
                        merchant_id,
                        idempotency_key: key,
                        charge_reference: &charge_reference,
                        amount,
                        currency: "EUR",
                    })
                    .await
                    .unwrap()
            }
        };
        let partial = refund("r1", reference.clone(), 400).await;
        assert!(matches!(partial, ChargeOutcome::Approved { .. }));
        assert_eq!(
            declined_code(&refund("r2", reference.clone(), 700).await),
            Some("amount_too_large")
        );
        assert!(matches!(
            refund("r3", reference.clone(), 600).await,
            ChargeOutcome::Approved { .. }
        ));
        assert_eq!(
            refund("r1", reference.clone(), 400).await,
            partial,
            "a repeated key is not a second refund"
        );
        assert_eq!(
            declined_code(&refund("r4", "sbx_unknown".into(), 1).await),
            Some("charge_not_found")
        );

        let payout = |key: &'static str, token: String| {
            let processor = processor.clone();
            async move {
                processor
                    .payout(PayoutRequest {
                        merchant_id,
                        idempotency_key: key,
                        token: &token,
                        amount: 2500,
                        currency: "EUR",
                        gateway: None,
                    })
                    .await
                    .unwrap()
            }
        };
        assert!(matches!(
            payout("p1", good.clone()).await,
            ChargeOutcome::Approved { .. }
        ));
        assert_eq!(
            declined_code(&payout("p2", bad.clone()).await),
            Some("card_declined")
        );

        // Another merchant cannot use this merchant's token.
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let stolen = processor
            .charge(ChargeRequest {
                merchant_id: other.merchant_id,
                idempotency_key: "k9",
                token: &good,
                amount: 1,
                currency: "EUR",
                gateway: None,
                directive: None,
            })
            .await
            .unwrap();
        assert_eq!(declined_code(&stolen), Some("invalid_payment_method"));
    }
);
