//! kill -9 of the real `recur` binary in the middle of a burst of webhook deliveries, e-mails and
//! a billing run; after a restart nothing is lost and no period is charged twice.

use std::time::Duration;

use recur::store::Store;
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::faults::{assert_nothing_lost_or_doubled, scalar, settled};
use crate::harness::{fresh_postgres_database, Backend};
use crate::process::{access_token, until, Recur};
use crate::receivers::{SmtpSink, WebhookReceiver};

/// Memberships in the burst.
const MEMBERSHIPS: usize = 24;

backend_matrix!(
    kill_9_loses_nothing_and_charges_once,
    |backend| async move {
        let data = tempfile::tempdir().unwrap();
        let receiver = WebhookReceiver::start().await;
        let sink = SmtpSink::start().await;
        let database_url = match backend {
            Backend::Postgres => fresh_postgres_database().await,
            Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
        };
        let recur = Recur::delivering_to(data.path(), &database_url, &receiver, &sink);
        let merchant = recur.create_merchant("Kill Test");

        // A slow endpoint keeps deliveries in flight while the memberships are made.
        receiver.delay(Duration::from_millis(150));
        let (mut first, base) = recur.serve();
        let client = reqwest::Client::new();
        let api = format!("{base}/api/subscriptions/v1");
        let token = access_token(&client, &api, &merchant).await;
        let post = |path: String, body: Value| {
            let request = client
                .post(format!("{api}{path}"))
                .bearer_auth(&token)
                .json(&body);
            async move {
                let response = request.send().await.unwrap();
                let status = response.status();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                assert!(status.is_success(), "{path}: {status} {body}");
                body
            }
        };
        for i in 0..MEMBERSHIPS {
            let customer = post(
            "/customer".into(),
            json!({"processorKey": merchant["processorKey"], "firstName": "Kim", "lastName": "Kill",
                   "email": format!("kill{i}@example.com"), "phone": "+4915112345678", "countryCode": "DE"}),
        )
        .await;
            let customer_key = customer["customerKey"].as_str().unwrap().to_string();
            post(
                "/test-helpers/payment-method".into(),
                json!({"customerKey": customer_key, "cardNumber": "4242424242424242"}),
            )
            .await;
            let membership = post(
            "/membership".into(),
            json!({"customerKey": customer_key, "subscriptionName": "Gold", "webhookUrl": receiver.url,
                   "productInfo": {"orderId": format!("kill-{i}")},
                   "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                   "billingCycle": {"intervalType": "Monthly"}}),
        )
        .await;
            let key = membership["membershipKey"].as_str().unwrap();
            post(format!("/test-helpers/membership/{key}/pay"), json!({})).await;
        }
        // Their periods end now: the billing worker renews them while deliveries are running.
        let store = Store::connect(&database_url).await.unwrap();
        let now = chrono::Utc::now().timestamp_micros();
        sqlx::query(
        "UPDATE memberships SET current_period_start = $1 - 2592000000000, current_period_end = $1, \
         next_action_at = $1",
    )
    .bind(now)
    .execute(store.pool())
    .await
    .unwrap();
        until("the first renewal", Duration::from_secs(20), async || {
            scalar(
                &store,
                "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal'",
            )
            .await
                > 0
        })
        .await;
        first.kill().expect("kill -9");
        first.wait().unwrap();
        let delivered_before = receiver.received().len();
        let events_before = scalar(
            &store,
            "SELECT COUNT(*) FROM events WHERE status = 'Delivered'",
        )
        .await;
        let total_events = scalar(&store, "SELECT COUNT(*) FROM events").await;
        assert!(
        events_before < total_events,
        "the kill came in the middle of the burst ({events_before} of {total_events} delivered)"
    );

        receiver.delay(Duration::ZERO);
        let (mut second, _) = recur.serve();
        settled(&store, MEMBERSHIPS as i64, Duration::from_secs(60)).await;
        second.kill().unwrap();
        second.wait().unwrap();

        // Money, webhooks, e-mails: one payment per period, nothing lost.
        assert_nothing_lost_or_doubled(&store, &receiver, &sink, 2 * MEMBERSHIPS as i64).await;
        assert!(receiver.received().len() >= delivered_before);
    }
);
