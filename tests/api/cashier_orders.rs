//! The merchant's operations on cashier orders after the customer paid: provider retries (API
//! and the operator's command line), refunds and payouts through the API, webhook re-sync, and
//! refunds and payouts racing each other.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::cashier::{card, notices, open_order, pay, secret_post, visitor};
use crate::fixtures::webhooks::server_with;
use crate::receivers::{eventually, WebhookReceiver};

backend_matrix!(
    a_provider_retry_turns_a_rejected_order_successful,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let state = &server.server.state;
        let merchant_id = server.merchant.merchant_id;
        // Fixed to gateway A, the cascading test card is rejected: nothing to cascade to.
        let url = open_order(&server, "hp-retry", &receiver.url, json!({})).await;
        let answer = pay(
            &visitor(),
            &format!("{url}&m_fixed_pp_id=101"),
            card("4000000000000119", "101"),
        )
        .await;
        assert_eq!(
            answer.location.as_deref(),
            Some("https://shop.example.com/failed")
        );
        let first = &notices(&server, "hp-retry").await[0];
        assert_eq!(first["TransactionStatus"], "Rejected");
        assert_eq!(first["Retried"], false);

        // The provider retries over every card gateway: Success, Retried.
        let retried = recur::cashier::orders::retry(state, merchant_id, "hp-retry")
            .await
            .unwrap();
        assert_eq!(retried.status.as_str(), "Success");
        let all = notices(&server, "hp-retry").await;
        assert_eq!(all.len(), 2);
        assert_eq!(all[1]["TransactionStatus"], "Success");
        assert_eq!(all[1]["Retried"], true);
        assert_eq!(all[1]["PaymentProcessorId"], 102);
        assert_ne!(all[1]["TransactionId"], first["TransactionId"]);
        // Successful orders are not retried again.
        assert!(
            recur::cashier::orders::retry(state, merchant_id, "hp-retry")
                .await
                .is_err()
        );

        // A card the issuer refuses stays Rejected, and says it was retried.
        let url = open_order(&server, "hp-retry-2", &receiver.url, json!({})).await;
        pay(&visitor(), &url, card("4000000000009995", "101")).await;
        let again = recur::cashier::orders::retry(state, merchant_id, "hp-retry-2")
            .await
            .unwrap();
        assert_eq!(again.status.as_str(), "Rejected");
        let all = notices(&server, "hp-retry-2").await;
        assert_eq!(all[1]["Retried"], true);
        assert_eq!(all[1]["DeclineReasonCode"], "insufficient_funds");
    }
);

backend_matrix!(payouts_refunds_and_resync, |backend| async move {
    let receiver = WebhookReceiver::start().await;
    let server = server_with(backend, &receiver).await;
    let client = visitor();
    // Payout mode: the customer receives money on their card.
    let url = open_order(
        &server,
        "hp-payout",
        &receiver.url,
        json!({"isPayOut": true}),
    )
    .await;
    let answer = pay(&client, &url, card("4000000000009995", "101")).await;
    assert_eq!(
        answer.location.as_deref(),
        Some("https://shop.example.com/ok")
    );
    let notice = &notices(&server, "hp-payout").await[0];
    assert_eq!(notice["TransactionType"], "PayOut");
    assert_eq!(notice["TransactionStatus"], "Success");

    let url = open_order(&server, "hp-refund", &receiver.url, json!({})).await;
    pay(&client, &url, card("4242424242424242", "101")).await;

    // The API needs the secret.
    let unauthenticated = server
        .client
        .post(format!("{}/api/payment/refund", server.base_url))
        .json(&json!({"orderId": "hp-refund"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), StatusCode::UNAUTHORIZED);

    let partial = secret_post(
        &server,
        "/api/payment/refund",
        &json!({"orderId": "hp-refund", "amount": "10.00"}),
    )
    .await;
    assert_eq!(partial.status, StatusCode::CREATED, "{}", partial.body);
    assert_eq!(partial.body["transactionType"], "Refund");
    assert_eq!(partial.body["transactionStatus"], "Success");
    assert_eq!(partial.body["amount"], "10.00");
    let over = secret_post(
        &server,
        "/api/payment/refund",
        &json!({"orderId": "hp-refund", "amount": 40}),
    )
    .await;
    assert!(over.problem(400).contains_key("amount"));
    let rest = secret_post(
        &server,
        "/api/payment/refund",
        &json!({"orderId": "hp-refund"}),
    )
    .await;
    assert_eq!(rest.body["amount"], "39.90");
    let done = secret_post(
        &server,
        "/api/payment/refund",
        &json!({"orderId": "hp-refund"}),
    )
    .await;
    done.problem(409);
    let unknown = secret_post(&server, "/api/payment/refund", &json!({"orderId": "nope"})).await;
    assert!(unknown.problem(400).contains_key("orderId"));
    let invalid = secret_post(&server, "/api/payment/refund", &json!({"amount": "x"})).await;
    let errors = invalid.problem(400);
    assert!(errors.contains_key("orderId") && errors.contains_key("amount"));

    let payout = secret_post(
        &server,
        "/api/payment/payout",
        &json!({"orderId": "hp-refund", "amount": 5}),
    )
    .await;
    assert_eq!(payout.status, StatusCode::CREATED, "{}", payout.body);
    assert_eq!(payout.body["transactionType"], "PayOut");
    assert_eq!(payout.body["amount"], "5.00");
    let kinds: Vec<(String, String, Value)> = notices(&server, "hp-refund")
        .await
        .iter()
        .map(|n| {
            (
                n["TransactionType"].as_str().unwrap().into(),
                n["TransactionStatus"].as_str().unwrap().into(),
                n["Amount"].clone(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("PayIn".into(), "Success".into(), json!(49.9)),
            ("Refund".into(), "Success".into(), json!(10.0)),
            ("Refund".into(), "Success".into(), json!(39.9)),
            ("PayOut".into(), "Success".into(), json!(5.0)),
        ]
    );

    // Re-sync sends the order's latest notification again.
    let order_count = |id: &str| {
        receiver
            .received()
            .iter()
            .filter(|r| r.json()["OrderId"] == id)
            .count()
    };
    eventually(|| order_count("hp-payout") == 1).await;
    let resync = secret_post(
        &server,
        "/api/webhook-resync?merchantOrderId=hp-payout",
        &json!({}),
    )
    .await;
    assert_eq!(resync.status, StatusCode::OK);
    assert_eq!(
        resync.body,
        json!({"isSuccess": true, "errorMessage": null})
    );
    eventually(|| order_count("hp-payout") == 2).await;
    let unknown = secret_post(
        &server,
        "/api/webhook-resync?merchantOrderId=nope",
        &json!({}),
    )
    .await;
    assert_eq!(unknown.body["isSuccess"], false);
    assert!(unknown.body["errorMessage"].is_string());
    let anonymous = server
        .client
        .post(format!(
            "{}/api/webhook-resync?merchantOrderId=hp-payout",
            server.base_url
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_retries_a_rejected_order_from_the_command_line() {
    let receiver = WebhookReceiver::start().await;
    let server = server_with(crate::harness::Backend::Sqlite, &receiver).await;
    let url = open_order(&server, "hp-cli-retry", &receiver.url, json!({})).await;
    pay(
        &visitor(),
        &format!("{url}&m_fixed_pp_id=101"),
        card("4000000000000119", "101"),
    )
    .await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recur"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RECUR_DATA_DIR", server.data_dir())
        .env("RECUR_LOG", "warn")
        .args([
            "order",
            "retry",
            "--user-name",
            &server.merchant.user_name,
            "--order-id",
            "hp-cli-retry",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["transactionStatus"], "Success");
    assert_eq!(printed["retried"], true);
    let all = notices(&server, "hp-cli-retry").await;
    assert_eq!(all.len(), 2);
    assert_eq!(all[1]["Retried"], true);
    // Nothing left to retry.
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_recur"))
        .env_clear()
        .env("RECUR_DATA_DIR", server.data_dir())
        .args([
            "order",
            "retry",
            "--user-name",
            &server.merchant.user_name,
            "--order-id",
            "hp-cli-retry",
        ])
        .output()
        .unwrap();
    assert!(!again.status.success());
}

backend_matrix!(
    parallel_refunds_and_payouts_move_money_once,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let client = visitor();
        let url = open_order(&server, "hp-race", &receiver.url, json!({})).await;
        pay(&client, &url, card("4242424242424242", "101")).await;
        // Eight refunds of 30.00 of the same payment at once: one goes through; the others find it
        // recorded (409), or what is left too small (400), never a second refund.
        let refund = json!({"orderId": "hp-race", "amount": "30.00"});
        let refunds = futures::future::join_all(
            (0..8).map(|_| secret_post(&server, "/api/payment/refund", &refund)),
        )
        .await;
        let payout = json!({"orderId": "hp-race", "amount": "5.00"});
        let payouts = futures::future::join_all(
            (0..8).map(|_| secret_post(&server, "/api/payment/payout", &payout)),
        )
        .await;
        for reply in refunds.iter().chain(&payouts) {
            if !reply.status.is_success() {
                let status = reply.status.as_u16();
                assert!(status == 409 || status == 400, "{status}: {}", reply.body);
                reply.problem(status);
            }
        }
        let moved = |kind: &'static str| {
            server.count(
                "SELECT COUNT(*) FROM sandbox_charges WHERE kind = $1 AND outcome = 'approved'",
                kind,
            )
        };
        assert_eq!(moved("refund").await, 1, "one refund reached the processor");
        let recorded = server
            .count(
                "SELECT COUNT(*) FROM cashier_transactions WHERE order_id = $1 AND kind = 'Refund'",
                "hp-race",
            )
            .await;
        assert_eq!(recorded, 1);
        let payouts_recorded = server
            .count(
                "SELECT COUNT(*) FROM cashier_transactions WHERE order_id = $1 AND kind = 'PayOut'",
                "hp-race",
            )
            .await;
        assert_eq!(
            moved("payout").await,
            payouts_recorded,
            "every payout the processor made is recorded, and only those"
        );
    }
);
