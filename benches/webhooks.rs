//! Webhook deliveries per second to a local HTTPS receiver, against the rate at which a plain
//! HTTPS client gets answers from that same receiver, in one run.
//!
//! `cargo bench --bench webhooks -- [--events N] [--backend sqlite|postgres]`
//!
//! The receiver (tests/api/receivers.rs) answers at once. Raw: N POSTs of the same size from 4
//! concurrent tasks over one keep-alive client. recur: N due events in the outbox, delivered by the
//! dispatcher of `recur serve`, which keeps at most 4 deliveries in flight per endpoint (each
//! signed, leased and recorded in the database).

#[path = "support/allocator.rs"]
mod allocator;
#[path = "support/scratch.rs"]
mod scratch;

#[path = "../tests/api/receivers.rs"]
#[allow(dead_code)]
mod receivers;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use receivers::WebhookReceiver;
use recur::app::AppState;
use recur::clock::SystemClock;
use recur::config::Config;
use recur::delivery::webhooks::Dispatcher;
use recur::merchants;
use recur::store::merchants::Mode;
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
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("RECUR_DATA_DIR", dir.path().display().to_string());
    env.insert("RECUR_DEMO_MERCHANT", "false".into());
    env.insert("RECUR_WEBHOOK_CONCURRENCY", CONCURRENCY.to_string());
    env.insert("RECUR_DATABASE_URL", database_url.to_string());
    for (k, v) in receiver.settings() {
        env.insert(k, v);
    }
    let config = Config::from_sources(None, |k| env.get(k).cloned()).unwrap();
    let state = AppState::build(config, Arc::new(SystemClock), None)
        .await
        .unwrap();
    let merchant = merchants::create(&state, "Bench", Mode::Sandbox)
        .await
        .unwrap();
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
    let started = Instant::now();
    let dispatcher = tokio::spawn(Dispatcher::run(state.clone()));
    // Polls through the `events_due` partial index, whose size is the work left, so the check
    // costs the database the same whatever the outbox holds.
    loop {
        let pending: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM (SELECT 1 FROM events WHERE status = 'Pending' LIMIT 1) AS p",
        )
        .fetch_one(state.store.pool())
        .await
        .unwrap();
        if pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    dispatcher.abort();
    let delivered: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE status = 'Delivered'")
            .fetch_one(state.store.pool())
            .await
            .unwrap();
    assert_eq!(delivered as usize, n, "every event delivered once");
    rate
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let n: usize = value("--events")
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let backend = match value("--backend").as_deref() {
        Some("postgres") => Backend::Postgres,
        _ => Backend::Sqlite,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let receiver = WebhookReceiver::start().await;
        let database = ScratchDatabase::create(backend, "webhooks").await;
        // The receiver and the client answer the first few thousand requests at well under
        // half their steady rate: warm them up untimed.
        raw_rate(&receiver, WARM_UP).await;
        let raw = raw_rate(&receiver, n).await;
        let recur = recur_rate(&receiver, &database.url, n).await;
        database.remove().await;
        println!(
            "\nwebhook deliveries to a local HTTPS receiver, {} cores, {backend:?}\n",
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        );
        println!("| events | raw POSTs/s | recur deliveries/s | recur / raw |");
        println!("|---|---|---|---|");
        println!(
            "| {n} | {raw:.0} | {recur:.0} | {:.0}% |",
            100.0 * recur / raw
        );
    });
}
