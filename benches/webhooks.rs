//! Webhook deliveries per second to a local HTTPS receiver, against the rate at which a plain
//! HTTPS client gets answers from that same receiver, in one run.
//!
//! `cargo bench --bench webhooks -- [--events N] [--backend sqlite|postgres]` (both when absent)
//!
//! The receiver (tests/api/receivers.rs) answers at once. Raw: N POSTs of the same size from 4
//! concurrent tasks over one keep-alive client. recur: N due events in the outbox, delivered by the
//! dispatcher of `recur serve`, which keeps at most 4 deliveries in flight per endpoint (each
//! signed, leased and recorded in the database).

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/args.rs"]
mod args;
#[path = "support/drain.rs"]
mod drain;
#[path = "support/report.rs"]
mod report;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/state.rs"]
mod state;

#[path = "../tests/api/receivers.rs"]
#[allow(dead_code)]
mod receivers;

use std::time::Instant;

use args::Args;
use receivers::WebhookReceiver;
use recur::store::outbox::{self, NewEvent};
use recur::store::Backend;
use scratch::ScratchDatabase;

/// In flight at once: the dispatcher's per-endpoint bound.
const CONCURRENCY: usize = 4;

/// Untimed POSTs before the raw rate is measured.
const WARM_UP: usize = 2000;

fn payload(i: usize) -> serde_json::Value {
    serde_json::json!({
        "Action": "SUBSCRIPTION_STATUS_CHANGED",
        "ActionId": uuid::Uuid::new_v4().to_string(),
        "OrderId": format!("bench-{i}"),
        "IssuedAt": "2026-11-23T12:00:00Z",
        "Membership": {"Id": "mmbrshp_x", "Key": "mmbrshp_x", "CustomerKey": "cstmr_x", "Status": "Active", "Invoices": []}
    })
}

async fn raw_rate(receiver: &WebhookReceiver, n: usize) -> f64 {
    let ca = std::fs::read(&receiver.ca_path).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let body = payload(0).to_string();
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|w| {
            let (client, url, body) = (client.clone(), receiver.url.clone(), body.clone());
            tokio::spawn(async move {
                for _ in (w..n).step_by(CONCURRENCY) {
                    let status = client
                        .post(&url)
                        .body(body.clone())
                        .send()
                        .await
                        .unwrap()
                        .status();
                    assert!(status.is_success());
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

async fn recur_rate(receiver: &WebhookReceiver, database_url: &str, n: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = vec![("RECUR_WEBHOOK_CONCURRENCY", CONCURRENCY.to_string())];
    settings.extend(receiver.settings());
    let (state, merchant) = state::with_merchant(database_url, dir.path(), &settings).await;
    let now = chrono::Utc::now();
    let mut tx = state.store.begin().await.unwrap();
    for i in 0..n {
        let payload = payload(i);
        outbox::insert_event(
            &mut tx,
            NewEvent {
                merchant_id: merchant.merchant_id,
                membership_id: None,
                action: "SUBSCRIPTION_STATUS_CHANGED",
                order_id: payload["OrderId"].as_str().unwrap(),
                webhook_url: &receiver.url,
                fields: payload.as_object().unwrap().clone(),
            },
            now,
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let dispatcher = state.webhooks.clone().run(state.platform.clone());
    drain::rate_until_drained(&state.store, "events", "Delivered", n, dispatcher).await
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.parsed("--events", 20_000);
    let rows = report::per_backend(args.backends(), |backend| run(backend, n));
    report::print_table(
        "webhook deliveries to a local HTTPS receiver",
        &[
            "backend",
            "events",
            "raw POSTs/s",
            "recur deliveries/s",
            "recur / raw",
        ],
        rows,
    );
}

/// Measures one backend's row.
async fn run(backend: Backend, n: usize) -> Vec<String> {
    let receiver = WebhookReceiver::start().await;
    let database = ScratchDatabase::create(backend, "webhooks").await;
    // The receiver and the client answer the first few thousand requests at well under half
    // their steady rate: warm them up untimed.
    raw_rate(&receiver, WARM_UP).await;
    let raw = raw_rate(&receiver, n).await;
    let recur = recur_rate(&receiver, &database.url, n).await;
    database.remove().await;
    vec![format!(
        "| {backend:?} | {n} | {raw:.0} | {recur:.0} | {:.0}% |",
        100.0 * recur / raw
    )]
}
