//! What the fault tests (`kill.rs`, `soak.rs`) share: waiting until a restarted server has
//! finished everything, and the checks that nothing was lost and no money moved twice.

use std::time::Duration;

use recur::store::Store;

use crate::process::until;
use crate::receivers::{SmtpSink, WebhookReceiver};

/// One number from the database.
pub async fn scalar(store: &Store, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(store.pool())
        .await
        .unwrap()
}

/// Waits until `renewals` renewal invoices are paid and every event and e-mail is delivered.
pub async fn settled(store: &Store, renewals: i64, timeout: Duration) {
    until("every renewal", timeout, async || {
        scalar(
            store,
            "SELECT COUNT(*) FROM invoices WHERE kind = 'renewal' AND status = 'Paid'",
        )
        .await
            == renewals
    })
    .await;
    until("every delivery", timeout, async || {
        scalar(
            store,
            "SELECT COUNT(*) FROM events WHERE status <> 'Delivered'",
        )
        .await
            == 0
    })
    .await;
    until("every e-mail", timeout, async || {
        scalar(store, "SELECT COUNT(*) FROM emails WHERE status <> 'Sent'").await == 0
    })
    .await;
}

/// After a settled run with `payments` successful payments (first payments and renewals, one
/// receipt each): no invoice paid twice, one approved processor charge per payment, every event
/// arrived (repeats only with an ActionId already sent), every e-mail arrived (a repeat carries
/// the same Message-ID).
pub async fn assert_nothing_lost_or_doubled(
    store: &Store,
    receiver: &WebhookReceiver,
    sink: &SmtpSink,
    payments: i64,
) {
    assert_eq!(
        scalar(
            store,
            "SELECT COUNT(*) FROM (SELECT invoice_id FROM charges WHERE status = 'Success' \
             GROUP BY invoice_id HAVING COUNT(*) > 1) d"
        )
        .await,
        0,
        "no invoice paid twice"
    );
    assert_eq!(
        scalar(store, "SELECT COUNT(*) FROM invoices WHERE status = 'Paid'").await,
        payments
    );
    assert_eq!(
        scalar(
            store,
            "SELECT COUNT(*) FROM sandbox_charges WHERE kind = 'charge' AND outcome = 'approved'"
        )
        .await,
        payments,
        "the processor moved money once per paid invoice"
    );
    let action_ids: Vec<String> = sqlx::query_scalar("SELECT action_id FROM events")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let received = receiver.action_ids();
    assert_eq!(
        received.len(),
        action_ids.len(),
        "every event arrived, none invented"
    );
    assert!(action_ids.iter().all(|id| received.contains(id)));
    let emails = scalar(store, "SELECT COUNT(*) FROM emails").await;
    assert_eq!(emails, payments, "a receipt per payment");
    assert_eq!(
        sink.message_ids().len() as i64,
        emails,
        "every e-mail arrived"
    );
}
