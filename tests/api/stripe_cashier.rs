//! Cashier payments through the merchant's Stripe account failing mid-way (DESIGN §17),
//! against localstripe behind a link the test controls. The browser's part (Stripe.js saving
//! the card with the page's SetupIntent) is done here with the merchant's key, as a server may
//! confirm a SetupIntent. A lost answer to the confirmation is read back from the
//! PaymentIntent recur parked: one payment, recorded once. A PaymentIntent whose creation went
//! unanswered was never confirmed: nothing moved, and the customer pays again. A refund whose
//! answer was lost is found at Stripe by its key when the merchant asks again, not made twice.
//! Stripe's `payment_intent.succeeded` settles a parked payment without the customer's return;
//! `charge.refunded` records a refund made in Stripe's dashboard once on the order.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::cashier::{hidden, open_order, page, secret_post, visitor, Page};
use crate::fixtures::stripe::{
    card_method, event, intents_where, stripe, SECRET_KEY, WEBHOOK_SECRET,
};
use crate::fixtures::stripe_link::{Mode, StripeLink};
use crate::fixtures::PROCESSORS;
use crate::harness::{Backend, TestServer};
use crate::process::until;

const OK: &str = "https://shop.example.com/ok";
const FAILED: &str = "https://shop.example.com/failed";

/// A server that reaches localstripe through a link (a three-second Stripe time-out), its
/// merchant's Stripe account connected as the default card processor (its id last).
async fn behind_link(backend: Backend) -> (TestServer, StripeLink, i64) {
    let link = StripeLink::start().await;
    let server = TestServer::start_with(
        backend,
        &[
            ("RECUR_STRIPE_API_BASE", &link.url),
            ("RECUR_STRIPE_TIMEOUT_SECONDS", "3"),
        ],
    )
    .await;
    let token = server.token().await;
    let connected = server
        .call(
            Method::POST,
            PROCESSORS,
            Some(&token),
            Some(
                json!({"kind": "stripe", "name": "Stripe", "secretKey": SECRET_KEY,
                "publishableKey": "pk_test_51RenewalTests", "webhookSecret": WEBHOOK_SECRET,
                "default": true}),
            ),
        )
        .await;
    assert_eq!(connected.status, StatusCode::CREATED, "{}", connected.body);
    let processor = connected.body["paymentProcessorId"].as_i64().unwrap();
    (server, link, processor)
}

/// Opens the cashier at `url`, saves the card `number` with its SetupIntent at Stripe, and
/// posts the Stripe form: the page's answer.
async fn pay_with_stripe(client: &reqwest::Client, url: &str, number: &str) -> Page {
    paying_with_stripe(client, url, number).await.0
}

/// [`pay_with_stripe`], with the form it posted.
async fn paying_with_stripe(
    client: &reqwest::Client,
    url: &str,
    number: &str,
) -> (Page, Vec<(&'static str, String)>) {
    let form_page = page(client.get(url).send().await.unwrap()).await;
    assert_eq!(form_page.status, StatusCode::OK, "{}", form_page.text);
    let marker = "data-client-secret=\"";
    let start = form_page.text.find(marker).expect("a card Element") + marker.len();
    let client_secret = &form_page.text[start..][..form_page.text[start..].find('"').unwrap()];
    let setup_intent = client_secret.split("_secret_").next().unwrap();
    let card = card_method(number).await;
    let confirmed = stripe(
        Method::POST,
        &format!("/v1/setup_intents/{setup_intent}/confirm"),
        &[("payment_method", card["id"].as_str().unwrap())],
    )
    .await;
    assert_eq!(confirmed["status"], "succeeded", "{confirmed}");
    let mut form: Vec<(&str, String)> = ["sessionToken", "m_orderId", "csrfToken"]
        .into_iter()
        .map(|name| (name, hidden(&form_page.text, name)))
        .collect();
    form.push(("setupIntent", setup_intent.to_string()));
    let base = url.split("/cashier").next().unwrap();
    let answer = page(
        client
            .post(format!("{base}/cashier/stripe"))
            .form(&form)
            .send()
            .await
            .unwrap(),
    )
    .await;
    (answer, form)
}

/// Pays the order at `url` while `link` holds Stripe's answers to confirmations: the page says
/// it waits for Stripe (503), nothing is recorded, and Stripe charges the card meanwhile.
/// Returns the form that was posted.
async fn paid_while_confirmations_are_held(
    server: &TestServer,
    link: &StripeLink,
    client: &reqwest::Client,
    url: &str,
    order: &str,
) -> Vec<(&'static str, String)> {
    link.set(Mode::HoldAfter("/confirm "));
    let (waiting, form) = paying_with_stripe(client, url, "4242424242424242").await;
    assert_eq!(
        waiting.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        waiting.text
    );
    assert!(transactions(server, order).await.is_empty());
    until("Stripe's payment", Duration::from_secs(20), async || {
        intents_of(order).await.first().map(|i| i["status"].clone()) == Some("succeeded".into())
    })
    .await;
    form
}

/// The order's PaymentIntents at Stripe.
async fn intents_of(order_id: &str) -> Vec<Value> {
    intents_where("orderId", order_id).await
}

/// (kind, status) of the order's transactions, oldest first.
async fn transactions(server: &TestServer, order_id: &str) -> Vec<(String, String)> {
    sqlx::query_as("SELECT kind, status FROM cashier_transactions WHERE order_id = $1 ORDER BY id")
        .bind(order_id)
        .fetch_all(server.server.state.store.pool())
        .await
        .unwrap()
}

fn pair(kind: &str, status: &str) -> (String, String) {
    (kind.into(), status.into())
}

backend_matrix!(
    a_lost_confirmation_is_read_back_and_a_lost_refund_found_again,
    |backend| async move {
        let (server, link, _) = behind_link(backend).await;
        let order = format!("hp-stripe-lost-{}", uuid::Uuid::new_v4().simple());
        let url = open_order(&server, &order, "https://merchant.example/hooks", json!({})).await;
        let client = visitor();

        // Stripe charges the card; its answer to the confirmation never reaches recur.
        let mut form =
            paid_while_confirmations_are_held(&server, &link, &client, &url, &order).await;
        // The sandbox's identity-confirmation step cannot take the parked payment over.
        form.retain(|(name, _)| *name != "setupIntent");
        form.push(("action", "confirm".into()));
        let base = url.split("/cashier").next().unwrap();
        let confirm = page(
            client
                .post(format!("{base}/cashier/confirm"))
                .form(&form)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(confirm.status, StatusCode::SEE_OTHER, "{}", confirm.text);
        assert!(transactions(&server, &order).await.is_empty());

        // The next view of the page reads the parked PaymentIntent: paid, recorded once.
        link.set(Mode::Pass);
        let paid = page(client.get(&url).send().await.unwrap()).await;
        assert_eq!(paid.location.as_deref(), Some(OK), "{}", paid.text);
        assert_eq!(
            transactions(&server, &order).await,
            [pair("PayIn", "Success")]
        );
        let intents = intents_of(&order).await;
        assert_eq!(intents.len(), 1, "{intents:?}");
        let again = page(client.get(&url).send().await.unwrap()).await;
        assert_eq!(again.status, StatusCode::OK, "the outcome page");
        assert_eq!(transactions(&server, &order).await.len(), 1);

        // A refund whose answer is lost records nothing; asked again, it is found at Stripe.
        link.set(Mode::HoldAfter("POST /v1/refunds "));
        let lost = secret_post(&server, "/api/payment/refund", &json!({"orderId": order})).await;
        assert_eq!(
            lost.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            lost.body
        );
        assert_eq!(transactions(&server, &order).await.len(), 1);
        let intent = intents[0]["id"].as_str().unwrap().to_string();
        let refunds_at_stripe = async || {
            stripe(
                Method::GET,
                &format!("/v1/refunds?payment_intent={intent}"),
                &[],
            )
            .await["data"]
                .as_array()
                .unwrap()
                .len()
        };
        until("Stripe's refund", Duration::from_secs(20), async || {
            refunds_at_stripe().await == 1
        })
        .await;
        link.set(Mode::Pass);
        let refunded =
            secret_post(&server, "/api/payment/refund", &json!({"orderId": order})).await;
        assert_eq!(refunded.status, StatusCode::CREATED, "{}", refunded.body);
        assert_eq!(refunded.body["transactionStatus"], "Success");
        assert_eq!(refunded.body["amount"], "49.90");
        assert_eq!(refunds_at_stripe().await, 1, "not refunded twice");
        assert_eq!(
            transactions(&server, &order).await,
            [pair("PayIn", "Success"), pair("Refund", "Success")]
        );
    }
);

backend_matrix!(
    an_unanswered_payment_intent_moves_nothing_and_the_customer_pays_again,
    |backend| async move {
        let (server, link, _) = behind_link(backend).await;
        let order = format!("hp-stripe-unmade-{}", uuid::Uuid::new_v4().simple());
        let url = open_order(&server, &order, "https://merchant.example/hooks", json!({})).await;
        let client = visitor();

        // Stripe's answer to the PaymentIntent's creation is lost: it is never confirmed, and
        // the payment is recorded as failed.
        link.set(Mode::HoldAfter("POST /v1/payment_intents "));
        let failed = pay_with_stripe(&client, &url, "4242424242424242").await;
        assert_eq!(failed.location.as_deref(), Some(FAILED), "{}", failed.text);
        assert_eq!(
            transactions(&server, &order).await,
            [pair("PayIn", "Failed")]
        );
        let made = intents_of(&order).await;
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(made[0]["status"], "requires_confirmation", "nothing moved");

        link.set(Mode::Pass);
        let paid = pay_with_stripe(&client, &url, "4242424242424242").await;
        assert_eq!(paid.location.as_deref(), Some(OK), "{}", paid.text);
        assert_eq!(
            transactions(&server, &order).await,
            [pair("PayIn", "Failed"), pair("PayIn", "Success")]
        );
        let statuses: Vec<Value> = intents_of(&order)
            .await
            .iter()
            .map(|i| i["status"].clone())
            .collect();
        assert_eq!(statuses, ["requires_confirmation", "succeeded"]);
    }
);

backend_matrix!(
    stripes_webhook_settles_a_parked_payment,
    |backend| async move {
        let (server, link, processor) = behind_link(backend).await;
        let order = format!("hp-stripe-event-{}", uuid::Uuid::new_v4().simple());
        let url = open_order(&server, &order, "https://merchant.example/hooks", json!({})).await;
        paid_while_confirmations_are_held(&server, &link, &visitor(), &url, &order).await;
        link.set(Mode::Pass);
        // The account cannot be removed while the payment waits for its answer.
        let token = server.token().await;
        let path = format!("{PROCESSORS}/{processor}");
        let in_use = server.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(in_use.status, StatusCode::CONFLICT, "{}", in_use.body);

        // The customer never comes back; Stripe tells recur (the event's object is the
        // PaymentIntent as Stripe has it, and recur reads it again anyway).
        let intent = intents_of(&order).await.remove(0);
        let id = format!("evt_{}", uuid::Uuid::new_v4().simple());
        let outcome = event(
            &server,
            processor,
            &id,
            "payment_intent.succeeded",
            intent.clone(),
        )
        .await;
        assert_eq!(outcome, "handled");
        assert_eq!(
            transactions(&server, &order).await,
            [pair("PayIn", "Success")]
        );
        let repeated = event(&server, processor, &id, "payment_intent.succeeded", intent).await;
        assert_eq!(repeated, "repeated");
        assert_eq!(transactions(&server, &order).await.len(), 1);
        let removed = server.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(removed.status, StatusCode::NO_CONTENT, "{}", removed.body);
    }
);

backend_matrix!(
    a_refund_made_in_stripes_dashboard_is_recorded_once_on_the_order,
    |backend| async move {
        let (server, _link, processor) = behind_link(backend).await;
        let order = format!("hp-stripe-dashboard-{}", uuid::Uuid::new_v4().simple());
        let url = open_order(&server, &order, "https://merchant.example/hooks", json!({})).await;
        let paid = pay_with_stripe(&visitor(), &url, "4242424242424242").await;
        assert_eq!(paid.location.as_deref(), Some(OK), "{}", paid.text);
        let intent = intents_of(&order).await.remove(0);
        let pi = intent["id"].as_str().unwrap().to_string();

        // The merchant refunds 10.00 in Stripe's dashboard; Stripe says so, twice.
        let made = stripe(
            Method::POST,
            "/v1/refunds",
            &[("payment_intent", &pi), ("amount", "1000")],
        )
        .await;
        assert_eq!(made["status"], "succeeded", "{made}");
        let charge = json!({"id": "ch_dashboard", "object": "charge", "payment_intent": pi,
                            "amount_refunded": 1000, "refunded": false});
        for _ in 0..2 {
            let id = format!("evt_{}", uuid::Uuid::new_v4().simple());
            let outcome = event(&server, processor, &id, "charge.refunded", charge.clone()).await;
            assert_eq!(outcome, "handled");
        }
        let amounts: Vec<(String, i64)> = sqlx::query_as(
            "SELECT kind, amount FROM cashier_transactions WHERE order_id = $1 ORDER BY id",
        )
        .bind(&order)
        .fetch_all(server.server.state.store.pool())
        .await
        .unwrap();
        assert_eq!(amounts, [("PayIn".into(), 4990), ("Refund".into(), 1000)]);

        // What is left is refunded through recur, and Stripe's event about it records nothing.
        let rest = secret_post(&server, "/api/payment/refund", &json!({"orderId": order})).await;
        assert_eq!(rest.status, StatusCode::CREATED, "{}", rest.body);
        assert_eq!(rest.body["amount"], "39.90");
        let id = format!("evt_{}", uuid::Uuid::new_v4().simple());
        event(&server, processor, &id, "charge.refunded", charge).await;
        assert_eq!(
            transactions(&server, &order).await,
            [
                pair("PayIn", "Success"),
                pair("Refund", "Success"),
                pair("Refund", "Success")
            ]
        );
    }
);
