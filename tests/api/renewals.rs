//! Real-time renewals, which the engine runs in batches: one batch holding plain renewals, a
//! rejected charge, memberships without a card (the sandbox's queue decides them: success, or a
//! Rejected item), one paid from credit and one whose end date came must leave every membership
//! exactly where the one-by-one rules put it.

use recur::billing::engine;
use recur::billing::renewals;
use recur::billing::scope::Scope;
use serde_json::{json, Value};

use crate::backend_test;
use crate::harness::TestServer;

/// A real-time (no test clock) Active membership for a new customer with the success card.
async fn active(server: &TestServer, token: &str, order: &str, queue: Option<Value>) -> String {
    let customer = server
        .create_customer(token, &format!("{order}@example.com"))
        .await;
    server
        .attach_card(token, &customer, "4242424242424242")
        .await;
    let mut body = server.membership_body(&customer, order);
    if let Some(queue) = queue {
        body["chargeEmitterQueue"] = queue;
    }
    let created = server.create_membership(token, body).await;
    let key = created["membershipKey"].as_str().expect("key").to_string();
    let paid = server.pay(token, &key).await;
    assert_eq!(paid.body["status"], "Active", "{}", paid.body);
    key
}

/// Runs a SQL statement about one membership (its key is `$2`, the current time `$1`).
async fn on_membership(server: &TestServer, sql: &str, key: &str, now: i64) {
    sqlx::query(sql)
        .bind(now)
        .bind(key)
        .execute(server.server.state.store.pool())
        .await
        .expect("set-up statement");
}

async fn count(server: &TestServer, sql: &str, key: &str) -> i64 {
    server.count(sql, key).await
}

const RENEWAL_INVOICES: &str = "SELECT COUNT(*) FROM invoices i JOIN memberships m \
    ON m.id = i.membership_id WHERE m.membership_key = $1 AND i.kind = 'renewal' \
    AND i.status = 'Paid'";
const RENEWAL_CHARGES: &str = "SELECT COUNT(*) FROM charges c JOIN memberships m \
    ON m.id = c.membership_id WHERE m.membership_key = $1 AND c.kind = 'renewal'";
const APPROVED_RENEWAL_CHARGES: &str = "SELECT COUNT(*) FROM charges c JOIN memberships m \
    ON m.id = c.membership_id WHERE m.membership_key = $1 AND c.kind = 'renewal' \
    AND c.status = 'Success'";
const EMAILS: &str = "SELECT COUNT(*) FROM emails e JOIN memberships m \
    ON m.customer_id = e.customer_id WHERE m.membership_key = $1 AND e.kind = $2";

async fn emails(server: &TestServer, key: &str, kind: &str) -> i64 {
    sqlx::query_scalar(EMAILS)
        .bind(key)
        .bind(kind)
        .fetch_one(server.server.state.store.pool())
        .await
        .expect("e-mail count")
}

fn last_action(events: &[Value], action: &str) -> Value {
    events
        .iter()
        .rev()
        .find(|e| e["Action"] == action)
        .cloned()
        .unwrap_or_else(|| panic!("no {action} event in {events:?}"))
}

backend_test!(
    a_batch_of_renewals_follows_the_one_by_one_rules,
    |server: TestServer| async move {
        let token = server.token().await;
        let plain: Vec<String> = {
            let mut keys = Vec::new();
            for i in 0..5 {
                keys.push(active(&server, &token, &format!("plain-{i}"), None).await);
            }
            keys
        };
        let rejected = active(
            &server,
            &token,
            "rejected",
            Some(json!([{"transactionStatus": "Rejected", "description": "Do not honor."}])),
        )
        .await;
        let cardless = active(&server, &token, "cardless", None).await;
        let cardless_rejected = active(
            &server,
            &token,
            "cardless-rejected",
            Some(json!([{"transactionStatus": "Rejected"}])),
        )
        .await;
        let credited = active(&server, &token, "credited", None).await;
        let ending = active(&server, &token, "ending", None).await;

        // Every period ends in an hour (out of the background worker's reach, so the passes
        // below are the ones that act); the cardless customer's card is gone, the credited
        // membership holds more credit than a period costs, the ending one reaches its end date.
        // In the sandbox a customer without a card renews as the queue says (DESIGN §4).
        let due = chrono::Utc::now() + chrono::TimeDelta::hours(1);
        let now = due.timestamp_micros();
        for key in
            plain
                .iter()
                .chain([&rejected, &cardless, &cardless_rejected, &credited, &ending])
        {
            on_membership(
                &server,
                "UPDATE memberships SET current_period_start = $1 - 2592000000000, \
                 current_period_end = $1, next_action_at = $1 WHERE membership_key = $2",
                key,
                now,
            )
            .await;
        }
        for key in [&cardless, &cardless_rejected] {
            on_membership(
                &server,
                "UPDATE payment_methods SET detached_at = $1 WHERE customer_id = \
                 (SELECT customer_id FROM memberships WHERE membership_key = $2)",
                key,
                now,
            )
            .await;
        }
        on_membership(
            &server,
            "UPDATE memberships SET credit_balance = 10000 + 0 * $1 WHERE membership_key = $2",
            &credited,
            now,
        )
        .await;
        on_membership(
            &server,
            "UPDATE memberships SET end_date = $1 WHERE membership_key = $2",
            &ending,
            now,
        )
        .await;

        // One batch claims every Active membership due; the one whose end date came is left to
        // the one-by-one pass.
        let state = &server.server.state;
        let at = due + chrono::TimeDelta::seconds(1);
        let due_text = recur::domain::time::format_utc(due);
        assert_eq!(
            renewals::renew_due(state, Scope::RealTime, at, 100)
                .await
                .unwrap(),
            9
        );
        assert_eq!(
            renewals::renew_due(state, Scope::RealTime, at, 100)
                .await
                .unwrap(),
            0
        );
        assert!(engine::run_next_due(state, Scope::RealTime, at)
            .await
            .unwrap());
        assert!(!engine::run_next_due(state, Scope::RealTime, at)
            .await
            .unwrap());

        for key in &plain {
            let m = server.membership(&token, key).await;
            assert_eq!(m["status"], "Active", "{m}");
            assert_eq!(m["currentPeriodStart"], due_text, "{m}");
            assert_eq!(count(&server, RENEWAL_INVOICES, key).await, 1);
            assert_eq!(count(&server, APPROVED_RENEWAL_CHARGES, key).await, 1);
            assert_eq!(
                emails(&server, key, "receipt").await,
                2,
                "first and renewal"
            );
            let order = m["productInfo"]["orderId"].as_str().unwrap().to_string();
            let charge = last_action(&server.events(&order).await, "TRANSACTION_DATA_UPDATE");
            assert_eq!(charge["TransactionStatus"], "Success", "{charge}");
            assert_eq!(charge["IsSubscriptionTransaction"], true);
            assert_eq!(charge["Membership"]["Invoices"][0]["Status"], "Paid");
            assert_eq!(
                charge["Membership"]["Invoices"].as_array().unwrap().len(),
                2
            );
            assert_eq!(charge["Amount"], json!(29.97));
        }

        let m = server.membership(&token, &rejected).await;
        assert_eq!(m["status"], "PastDue", "{m}");
        assert_eq!(count(&server, RENEWAL_CHARGES, &rejected).await, 1);
        assert_eq!(count(&server, APPROVED_RENEWAL_CHARGES, &rejected).await, 0);
        assert_eq!(emails(&server, &rejected, "payment_failed").await, 1);
        let events = server.events("rejected").await;
        let charge = last_action(&events, "TRANSACTION_DATA_UPDATE");
        assert_eq!(charge["TransactionStatus"], "Rejected", "{charge}");
        assert_eq!(charge["DeclineReasonText"], "Do not honor.");
        let status = last_action(&events, "SUBSCRIPTION_STATUS_CHANGED");
        assert_eq!(status["Membership"]["Status"], "PastDue");

        // No processor is asked without a card: no attempt, the invoice paid as the queue says.
        let m = server.membership(&token, &cardless).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(m["currentPeriodStart"], due_text, "{m}");
        assert_eq!(m["invoices"][0]["amountPaid"], "29.97", "{m}");
        assert_eq!(count(&server, RENEWAL_INVOICES, &cardless).await, 1);
        assert_eq!(count(&server, RENEWAL_CHARGES, &cardless).await, 0);
        assert_eq!(emails(&server, &cardless, "receipt").await, 2);
        assert_eq!(emails(&server, &cardless, "payment_failed").await, 0);

        let m = server.membership(&token, &cardless_rejected).await;
        assert_eq!(m["status"], "PastDue", "{m}");
        assert_eq!(m["invoices"][0]["status"], "Open", "{m}");
        assert_eq!(count(&server, RENEWAL_CHARGES, &cardless_rejected).await, 0);
        assert_eq!(
            emails(&server, &cardless_rejected, "payment_failed").await,
            1
        );

        let m = server.membership(&token, &credited).await;
        assert_eq!(m["status"], "Active", "{m}");
        assert_eq!(count(&server, RENEWAL_INVOICES, &credited).await, 1);
        assert_eq!(count(&server, RENEWAL_CHARGES, &credited).await, 0);
        assert_eq!(emails(&server, &credited, "receipt").await, 2);

        let m = server.membership(&token, &ending).await;
        assert_eq!(m["status"], "Completed", "{m}");
        assert_eq!(count(&server, RENEWAL_CHARGES, &ending).await, 0);

        // A further pass charges nobody again.
        assert_eq!(
            renewals::renew_due(state, Scope::RealTime, at, 100)
                .await
                .unwrap(),
            0
        );
        let renewal_charges: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM charges WHERE kind = 'renewal'")
                .fetch_one(server.server.state.store.pool())
                .await
                .unwrap();
        assert_eq!(
            renewal_charges, 6,
            "five plain renewals and the rejected one"
        );
    }
);
