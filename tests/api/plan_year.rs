//! A year of one membership on the test clock (DESIGN §15, issue 32): a catalog price with a
//! trial, a welcome coupon for three periods, a pause, a resume and a downgrade at the next
//! period — every invoice, amount and event in order, in one test.

use reqwest::Method;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{product, send};
use crate::fixtures::memberships::{actions, key, update};
use crate::fixtures::MEMBERSHIP;
use crate::harness::TestServer;

/// Creates a monthly EUR price of `product` for `amount` with `trial_days` (expects 201).
async fn monthly(
    server: &TestServer,
    token: &str,
    product: &str,
    amount: &str,
    trial_days: Option<u32>,
) -> String {
    let body = json!({"productId": product, "currency": "EUR", "unitAmount": amount,
        "intervalType": "Monthly", "trialDays": trial_days});
    let reply = send(server, Method::POST, "/prices", token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["priceId"].as_str().unwrap().to_string()
}

/// The membership's invoices, oldest first, as `(kind, period start day, amount paid)`.
async fn invoices(server: &TestServer, membership: &str) -> Vec<(String, String, String)> {
    let rows: Vec<(String, Option<i64>, i64)> = sqlx::query_as(
        "SELECT i.kind, i.period_start, i.amount_paid FROM invoices i \
         JOIN memberships m ON m.id = i.membership_id WHERE m.membership_key = $1 ORDER BY i.id",
    )
    .bind(membership)
    .fetch_all(server.server.state.store.pool())
    .await
    .unwrap();
    rows.into_iter()
        .map(|(kind, start, paid)| {
            let day = start
                .and_then(chrono::DateTime::from_timestamp_micros)
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_default();
            (kind, day, format!("{}.{:02}", paid / 100, paid.abs() % 100))
        })
        .collect()
}

backend_test!(
    a_year_of_trial_coupon_pause_and_downgrade,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-01-01T09:00:00Z").await;
        let pro_product = product(&server, &token, "Pro").await;
        let pro = monthly(&server, &token, &pro_product, "20.00", Some(14)).await;
        let lite = monthly(&server, &token, &pro_product, "12.00", None).await;
        let welcome = json!({"code": "WELCOME", "percentOff": "25", "duration": "repeating",
            "durationInCycles": 3});
        let reply = send(&server, Method::POST, "/coupons", &token, Some(welcome)).await;
        assert_eq!(reply.status, 201, "{}", reply.body);

        // January 1: two seats of Pro, a 14-day trial from the price, the welcome coupon.
        let customer = server.create_customer(&token, "year@example.com").await;
        server
            .attach_card(&token, &customer, "4242424242424242")
            .await;
        let body = json!({
            "customerKey": customer,
            "subscriptionName": "Pro",
            "webhookUrl": "https://merchant.example/hooks",
            "productInfo": {"orderId": "order-year"},
            "priceId": pro,
            "quantity": 2,
            "couponCode": "welcome"
        });
        let created = server.create_membership(&token, body).await;
        let key = key(&created);
        assert_eq!(created["trialDays"], 14);
        assert_eq!(created["discount"]["cyclesLeft"], 3);
        let trial = server.pay(&token, &key).await;
        assert_eq!(trial.body["status"], "Trialing");
        assert_eq!(trial.body["trialEnd"], "2027-01-15T09:00:00Z");

        // The trial ends on January 15; the coupon takes 25 % off three periods.
        server.advance(&token, "2027-04-15T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["discount"], Value::Null);

        // April 30: paused until June 1; half of the April 15 – May 15 period is credited.
        server.advance(&token, "2027-04-30T09:00:00Z").await;
        let paused = server
            .call(
                Method::POST,
                &format!("{MEMBERSHIP}/{key}/pause"),
                Some(&token),
                Some(json!({"resumeAt": "2027-06-01T09:00:00Z"})),
            )
            .await;
        assert_eq!(paused.body["status"], "Paused", "{}", paused.body);
        assert_eq!(paused.body["creditBalance"], "20.00");

        // June 1: resumed by the engine; the credit pays half of the new period.
        server.advance(&token, "2027-07-10T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(m["currentPeriodStart"], "2027-07-01T09:00:00Z");

        // July 10: down to one seat of Lite from the next period on, nothing charged now.
        let downgrade = update(
            &server,
            &token,
            json!({"membershipKey": key, "priceId": lite, "quantity": 1, "effective": "nextPeriod"}),
        )
        .await;
        assert_eq!(downgrade.status, 200, "{}", downgrade.body);
        assert_eq!(downgrade.body["proration"], Value::Null);
        assert_eq!(
            downgrade.body["membership"]["pendingUpdate"]["effectiveAt"],
            "2027-08-01T09:00:00Z"
        );

        server.advance(&token, "2028-01-01T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["priceId"], lite.as_str());
        assert_eq!(m["pricingInfo"]["totalAmount"], "12.00");
        assert_eq!(m["pendingUpdate"], Value::Null);
        assert_eq!(m["nextBillingDate"], "2028-02-01T09:00:00Z");

        let expected = [
            ("renewal", "2027-01-15", "30.00"),
            ("renewal", "2027-02-15", "30.00"),
            ("renewal", "2027-03-15", "30.00"),
            ("renewal", "2027-04-15", "40.00"),
            ("renewal", "2027-06-01", "20.00"),
            ("renewal", "2027-07-01", "40.00"),
            ("renewal", "2027-08-01", "12.00"),
            ("renewal", "2027-09-01", "12.00"),
            ("renewal", "2027-10-01", "12.00"),
            ("renewal", "2027-11-01", "12.00"),
            ("renewal", "2027-12-01", "12.00"),
            ("renewal", "2028-01-01", "12.00"),
        ]
        .map(|(kind, day, paid)| (kind.to_string(), day.to_string(), paid.to_string()));
        assert_eq!(invoices(&server, &key).await, expected);

        let events = server.events("order-year").await;
        let charges = |n: usize| vec!["charge:Success".to_string(); n];
        let mut order: Vec<String> = vec![
            "status:Trialing".into(),
            "SUBSCRIPTION_TRIAL_WILL_END".into(),
            "charge:Success".into(),
            "status:Active".into(),
        ];
        order.extend(charges(3));
        order.extend(["status:Paused".to_string(), "status:Active".to_string()]);
        order.extend(charges(2));
        order.push("SUBSCRIPTION_UPDATED".into());
        order.extend(charges(6));
        assert_eq!(actions(&events), order);
        let applied = events
            .iter()
            .find(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
            .unwrap();
        assert_eq!(
            applied["Membership"]["Updates"],
            json!({"PriceId": lite, "PricePerUnit": "12.00", "Quantity": 1})
        );
    }
);
