//! kill -9 of the real `recur` binary between Stripe's answer and recur's commit (DESIGN §17):
//! Stripe charged, recur never recorded it. After a restart the billing worker's recovery finds
//! the PaymentIntent Stripe made for the attempt and records it: the membership is paid once,
//! and Stripe holds one PaymentIntent for it, not two.

use std::time::Duration;

use recur::store::Store;
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::faults::scalar;
use crate::fixtures::stripe::{intents_of, stripe, SECRET_KEY};
use crate::fixtures::stripe_link::{Mode, StripeLink};
use crate::harness::{fresh_postgres_database, Backend};
use crate::process::{until, MerchantApi, Recur};

backend_matrix!(
    kill_9_between_stripes_answer_and_the_commit_charges_once,
    |backend| async move {
        let data = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Postgres => fresh_postgres_database().await,
            Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
        };
        let link = StripeLink::start().await;
        let recur = Recur {
            env: [
                ("RECUR_DATA_DIR", data.path().display().to_string()),
                ("RECUR_DATABASE_URL", database_url.clone()),
                ("RECUR_LISTEN", "127.0.0.1:0".into()),
                ("RECUR_DEMO_MERCHANT", "false".into()),
                ("RECUR_LOG", "warn".into()),
                ("RECUR_BILLING_RECOVERY_SECONDS", "1".into()),
                ("RECUR_STRIPE_API_BASE", link.url.clone()),
                ("RECUR_STRIPE_TIMEOUT_SECONDS", "60".into()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        };
        let merchant = recur.create_merchant("Stripe Kill Test");
        let (mut first, base) = recur.serve();
        let api = MerchantApi::login(&base, &merchant).await;
        let connected = api
            .post(
                "/processors",
                json!({"kind": "stripe", "name": "Stripe", "secretKey": SECRET_KEY,
                       "publishableKey": "pk_test_51Kill", "webhookSecret": "whsec_kill"}),
            )
            .await;
        let customer = api
            .post(
                "/customer",
                json!({"processorKey": merchant["processorKey"], "firstName": "Kim",
                       "lastName": "Killed", "email": "killed@example.com",
                       "phone": "+4915112345678", "countryCode": "DE"}),
            )
            .await["customerKey"]
            .clone();
        let card = stripe(
            reqwest::Method::POST,
            "/v1/payment_methods",
            &[
                ("type", "card"),
                ("card[number]", "4242424242424242"),
                ("card[exp_month]", "12"),
                ("card[exp_year]", "2030"),
                ("card[cvc]", "123"),
            ],
        )
        .await;
        api.post(
            &format!("/customer/{}/payment-method", customer.as_str().unwrap()),
            json!({"paymentProcessorId": connected["paymentProcessorId"],
                   "paymentMethod": card["id"]}),
        )
        .await;
        let created = api
            .post(
                "/membership",
                json!({"customerKey": customer, "subscriptionName": "Gold",
                       "webhookUrl": "https://merchant.example/hooks",
                       "productInfo": {"orderId": "stripe-kill"},
                       "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                       "billingCycle": {"intervalType": "Monthly"}}),
            )
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();

        // Stripe answers; the answer is held until recur is gone.
        link.set(Mode::Hold);
        let paying =
            tokio::spawn(api.send(&format!("/test-helpers/membership/{key}/pay"), json!({})));
        until("Stripe charged", Duration::from_secs(30), async || {
            intents_of(&key)
                .await
                .iter()
                .any(|intent| intent["status"] == "succeeded")
        })
        .await;
        first.kill().expect("kill -9");
        first.wait().unwrap();
        assert!(paying.await.unwrap().is_err(), "the payment never answered");
        let store = Store::connect(&database_url).await.unwrap();
        let pending = "SELECT COUNT(*) FROM charges WHERE status = 'Pending'";
        assert_eq!(scalar(&store, pending).await, 1, "killed before the commit");

        link.set(Mode::Pass);
        let (mut second, _) = recur.serve();
        until(
            "the attempt recovered",
            Duration::from_secs(60),
            async || scalar(&store, pending).await == 0,
        )
        .await;
        second.kill().unwrap();
        second.wait().unwrap();
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM charges WHERE status = 'Success'"
            )
            .await,
            1
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM memberships WHERE status = 'Active'"
            )
            .await,
            1
        );
        assert_eq!(
            intents_of(&key).await.len(),
            1,
            "one PaymentIntent at Stripe"
        );
    }
);
