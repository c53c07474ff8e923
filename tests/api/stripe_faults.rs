//! Stripe failing recur mid-payment (DESIGN §17, issue 42's faults), against localstripe
//! behind a link the test controls: an answer slower than recur's time-out, Stripe out of
//! reach, an answer that cannot be read. The attempt stays `Pending` (the request is a 503),
//! the membership does not move, and the next recovery pass settles it: from the PaymentIntent
//! Stripe made before the answer was lost (found by its `attemptKey`), or by asking again when
//! Stripe made none. Never a second PaymentIntent.

use std::time::Duration;

use reqwest::StatusCode;

use crate::backend_matrix;
use crate::fixtures::stripe::{customer_with_stripe_card, intents_of, stripe};
use crate::fixtures::stripe_link::{Mode, StripeLink};
use crate::fixtures::CUSTOMER;
use crate::harness::{Backend, TestServer};
use crate::process::until;

/// A server that reaches localstripe through a link, with a three-second Stripe time-out (short,
/// and still long enough for a loaded emulator to answer the calls that pass).
async fn behind_link(backend: Backend) -> (TestServer, StripeLink) {
    let link = StripeLink::start().await;
    let server = TestServer::start_with(
        backend,
        &[
            ("RECUR_STRIPE_API_BASE", &link.url),
            ("RECUR_STRIPE_TIMEOUT_SECONDS", "3"),
        ],
    )
    .await;
    (server, link)
}

/// Pays a new membership's first invoice while the link is in `mode` (Stripe makes `made`
/// PaymentIntents for it meanwhile), then passes again and lets a test-clock advance (which
/// runs the recovery pass at once) settle it. Returns how many PaymentIntents Stripe has for it
/// in the end.
async fn first_payment_through(
    server: &TestServer,
    link: &StripeLink,
    mode: Mode,
    made: usize,
) -> usize {
    let token = server.token().await;
    server.advance(&token, "2027-01-10T10:00:00Z").await;
    let (customer, _) = customer_with_stripe_card(server, &token, "4242424242424242").await;
    let created = server
        .create_membership(&token, server.membership_body(&customer, "through-a-link"))
        .await;
    let key = created["membershipKey"].as_str().unwrap().to_string();

    link.set(mode);
    let lost = server.pay(&token, &key).await;
    assert_eq!(
        lost.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        lost.body
    );
    let record = server.membership(&token, &key).await;
    assert_eq!(record["status"], "Incomplete");
    assert_eq!(
        server
            .count("SELECT COUNT(*) FROM charges WHERE status = $1", "Pending")
            .await,
        1,
        "the attempt stays Pending"
    );
    // The request may still be on its way to Stripe when recur gives up on the answer.
    until(
        "Stripe's PaymentIntents",
        Duration::from_secs(20),
        async || intents_of(&key).await.len() == made,
    )
    .await;

    link.set(Mode::Pass);
    server.advance(&token, "2027-01-10T10:05:00Z").await;
    let record = server.membership(&token, &key).await;
    assert_eq!(record["status"], "Active", "{record}");
    assert_eq!(record["invoices"][0]["status"], "Paid");
    assert_eq!(
        server
            .count("SELECT COUNT(*) FROM charges WHERE status = $1", "Success")
            .await,
        1
    );
    let intents = intents_of(&key).await;
    assert!(
        intents.iter().all(|i| i["status"] == "succeeded"),
        "{intents:?}"
    );
    intents.len()
}

backend_matrix!(
    an_answer_slower_than_the_time_out_is_settled_once,
    |backend| async move {
        let (server, link) = behind_link(backend).await;
        // Stripe charged; its answer never reached recur in time.
        assert_eq!(
            first_payment_through(&server, &link, Mode::Hold, 1).await,
            1
        );
    }
);

backend_matrix!(
    stripe_out_of_reach_leaves_the_attempt_pending_and_then_charges_once,
    |backend| async move {
        let (server, link) = behind_link(backend).await;
        // Nothing reached Stripe: the recovery asks it, once.
        assert_eq!(
            first_payment_through(&server, &link, Mode::Refuse, 0).await,
            1
        );
    }
);

backend_matrix!(
    an_answer_that_cannot_be_read_is_settled_once,
    |backend| async move {
        let (server, link) = behind_link(backend).await;
        assert_eq!(
            first_payment_through(&server, &link, Mode::Garble, 1).await,
            1
        );
    }
);

backend_matrix!(
    a_revoked_key_leaves_the_attempt_pending_until_it_is_replaced,
    |backend| async move {
        let (server, _link) = behind_link(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-01-10T10:00:00Z").await;
        let (customer, processor) =
            customer_with_stripe_card(&server, &token, "4242424242424242").await;
        let created = server
            .create_membership(&token, server.membership_body(&customer, "revoked-key"))
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        // The merchant rolls its key in Stripe's dashboard: Stripe answers 401 to the old one
        // (localstripe refuses a key that is no `sk_…` one).
        let keys = &server.server.state.keys;
        let set_key = |secret: &str| {
            sqlx::query("UPDATE stripe_accounts SET secret_key_sealed = $1 WHERE processor_id = $2")
                .bind(keys.seal(secret))
                .bind(processor)
        };
        let pool = server.server.state.store.pool();
        set_key("rk_revoked").execute(pool).await.unwrap();
        let refused = server.pay(&token, &key).await;
        assert_eq!(
            refused.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            refused.body
        );
        server.advance(&token, "2027-01-10T10:05:00Z").await;
        assert_eq!(
            server.membership(&token, &key).await["status"],
            "Incomplete"
        );
        assert!(intents_of(&key).await.is_empty());

        set_key(crate::fixtures::stripe::SECRET_KEY)
            .execute(pool)
            .await
            .unwrap();
        server.advance(&token, "2027-01-10T10:10:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "Active");
        assert_eq!(intents_of(&key).await.len(), 1);
    }
);

backend_matrix!(
    a_retry_stripe_cannot_answer_waits_and_the_advance_goes_on,
    |backend| async move {
        let (server, link) = behind_link(backend).await;
        let token = server.token().await;
        server.advance(&token, "2027-01-10T10:00:00Z").await;
        let (customer, processor) =
            customer_with_stripe_card(&server, &token, "4242424242424242").await;
        let created = server
            .create_membership(
                &token,
                server.membership_body(&customer, "retry-unanswered"),
            )
            .await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        assert_eq!(server.pay(&token, &key).await.status, StatusCode::OK);
        // The customer's card now declines: the renewal fails and dunning schedules retries.
        let declining = stripe(
            reqwest::Method::POST,
            "/v1/payment_methods",
            &[
                ("type", "card"),
                ("card[number]", "4000000000000341"),
                ("card[exp_month]", "12"),
                ("card[exp_year]", "2030"),
                ("card[cvc]", "123"),
            ],
        )
        .await;
        let attached = server
            .call(
                reqwest::Method::POST,
                &format!("{CUSTOMER}/{customer}/payment-method"),
                Some(&token),
                Some(serde_json::json!({"paymentProcessorId": processor,
                    "paymentMethod": declining["id"]})),
            )
            .await;
        assert_eq!(attached.status, StatusCode::CREATED, "{}", attached.body);
        server.advance(&token, "2027-02-10T11:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");

        // Stripe is out of reach when the retries fall due: the advance still answers 200.
        link.set(Mode::Refuse);
        server.advance(&token, "2027-02-25T11:00:00Z").await;
        assert_eq!(server.membership(&token, &key).await["status"], "PastDue");
        let pending = "SELECT COUNT(*) FROM charges WHERE status = $1";
        assert_eq!(server.count(pending, "Pending").await, 1, "the retry waits");

        link.set(Mode::Pass);
        server.advance(&token, "2027-02-25T11:05:00Z").await;
        assert_eq!(server.count(pending, "Pending").await, 0, "and is answered");
    }
);
