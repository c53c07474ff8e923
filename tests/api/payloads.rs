//! Membership webhook payloads against the interface documents ([`crate::fixtures::spec`]): the
//! common fields of every `Action` as delivered, the subscription `TRANSACTION_DATA_UPDATE` field
//! by field with the types of the hosted-payment-page table (as on the cashier path), every key
//! of the `Updates` table, and a `UsdAmount` for every currency.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::fixtures::cashier::{self, notices};
use crate::fixtures::spec::{self, keys};
use crate::fixtures::MEMBERSHIP;
use crate::harness::{Backend, TestServer};
use crate::receivers::{eventually, WebhookReceiver};
use crate::visitor::Visitor;
use crate::{backend_matrix, backend_test};

/// The address the customer's browser has behind the trusted proxy of these tests.
const CUSTOMER: &str = "203.0.113.7";

/// A checkout page visitor behind a proxy that forwards for [`CUSTOMER`].
fn customer_behind_proxy() -> Visitor {
    let forwarded = reqwest::header::HeaderMap::from_iter([(
        reqwest::header::HeaderName::from_static("x-forwarded-for"),
        reqwest::header::HeaderValue::from_static(CUSTOMER),
    )]);
    Visitor {
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(forwarded)
            .build()
            .unwrap(),
    }
}

/// An Incomplete membership of a customer with `email`, notifying `webhook`; returns its key.
async fn membership_for(
    server: &TestServer,
    token: &str,
    email: &str,
    order: &str,
    webhook: &str,
) -> (String, String) {
    let customer = server.create_customer(token, email).await;
    let mut body = server.membership_body(&customer, order);
    body["webhookUrl"] = json!(webhook);
    let record = server.create_membership(token, body).await;
    let key = record["membershipKey"].as_str().unwrap().to_string();
    (customer, key)
}

backend_matrix!(
    every_action_carries_the_common_fields_and_transactions_the_cashier_types,
    |backend: Backend| async move {
        let receiver = WebhookReceiver::start().await;
        let mut settings = receiver.settings().to_vec();
        settings.push(("RECUR_TRUSTED_PROXIES", "127.0.0.0/8".into()));
        let server = TestServer::start_with_owned(backend, &settings).await;
        let token = server.token().await;
        server.advance(&token, "2027-03-01T00:00:00Z").await;
        // The payer of the hosted-page tests, so the cashier order below is the same payer.
        let (customer, key) = membership_for(
            &server,
            &token,
            "payer@example.com",
            "order-p1",
            &receiver.url,
        )
        .await;
        let session = server
            .call(
                Method::POST,
                "/api/subscriptions/v1/checkout/session",
                Some(&token),
                Some(json!({"customerKey": customer, "membershipKey": key})),
            )
            .await;
        assert_eq!(session.status, StatusCode::CREATED, "{}", session.body);
        let url = session.body["checkoutRedirectUrl"].as_str().unwrap();
        // A declined card, then a good one, on the same checkout link.
        let customer_page = customer_behind_proxy();
        let declined = customer_page.pay(url, "4000000000000002").await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        let paid = customer_page.pay(url, "4242424242424242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let renamed = server
            .call(
                Method::PUT,
                MEMBERSHIP,
                Some(&token),
                Some(json!({"membershipKey": key, "name": "Platinum plan"})),
            )
            .await;
        assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
        // The renewal at the period's end; the catch-up delivers what is due.
        server.advance(&token, "2027-04-01T00:00:00Z").await;
        eventually(|| receiver.received().len() >= 5).await;
        let bodies: Vec<Value> = receiver.received().iter().map(|r| r.json()).collect();

        let membership_spec = spec::membership_fields();
        let mut ids = BTreeSet::new();
        for body in &bodies {
            let membership = spec::assert_common_fields(&membership_spec, body);
            assert_eq!(body["OrderId"], "order-p1");
            assert_eq!(membership["Key"], key.as_str());
            assert_eq!(membership["CustomerKey"], customer.as_str());
            assert_eq!(membership["Metadata"], "crm-42");
            ids.insert(membership["Id"].as_str().unwrap().to_string());
        }
        assert_eq!(ids.len(), 1, "one stable Membership.Id");
        let actions: BTreeSet<&str> = bodies
            .iter()
            .map(|b| b["Action"].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            BTreeSet::from([
                "SUBSCRIPTION_STATUS_CHANGED",
                "SUBSCRIPTION_UPDATED",
                "TRANSACTION_DATA_UPDATE"
            ])
        );

        // Transactions: the notification table (plus the membership payload's common fields),
        // each field of its documented type.
        let (top, _, _) = spec::notification_fields();
        let expected: BTreeSet<String> = top
            .into_iter()
            .chain(membership_spec.common.iter().cloned())
            .collect();
        let charges: Vec<&Value> = bodies
            .iter()
            .filter(|b| b["Action"] == "TRANSACTION_DATA_UPDATE")
            .collect();
        assert_eq!(charges.len(), 3, "declined, paid, renewed");
        let (on_page, renewals): (Vec<&Value>, Vec<&Value>) = charges
            .iter()
            .partition(|b| b["IssueDate"].as_str().unwrap().starts_with("2027-03-01"));
        assert_eq!((on_page.len(), renewals.len()), (2, 1));
        // Customers have no date of birth and this one no state (`Region`).
        let unknown = ["AccountDetails.Dob", "AccountDetails.Region"];
        for body in &charges {
            assert_eq!(keys(body), expected);
            assert_eq!(body["UsdAmount"], json!(32.37), "29.97 EUR × 1.08");
            assert_eq!(body["AccountId"], charges[0]["AccountId"]);
            assert_eq!(body["IsSubscriptionTransaction"], true);
        }
        for body in &on_page {
            spec::assert_documented_types(body, &unknown);
            assert_eq!(
                body["ClientIP"], CUSTOMER,
                "the client behind the trusted proxy"
            );
            assert_eq!(
                body["CascadingInfo"]["SessionId"], on_page[0]["CascadingInfo"]["SessionId"],
                "one SessionId for the checkout link"
            );
        }
        let statuses: BTreeSet<&str> = on_page
            .iter()
            .map(|b| b["TransactionStatus"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, BTreeSet::from(["Rejected", "Success"]));
        spec::assert_documented_types(
            renewals[0],
            &[
                unknown[0],
                unknown[1],
                "ClientIP",
                "CascadingInfo.SessionId",
            ],
        );

        // The same payer paying a cashier order gets the same AccountId.
        let order = cashier::session_body(&server, "hp-p1", &receiver.url, json!({}));
        let cashier_url = cashier::open(&server, &order).await;
        cashier::pay(
            &cashier::visitor(),
            &cashier_url,
            cashier::card("4242424242424242", "101"),
        )
        .await;
        let order_paid = &notices(&server, "hp-p1").await[0];
        assert_eq!(order_paid["AccountId"], charges[0]["AccountId"]);
    }
);

backend_matrix!(
    usd_amount_is_never_null_and_operator_rates_replace_only_their_own,
    |backend: Backend| async move {
        let server = TestServer::start_with(backend, &[("RECUR_USD_RATES", "EUR=1.10")]).await;
        let token = server.token().await;
        let customer = server.create_customer(&token, "fx@example.com").await;
        let eur = server.membership_body(&customer, "order-eur");
        server
            .active_membership(&token, "2027-03-01T00:00:00Z", eur)
            .await;
        let mut thb = server.membership_body(&customer, "order-thb");
        thb["pricingInfo"] =
            json!({"currency": "THB", "totalAmount": "300.00", "pricePerUnit": 100, "quantity": 3});
        server
            .active_membership(&token, "2027-03-01T00:00:00Z", thb)
            .await;
        let eur_charge = &notices(&server, "order-eur").await[0];
        assert_eq!(eur_charge["UsdAmount"], json!(32.97), "29.97 EUR × 1.10");
        let thb_charge = &notices(&server, "order-thb").await[0];
        assert_eq!(
            thb_charge["UsdAmount"],
            json!(8.4),
            "300 THB × the reference 0.028"
        );
        // The cashier path converts with the same table.
        let order = cashier::session_body(
            &server,
            "hp-thb",
            "https://merchant.example.com/hooks/payments",
            json!({"billingDetails": {"currency": "THB", "lockedAmount": 1000}}),
        );
        let url = cashier::open(&server, &order).await;
        cashier::pay(
            &cashier::visitor(),
            &url,
            cashier::card("4242424242424242", "101"),
        )
        .await;
        let order_paid = &notices(&server, "hp-thb").await[0];
        assert_eq!(order_paid["UsdAmount"], json!(28), "1000 THB × 0.028");
    }
);

backend_test!(
    each_updates_key_has_its_documented_type,
    |server: TestServer| async move {
        let token = server.token().await;
        let customer = server.create_customer(&token, "u1@example.com").await;
        let body = server.membership_body(&customer, "order-u1");
        let record = server
            .active_membership(&token, "2027-03-01T00:00:00Z", body)
            .await;
        let key = record["membershipKey"].as_str().unwrap();
        // Each key of the spec's table, the update that changes only it, and the value the
        // event carries (docs/webhooks.md "Events").
        let cases = [
            (
                "Name",
                json!({"name": "Platinum plan"}),
                json!("Platinum plan"),
            ),
            (
                "PricePerUnit",
                json!({"pricePerUnit": 12.5}),
                json!("12.50"),
            ),
            ("Quantity", json!({"quantity": 4}), json!(4)),
            (
                "EndDate",
                json!({"endDate": "2028-01-01T00:00:00"}),
                json!("2028-01-01T00:00:00Z"),
            ),
            (
                "IntervalType",
                json!({"intervalType": "Weekly"}),
                json!("Weekly"),
            ),
            ("IntervalCount", json!({"intervalCount": 2}), json!(2)),
            ("Metadata", json!({"metadata": "crm-43"}), json!("crm-43")),
        ];
        let covered: BTreeSet<String> = cases.iter().map(|(k, ..)| k.to_string()).collect();
        assert_eq!(
            covered,
            spec::membership_fields().updates,
            "every key of the table"
        );
        for (name, mut change, value) in cases {
            change["membershipKey"] = json!(key);
            let reply = server
                .call(Method::PUT, MEMBERSHIP, Some(&token), Some(change))
                .await;
            assert_eq!(reply.status, StatusCode::OK, "{name}: {}", reply.body);
            let events = server.events("order-u1").await;
            let update = events
                .iter()
                .rev()
                .find(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
                .unwrap();
            assert_eq!(
                update["Membership"]["Updates"],
                json!({ name: value }),
                "{name}: only the changed key, with its value"
            );
            assert!(uuid::Uuid::parse_str(update["Membership"]["Id"].as_str().unwrap()).is_ok());
        }
        let events = server.events("order-u1").await;
        let updates: Vec<&Value> = events
            .iter()
            .filter(|e| e["Action"] == "SUBSCRIPTION_UPDATED")
            .collect();
        assert_eq!(updates.len(), 7, "one event per update");
        assert!(spec::is_utc_time(
            updates[3]["Membership"]["Updates"]["EndDate"]
                .as_str()
                .unwrap()
        ));
    }
);
