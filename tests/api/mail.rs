//! Customer e-mail: through a real SMTP server started by the test, as `.eml` files without
//! SMTP, and retried when the server is unreachable.

use crate::backend_matrix;
use crate::harness::TestServer;
use crate::receivers::{eventually, SmtpSink};

async fn pay_something(server: &TestServer, email: &str, order: &str) {
    let token = server.token().await;
    let customer = server.create_customer(&token, email).await;
    let body = server.membership_body(&customer, order);
    server
        .active_membership(&token, "2027-03-01T00:00:00Z", body)
        .await;
}

async fn email_status(server: &TestServer, to: &str) -> (String, i64, Option<String>) {
    sqlx::query_as("SELECT status, attempts, last_error FROM emails WHERE to_address = $1")
        .bind(to)
        .fetch_one(server.server.state.store.pool())
        .await
        .unwrap()
}

/// Waits (up to 20 s) until `/metrics` holds `line`.
async fn metrics_show(server: &TestServer, line: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let metrics = server.metrics().await;
        if metrics.contains(line) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {line} in {metrics}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

backend_matrix!(receipts_go_through_smtp, |backend| async move {
    let sink = SmtpSink::start().await;
    let server = TestServer::start_with_owned(
        backend,
        &[
            ("RECUR_SMTP_URL", format!("smtp://127.0.0.1:{}", sink.port)),
            (
                "RECUR_MAIL_FROM",
                "Billing <billing@shop.example>".to_string(),
            ),
        ],
    )
    .await;
    pay_something(&server, "mail1@example.com", "order-mail-1").await;
    eventually(|| !sink.delivered().is_empty()).await;
    let mail = &sink.delivered()[0];
    assert_eq!(mail.from, "billing@shop.example");
    assert_eq!(mail.to, ["mail1@example.com"]);
    assert!(
        mail.data
            .contains("Subject: Your receipt from Test Merchant"),
        "{}",
        mail.data
    );
    assert!(mail.data.contains("multipart/alternative"));
    assert!(mail.data.contains("text/plain") && mail.data.contains("text/html"));
    assert!(mail.data.contains("29.97"), "the amount is in the message");
    assert!(mail.data.contains("Message-ID: <email-"));
    // The mailer records the send right after the server accepted it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while email_status(&server, "mail1@example.com").await.0 != "Sent" {
        assert!(std::time::Instant::now() < deadline, "not marked sent");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, attempts, _) = email_status(&server, "mail1@example.com").await;
    assert_eq!((status.as_str(), attempts), ("Sent", 1));
    assert_eq!(sink.delivered().len(), 1, "sent once");
    // Counted right after the outcome's commit, by the mailer's task.
    metrics_show(&server, r#"recur_email_sends_total{outcome="sent"} 1"#).await;
    metrics_show(&server, r#"recur_outbox_pending{outbox="emails"} 0"#).await;
});

backend_matrix!(
    without_smtp_messages_become_eml_files,
    |backend| async move {
        let server = TestServer::start(backend).await;
        pay_something(&server, "mail2@example.com", "order-mail-2").await;
        let dir = server.data_dir().join("mail");
        eventually(|| {
            std::fs::read_dir(&dir)
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .any(|e| e.file_name().to_string_lossy().ends_with(".eml"))
                })
                .unwrap_or(false)
        })
        .await;
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().ends_with(".eml"))
            .unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(text.contains("To: mail2@example.com"), "{text}");
        assert!(text.contains("Subject: Your receipt from Test Merchant"));
    }
);

backend_matrix!(
    an_unreachable_server_is_retried_later,
    |backend| async move {
        // A port nothing listens on.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let server = TestServer::start_with_owned(
            backend,
            &[("RECUR_SMTP_URL", format!("smtp://127.0.0.1:{port}"))],
        )
        .await;
        pay_something(&server, "mail3@example.com", "order-mail-3").await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let (status, attempts, error) = loop {
            let state = email_status(&server, "mail3@example.com").await;
            if state.1 > 0 {
                break state;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no send attempt within 20 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        assert_eq!(status, "Pending", "kept for a retry");
        assert_eq!(attempts, 1);
        assert!(error.unwrap().to_lowercase().contains("connect"));
        metrics_show(&server, r#"recur_email_sends_total{outcome="retry"} 1"#).await;
        metrics_show(&server, r#"recur_outbox_pending{outbox="emails"} 1"#).await;
    }
);

backend_matrix!(
    a_batch_of_receipts_is_sent_once_each,
    |backend| async move {
        let sink = SmtpSink::start().await;
        let server = TestServer::start_with_owned(
            backend,
            &[("RECUR_SMTP_URL", format!("smtp://127.0.0.1:{}", sink.port))],
        )
        .await;
        // More receipts than the mailer sends at once, so it takes several passes.
        let count = 12;
        for i in 0..count {
            pay_something(
                &server,
                &format!("batch{i}@example.com"),
                &format!("order-batch-{i}"),
            )
            .await;
        }
        eventually(|| sink.delivered().len() >= count).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let sent: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM emails WHERE status = 'Sent'")
                .fetch_one(server.server.state.store.pool())
                .await
                .unwrap();
            if sent as usize == count {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{sent} of {count} marked sent"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let ids = sink.message_ids();
        assert_eq!(ids.len(), count, "one Message-ID per receipt");
        assert!(ids.values().all(|&n| n == 1), "each sent once: {ids:?}");
        let mut recipients: Vec<String> =
            sink.delivered().iter().flat_map(|m| m.to.clone()).collect();
        recipients.sort();
        recipients.dedup();
        assert_eq!(recipients.len(), count);
    }
);
