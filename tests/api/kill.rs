//! kill -9 of the real `recur` binary in the middle of a burst of webhook deliveries, e-mails and
//! a billing run; after a restart nothing is lost and no period is charged twice.

use std::time::Duration;

use recur::store::Store;
use serde_json::json;

use crate::backend_matrix;
use crate::fixtures::faults::{assert_nothing_lost_or_doubled, scalar, settled};
use crate::harness::{fresh_postgres_database, Backend};
use crate::process::{until, MerchantApi, Recur};
use crate::receivers::{SmtpSink, WebhookReceiver};

/// A `recur` on a fresh database of `backend`, delivering to a webhook receiver and an SMTP sink.
struct Fixture {
    /// The data directory, kept until the test ends.
    _data: tempfile::TempDir,
    receiver: WebhookReceiver,
    sink: SmtpSink,
    database_url: String,
    recur: Recur,
}

impl Fixture {
    async fn new(backend: Backend) -> Self {
        let data = tempfile::tempdir().unwrap();
        let receiver = WebhookReceiver::start().await;
        let sink = SmtpSink::start().await;
        let database_url = match backend {
            Backend::Postgres => fresh_postgres_database().await,
            Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
        };
        let recur = Recur::delivering_to(data.path(), &database_url, &receiver, &sink);
        Self {
            _data: data,
            receiver,
            sink,
            database_url,
            recur,
        }
    }
}

/// Memberships in the burst.
const MEMBERSHIPS: usize = 24;

backend_matrix!(
    kill_9_loses_nothing_and_charges_once,
    |backend| async move {
        let Fixture {
            _data,
            receiver,
            sink,
            database_url,
            recur,
        } = Fixture::new(backend).await;
        let merchant = recur.create_merchant("Kill Test");

        // A slow endpoint keeps deliveries in flight while the memberships are made.
        receiver.delay(Duration::from_millis(150));
        let (mut first, base) = recur.serve();
        let api = MerchantApi::login(&base, &merchant).await;
        for i in 0..MEMBERSHIPS {
            api.paying_member(
                &merchant,
                &format!("kill{i}@example.com"),
                json!({"subscriptionName": "Gold", "webhookUrl": receiver.url,
                       "productInfo": {"orderId": format!("kill-{i}")},
                       "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                       "billingCycle": {"intervalType": "Monthly"}}),
            )
            .await;
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
        // Killed once renewals have begun while deliveries are still owed (on a loaded machine
        // the first events may all be delivered before the first renewal is recorded).
        until(
            "the first renewal with deliveries owed",
            Duration::from_secs(20),
            async || {
                scalar(
                    &store,
                    "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal'",
                )
                .await
                    > 0
                    && scalar(
                        &store,
                        "SELECT COUNT(*) FROM events WHERE status <> 'Delivered'",
                    )
                    .await
                        > 0
            },
        )
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

/// Memberships renewed daily through the interrupted advance.
const CLOCK_MEMBERSHIPS: usize = 4;
/// Days the interrupted advance covers: one renewal per membership and day.
const CLOCK_DAYS: i64 = 150;

backend_matrix!(
    a_test_clock_advance_killed_mid_way_is_resumed_by_the_workers,
    |backend| async move {
        let Fixture {
            _data,
            receiver,
            sink: _sink,
            database_url,
            recur,
        } = Fixture::new(backend).await;
        let merchant = recur.create_merchant("Clock Kill Test");
        let (mut first, base) = recur.serve();
        let api = MerchantApi::login(&base, &merchant).await;
        api.post("/test-clock/advance", json!({"to": "2027-01-01T00:00:00Z"}))
            .await;
        for i in 0..CLOCK_MEMBERSHIPS {
            api.paying_member(
                &merchant,
                &format!("clock{i}@example.com"),
                json!({"subscriptionName": "Daily", "webhookUrl": receiver.url,
                       "productInfo": {"orderId": format!("clock-{i}")},
                       "pricingInfo": {"currency": "EUR", "totalAmount": "1.00"},
                       "billingCycle": {"intervalType": "Daily"}}),
            )
            .await;
        }
        // The advance runs in the server; the process is killed once it is under way.
        let to = chrono::DateTime::parse_from_rfc3339("2027-01-01T00:00:00Z").unwrap()
            + chrono::TimeDelta::days(CLOCK_DAYS);
        let advance = tokio::spawn(api.send("/test-clock/advance", json!({"to": to.to_rfc3339()})));
        let store = Store::connect(&database_url).await.unwrap();
        let renewals = "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal'";
        until(
            "the advance under way",
            Duration::from_secs(30),
            async || scalar(&store, renewals).await > 10,
        )
        .await;
        first.kill().expect("kill -9");
        first.wait().unwrap();
        assert!(
            advance.await.unwrap().is_err(),
            "the advance never answered"
        );
        let expected = CLOCK_MEMBERSHIPS as i64 * CLOCK_DAYS;
        assert!(
            scalar(&store, renewals).await < expected,
            "the kill came in the middle of the advance"
        );
        let unfinished = "SELECT COUNT(*) FROM test_clocks WHERE catching_up_since IS NOT NULL";
        assert_eq!(scalar(&store, unfinished).await, 1);

        // No second advance: the restarted process's billing worker finishes the catch-up.
        let (mut second, _) = recur.serve();
        until(
            "the catch-up finished",
            Duration::from_secs(120),
            async || scalar(&store, unfinished).await == 0,
        )
        .await;
        second.kill().unwrap();
        second.wait().unwrap();
        assert_eq!(
            scalar(&store, renewals).await,
            expected,
            "every day renewed"
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal' AND status = 'Paid'"
            )
            .await,
            expected
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM (SELECT invoice_id FROM charges WHERE status = 'Success' \
                 GROUP BY invoice_id HAVING COUNT(*) > 1) doubled"
            )
            .await,
            0,
            "no invoice was paid twice"
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM sandbox_charges WHERE outcome = 'approved'"
            )
            .await,
            expected + CLOCK_MEMBERSHIPS as i64,
            "the processor saw one charge per period"
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT COUNT(*) FROM charges WHERE status = 'Pending'"
            )
            .await,
            0
        );
    }
);
