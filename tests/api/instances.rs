//! Several `recur serve` processes on one PostgreSQL database (DESIGN §1, §8): renewals, dunning
//! retries, webhook deliveries and e-mails are shared between them, one is killed mid-run, and
//! still every period is charged once, every invoice and event is unique, and nothing is lost.
//! SQLite is one process per file, so this runs on PostgreSQL only.

use std::time::Duration;

use recur::store::Store;
use serde_json::json;

use crate::fixtures::faults::scalar;
use crate::harness::fresh_postgres_database;
use crate::process::{until, MerchantApi, Recur};
use crate::receivers::{SmtpSink, WebhookReceiver};

/// Memberships renewed by the three processes.
const MEMBERSHIPS: i64 = 30;
/// Every third membership's renewal is declined once, then paid by a dunning retry.
const DECLINED_ONCE: i64 = MEMBERSHIPS / 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_share_the_work_and_survive_a_kill() {
    let data = tempfile::tempdir().unwrap();
    let receiver = WebhookReceiver::start().await;
    let sink = SmtpSink::start().await;
    let database_url = fresh_postgres_database().await;
    // One data directory: the processes share its server key, as instances must.
    let recur = Recur::delivering_to(data.path(), &database_url, &receiver, &sink);
    let merchant = recur.create_merchant("Instances Test");
    let mut processes: Vec<_> = (0..3).map(|_| recur.serve()).collect();
    let bases: Vec<String> = processes.iter().map(|(_, base)| base.clone()).collect();
    let first = MerchantApi::login(&bases[0], &merchant).await;
    for i in 0..MEMBERSHIPS {
        // Each membership is made at another instance: a token of one is good at all.
        let api = first.at(&bases[usize::try_from(i).unwrap() % bases.len()]);
        let mut body = json!({"subscriptionName": "Shared", "webhookUrl": receiver.url,
               "productInfo": {"orderId": format!("instance-{i}")},
               "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
               "billingCycle": {"intervalType": "Monthly"}});
        if i % 3 == 0 {
            body["chargeEmitterQueue"] =
                json!([{"transactionStatus": "Rejected"}, {"transactionStatus": "Success"}]);
        }
        api.paying_member(&merchant, &format!("instance{i}@example.com"), body)
            .await;
    }

    // Every period ends now: the three billing workers renew them concurrently.
    let store = Store::connect(&database_url).await.unwrap();
    let now = chrono::Utc::now().timestamp_micros();
    sqlx::query(
        "UPDATE memberships SET current_period_start = $1 - 2592000000000, \
         current_period_end = $1, next_action_at = $1",
    )
    .bind(now)
    .execute(store.pool())
    .await
    .unwrap();
    until("renewals under way", Duration::from_secs(30), async || {
        scalar(
            &store,
            "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal'",
        )
        .await
            > 0
    })
    .await;
    let (mut killed, _) = processes.remove(0);
    killed.kill().expect("kill -9");
    killed.wait().unwrap();

    // The dunning retries, a day after each decline, are brought forward to now.
    until("every renewal paid", Duration::from_secs(90), async || {
        sqlx::query(
            "UPDATE memberships SET next_action_at = $1 WHERE status = 'PastDue' \
             AND next_action_at > $1",
        )
        .bind(chrono::Utc::now().timestamp_micros())
        .execute(store.pool())
        .await
        .unwrap();
        scalar(
            &store,
            "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal' AND status = 'Paid'",
        )
        .await
            == MEMBERSHIPS
    })
    .await;
    until("every delivery", Duration::from_secs(90), async || {
        scalar(
            &store,
            "SELECT COUNT(*) FROM events WHERE status <> 'Delivered'",
        )
        .await
            == 0
    })
    .await;
    until("every e-mail", Duration::from_secs(90), async || {
        scalar(&store, "SELECT COUNT(*) FROM emails WHERE status <> 'Sent'").await == 0
    })
    .await;
    for (mut process, _) in processes {
        process.kill().unwrap();
        process.wait().unwrap();
    }

    // Numbers: the processes finalized first payments and renewal batches concurrently, and
    // every invoice has its own number, without gaps.
    let numbers: Vec<String> = sqlx::query_scalar("SELECT number FROM invoices")
        .fetch_all(store.pool())
        .await
        .unwrap();
    crate::fixtures::invoices::assert_gap_free(&numbers, "INV");

    // Money: one approved charge per paid invoice, none paid twice, one invoice per period.
    let payments = 2 * MEMBERSHIPS;
    assert_eq!(
        scalar(
            &store,
            "SELECT COUNT(*) FROM invoices WHERE status = 'Paid'"
        )
        .await,
        payments
    );
    assert_eq!(
        scalar(&store, "SELECT COUNT(*) FROM invoices").await,
        payments,
        "one invoice per period"
    );
    assert_eq!(
        scalar(
            &store,
            "SELECT COUNT(*) FROM (SELECT invoice_id FROM charges WHERE status = 'Success' \
             GROUP BY invoice_id HAVING COUNT(*) > 1) d"
        )
        .await,
        0,
        "no invoice paid twice"
    );
    assert_eq!(
        scalar(
            &store,
            "SELECT COUNT(*) FROM sandbox_charges WHERE kind = 'charge' AND outcome = 'approved'"
        )
        .await,
        payments,
        "the processor moved money once per paid invoice"
    );
    assert_eq!(
        scalar(
            &store,
            "SELECT COUNT(*) FROM charges WHERE kind = 'retry' AND status = 'Success'"
        )
        .await,
        DECLINED_ONCE,
        "each declined renewal was paid by one retry"
    );
    // Webhooks: every event unique and received (a repeat carries an ActionId already sent).
    let action_ids: Vec<String> = sqlx::query_scalar("SELECT action_id FROM events")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let received = receiver.action_ids();
    assert_eq!(received.len(), action_ids.len(), "every event arrived once");
    assert!(action_ids.iter().all(|id| received.contains(id)));
    // E-mails: a receipt per payment and a notice per decline, each arrived.
    let emails = scalar(&store, "SELECT COUNT(*) FROM emails").await;
    assert_eq!(emails, payments + DECLINED_ONCE);
    assert_eq!(
        sink.message_ids().len() as i64,
        emails,
        "every e-mail arrived"
    );
}
