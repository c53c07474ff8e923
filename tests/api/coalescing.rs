//! Concurrent creates and reads share statements (`store::coalesce`): under a burst of requests
//! from two merchants, each request still gets exactly its own answer, and no merchant sees the
//! other's rows.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::{CUSTOMER, MEMBERSHIP};
use crate::harness::{Reply, TestServer};

/// Sends every `(token, method, path, body)` at once.
async fn burst(
    server: &TestServer,
    calls: Vec<(String, Method, String, Option<Value>)>,
) -> Vec<Reply> {
    join_all(
        calls
            .into_iter()
            .map(|(token, method, path, body)| async move {
                server.call(method, &path, Some(&token), body).await
            }),
    )
    .await
}

backend_test!(
    bursts_of_two_merchants_get_their_own_answers,
    |server: TestServer| async move {
        let a = server.token().await;
        let other = server
            .another_merchant(recur::store::merchants::Mode::Sandbox)
            .await;
        let b = server.token_for(&other).await;
        let body_for = |merchant: &str, email: &str| {
            let mut body = server.customer_body(email);
            if merchant == "b" {
                body["processorKey"] = json!(other.processor_key);
            }
            body
        };

        // Customers: 12 of A, 6 of B (one with an e-mail A uses too), and one e-mail of A sent
        // five times at once.
        let mut expected: Vec<(&str, String)> = (0..12)
            .map(|i| ("a", format!("a{i}@example.com")))
            .collect();
        expected.push(("b", "a0@example.com".to_owned()));
        expected.extend((1..6).map(|i| ("b", format!("b{i}@example.com"))));
        expected.extend((0..5).map(|_| ("a", "twice@example.com".to_owned())));
        let calls = expected
            .iter()
            .map(|(merchant, email)| {
                let token = if *merchant == "a" { &a } else { &b };
                let body = Some(body_for(merchant, email));
                (token.clone(), Method::POST, CUSTOMER.to_owned(), body)
            })
            .collect();
        let replies = burst(&server, calls).await;
        let mut customers: Vec<(&str, String, String)> = Vec::new();
        for ((merchant, email), reply) in expected.iter().zip(&replies) {
            assert!(
                reply.status == StatusCode::CREATED
                    || (email == "twice@example.com" && reply.status == StatusCode::OK),
                "{email}: {} {}",
                reply.status,
                reply.body
            );
            assert_eq!(reply.body["email"], json!(email), "{}", reply.body);
            let key = reply.body["customerKey"].as_str().unwrap().to_owned();
            customers.push((merchant, email.clone(), key));
        }
        let twice: Vec<&String> = customers
            .iter()
            .filter(|(_, email, _)| email == "twice@example.com")
            .map(|(_, _, key)| key)
            .collect();
        assert!(
            twice.iter().all(|key| *key == twice[0]),
            "one customer per e-mail"
        );
        let created_twice = replies[18..]
            .iter()
            .filter(|reply| reply.status == StatusCode::CREATED)
            .count();
        assert_eq!(created_twice, 1, "exactly one of the five creates wins");
        assert_ne!(
            customers[0].2, customers[12].2,
            "the same e-mail at two merchants"
        );

        // Memberships: one per customer of A and B, one order sent three times, and B naming a
        // customer of A.
        let mut calls = Vec::new();
        for (i, (merchant, _, key)) in customers[..18].iter().enumerate() {
            let token = if *merchant == "a" { &a } else { &b };
            let body = server.membership_body(key, &format!("order-{i}"));
            calls.push((
                token.clone(),
                Method::POST,
                MEMBERSHIP.to_owned(),
                Some(body),
            ));
        }
        for _ in 0..3 {
            let body = server.membership_body(&customers[1].2, "order-1");
            calls.push((a.clone(), Method::POST, MEMBERSHIP.to_owned(), Some(body)));
        }
        let foreign = server.membership_body(&customers[2].2, "foreign");
        calls.push((
            b.clone(),
            Method::POST,
            MEMBERSHIP.to_owned(),
            Some(foreign),
        ));
        let replies = burst(&server, calls).await;
        let mut memberships = Vec::new();
        for (i, reply) in replies[..18].iter().enumerate() {
            assert!(
                reply.status == StatusCode::CREATED || (i == 1 && reply.status == StatusCode::OK),
                "{} {}",
                reply.status,
                reply.body
            );
            assert_eq!(reply.body["customerKey"], json!(customers[i].2));
            assert_eq!(
                reply.body["productInfo"]["orderId"],
                json!(format!("order-{i}"))
            );
            memberships.push(reply.body["membershipKey"].as_str().unwrap().to_owned());
        }
        for reply in &replies[18..21] {
            assert_eq!(
                reply.body["membershipKey"],
                json!(memberships[1]),
                "{}",
                reply.body
            );
        }
        let order_1_created = [&replies[1], &replies[18], &replies[19], &replies[20]]
            .iter()
            .filter(|reply| reply.status == StatusCode::CREATED)
            .count();
        assert_eq!(order_1_created, 1, "exactly one of the four creates wins");
        let errors = replies[21].problem(400);
        assert!(errors.contains_key("customerKey"), "{}", replies[21].body);

        // Two of A's memberships get an invoice, so that reads carry invoices too.
        for i in [3, 4] {
            server
                .attach_card(&a, &customers[i].2, "4242424242424242")
                .await;
            let paid = server.pay(&a, &memberships[i]).await;
            assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
        }

        // Reads: every customer and membership by its merchant, and each of them by the other.
        let mut calls = Vec::new();
        let mut expected = Vec::new();
        for (i, (merchant, _, key)) in customers[..18].iter().enumerate() {
            let (own, foreign) = if *merchant == "a" { (&a, &b) } else { (&b, &a) };
            let customer = format!("{CUSTOMER}/{key}");
            let membership = format!("{MEMBERSHIP}/{}", memberships[i]);
            calls.push((own.clone(), Method::GET, customer.clone(), None));
            expected.push((StatusCode::OK, i, "customer"));
            calls.push((own.clone(), Method::GET, membership.clone(), None));
            expected.push((StatusCode::OK, i, "membership"));
            calls.push((foreign.clone(), Method::GET, customer, None));
            expected.push((StatusCode::NOT_FOUND, i, "customer"));
            calls.push((foreign.clone(), Method::GET, membership, None));
            expected.push((StatusCode::NOT_FOUND, i, "membership"));
        }
        let replies = burst(&server, calls).await;
        for ((status, i, kind), reply) in expected.iter().zip(&replies) {
            assert_eq!(reply.status, *status, "{kind} {i}: {}", reply.body);
            if *status != StatusCode::OK {
                continue;
            }
            assert_eq!(
                reply.body["customerKey"],
                json!(customers[*i].2),
                "{}",
                reply.body
            );
            if *kind == "customer" {
                assert_eq!(reply.body["email"], json!(customers[*i].1));
            } else {
                assert_eq!(reply.body["membershipKey"], json!(memberships[*i]));
                let invoices = reply.body["invoices"].as_array().unwrap().len();
                assert_eq!(invoices, usize::from([3, 4].contains(i)), "{}", reply.body);
            }
        }
    }
);
