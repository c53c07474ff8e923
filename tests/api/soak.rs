//! The soak test: API traffic, renewals, webhook deliveries and e-mails running together on
//! PostgreSQL while the database goes away (every connection dropped, new ones refused) and comes
//! back, and while the server is killed with SIGKILL and restarted. Afterwards no charge is
//! duplicated, no event or e-mail is missing, and the server answered again within seconds of the
//! database's return. Bounded: a fixed number of customers, a few minutes at most.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use recur::store::Store;
use serde_json::{json, Value};

use crate::fixtures::faults::{assert_nothing_lost_or_doubled, settled};
use crate::harness::fresh_postgres_database;
use crate::process::{access_token, until, Recur};
use crate::receivers::{SmtpSink, WebhookReceiver};

/// Memberships created through the API during the run; each is paid, then renewed once.
const MEMBERSHIPS: usize = 32;
/// Clients sending API traffic at once.
const CLIENTS: usize = 4;
/// Longest the server may take to answer `/readyz` after the database returns.
const RECOVERY: Duration = Duration::from_secs(10);

/// The server's current address, replaced after a restart.
type Base = Arc<RwLock<String>>;

/// Requests the injected faults made fail (5xx or no answer), to show the faults were felt.
static FAILED_REQUESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sends until the server answers with a status `accept` takes (connection errors and 5xx are
/// the faults this test injects; anything else unexpected fails the test).
async fn send(
    client: &reqwest::Client,
    base: &Base,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
    accept: impl Fn(u16) -> bool,
) -> (u16, Value) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(Instant::now() < deadline, "{path} never succeeded");
        let url = format!("{}/api/subscriptions/v1{path}", base.read().unwrap());
        let mut request = client.request(method.clone(), url).bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Ok(response) = request.send().await {
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            if accept(status) {
                return (status, body);
            }
            assert!(status >= 500, "{path}: unexpected {status} {body}");
        }
        FAILED_REQUESTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One customer's journey: customer, card, membership, first payment; then its period is made
/// due so the billing worker renews it during the run.
async fn onboard(
    client: reqwest::Client,
    base: Base,
    token: String,
    processor_key: String,
    webhook: String,
    store: Store,
    i: usize,
) {
    let ok = |s: u16| (200..300).contains(&s);
    let (_, customer) = send(
        &client,
        &base,
        &token,
        reqwest::Method::POST,
        "/customer",
        Some(
            &json!({"processorKey": processor_key, "firstName": "Sam", "lastName": "Soak",
                     "email": format!("soak{i}@example.com"), "phone": "+4915112345678",
                     "countryCode": "DE"}),
        ),
        ok,
    )
    .await;
    let customer_key = customer["customerKey"].as_str().unwrap().to_string();
    send(
        &client,
        &base,
        &token,
        reqwest::Method::POST,
        "/test-helpers/payment-method",
        Some(&json!({"customerKey": customer_key, "cardNumber": "4242424242424242"})),
        ok,
    )
    .await;
    let (_, membership) = send(
        &client,
        &base,
        &token,
        reqwest::Method::POST,
        "/membership",
        Some(
            &json!({"customerKey": customer_key, "subscriptionName": "Soak", "webhookUrl": webhook,
                     "productInfo": {"orderId": format!("soak-{i}")},
                     "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                     "billingCycle": {"intervalType": "Monthly"}}),
        ),
        ok,
    )
    .await;
    let key = membership["membershipKey"].as_str().unwrap().to_string();
    // A payment whose answer was lost may still be settling (409) or already done.
    loop {
        let (status, _) = send(
            &client,
            &base,
            &token,
            reqwest::Method::POST,
            &format!("/test-helpers/membership/{key}/pay"),
            Some(&json!({})),
            |s| ok(s) || s == 409,
        )
        .await;
        let (_, now) = send(
            &client,
            &base,
            &token,
            reqwest::Method::GET,
            &format!("/membership/{key}"),
            None,
            ok,
        )
        .await;
        if now["status"] == "Active" {
            break;
        }
        assert!(status == 409 || status == 200, "pay: {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let due = chrono::Utc::now().timestamp_micros();
    retry_sql(|| {
        sqlx::query(
            "UPDATE memberships SET current_period_start = $1 - 2592000000000, \
             current_period_end = $1, next_action_at = $1 WHERE membership_key = $2",
        )
        .bind(due)
        .bind(key.clone())
        .execute(store.pool())
    })
    .await;
}

/// Runs a statement of the test's own, through the database outage.
async fn retry_sql<T, F, Fut>(run: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    for _ in 0..600 {
        if let Ok(value) = run().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the database did not come back");
}

async fn scalar(store: &Store, sql: &str) -> i64 {
    retry_sql(|| sqlx::query_scalar(sql).fetch_one(store.pool())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn soak_with_a_database_outage_and_a_kill_loses_and_duplicates_nothing() {
    use sqlx::{Connection, Executor};
    let data = tempfile::tempdir().unwrap();
    let receiver = WebhookReceiver::start().await;
    let sink = SmtpSink::start().await;
    let database_url = fresh_postgres_database().await;
    let database = database_url.rsplit_once('/').unwrap().1.to_string();
    let admin_url = std::env::var("RECUR_TEST_POSTGRES_URL").unwrap();
    let recur = Recur::delivering_to(data.path(), &database_url, &receiver, &sink);
    let merchant = recur.create_merchant("Soak Test");
    // A slow endpoint keeps deliveries in flight when the faults come.
    receiver.delay(Duration::from_millis(100));
    let (mut server, url) = recur.serve();
    let base: Base = Arc::new(RwLock::new(url));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let api = format!("{}/api/subscriptions/v1", base.read().unwrap());
    let token = access_token(&client, &api, &merchant).await;
    let store = Store::connect(&database_url).await.unwrap();

    // API traffic from several clients; every finished membership becomes due for renewal.
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (client, base, token, next, store) = (
                client.clone(),
                base.clone(),
                token.clone(),
                next.clone(),
                store.clone(),
            );
            let processor_key = merchant["processorKey"].as_str().unwrap().to_string();
            let webhook = receiver.url.clone();
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if i >= MEMBERSHIPS {
                        return;
                    }
                    onboard(
                        client.clone(),
                        base.clone(),
                        token.clone(),
                        processor_key.clone(),
                        webhook.clone(),
                        store.clone(),
                        i,
                    )
                    .await;
                }
            })
        })
        .collect();

    // Fault 1: the database goes away for three seconds (connections dropped, new ones refused).
    until(
        "a quarter of the traffic",
        Duration::from_secs(60),
        async || {
            scalar(
                &store,
                "SELECT COUNT(*) FROM memberships WHERE status = 'Active'",
            )
            .await
                >= (MEMBERSHIPS / 4) as i64
        },
    )
    .await;
    let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    admin
        .execute(format!("ALTER DATABASE {database} ALLOW_CONNECTIONS false").as_str())
        .await
        .unwrap();
    admin
        .execute(
            format!(
                // Only recur's own connections: an autovacuum worker on the database belongs
                // to the superuser, and ending it would fail for want of the privilege.
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = '{database}' AND usename = current_user \
                 AND pid <> pg_backend_pid()"
            )
            .as_str(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ready = format!("{}/readyz", base.read().unwrap());
    // The pool keeps trying to connect for its acquire time-out (10 s) before it gives up.
    let during = client
        .get(&ready)
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(during, 503, "readyz reports the missing database");
    admin
        .execute(format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true").as_str())
        .await
        .unwrap();
    let restored = Instant::now();
    loop {
        if client
            .get(&ready)
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            break;
        }
        assert!(
            restored.elapsed() < RECOVERY,
            "readyz still failing {RECOVERY:?} after the database returned"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "soak: server ready {:?} after the database returned",
        restored.elapsed()
    );

    // Fault 2: SIGKILL in the middle of the traffic, renewals and deliveries; then a restart.
    until("half of the traffic", Duration::from_secs(90), async || {
        scalar(
            &store,
            "SELECT COUNT(*) FROM memberships WHERE status = 'Active'",
        )
        .await
            >= (MEMBERSHIPS / 2) as i64
    })
    .await;
    let active = scalar(
        &store,
        "SELECT COUNT(*) FROM memberships WHERE status = 'Active'",
    )
    .await;
    let undelivered = scalar(
        &store,
        "SELECT COUNT(*) FROM events WHERE status <> 'Delivered'",
    )
    .await;
    server.kill().expect("kill -9");
    server.wait().unwrap();
    assert!(
        active < MEMBERSHIPS as i64 && undelivered > 0,
        "the kill came mid-run ({active} active, {undelivered} events pending)"
    );
    receiver.delay(Duration::ZERO);
    let (mut server, url) = recur.serve();
    *base.write().unwrap() = url;

    for client in clients {
        client.await.unwrap();
    }
    assert!(
        FAILED_REQUESTS.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the outage and the kill failed some requests"
    );
    settled(&store, MEMBERSHIPS as i64, Duration::from_secs(120)).await;
    server.kill().unwrap();
    server.wait().unwrap();

    // Money: every membership paid its first period and one renewal, each exactly once.
    assert_eq!(
        scalar(
            &store,
            "SELECT COUNT(*) FROM memberships WHERE status = 'Active'"
        )
        .await,
        MEMBERSHIPS as i64
    );
    assert_nothing_lost_or_doubled(&store, &receiver, &sink, 2 * MEMBERSHIPS as i64).await;
}
