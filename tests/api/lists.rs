//! Lists and search (DESIGN §10): `GET /customers`, `/memberships`, `/invoices` and `/events`,
//! newest first a page at a time, with their filters. What lists refuse (bad parameters and
//! cursors, other merchants' records, missing tokens) is in `list_refusals.rs`; the helpers of
//! both are in [`crate::fixtures::lists`].

use std::collections::HashSet;

use serde_json::Value;

use crate::backend_test;
use crate::fixtures::lists::{
    cancel, customer, declined_first_payment, get, keys, listed, page, refused,
};
use crate::harness::TestServer;

backend_test!(
    forty_five_customers_come_in_pages_of_20_20_and_5_newest_first,
    |server: TestServer| async move {
        let token = server.token().await;
        let mut created = Vec::new();
        for n in 0..45 {
            created.push(
                server
                    .create_customer(&token, &format!("page-{n:02}@example.com"))
                    .await,
            );
        }
        let mut seen = Vec::new();
        let mut path = "/customers?limit=20".to_string();
        let mut sizes = Vec::new();
        loop {
            let page = page(&server, &token, &path).await;
            let keys = keys(&page, "customerKey");
            sizes.push(keys.len());
            seen.extend(keys);
            match page["nextCursor"].as_str() {
                Some(cursor) => {
                    assert_eq!(page["hasMore"], true);
                    path = format!("/customers?limit=20&cursor={cursor}");
                }
                None => {
                    assert_eq!(page["hasMore"], false);
                    assert_eq!(page["nextCursor"], Value::Null);
                    break;
                }
            }
        }
        assert_eq!(sizes, [20, 20, 5]);
        let newest_first: Vec<String> = created.iter().rev().cloned().collect();
        assert_eq!(seen, newest_first);
        assert_eq!(
            seen.iter().collect::<HashSet<_>>().len(),
            45,
            "no duplicates"
        );

        // Without a limit: 20. Each record is the one GET /customer/{key} answers.
        let first = page(&server, &token, "/customers").await;
        assert_eq!(first["data"].as_array().unwrap().len(), 20);
        let single = get(&server, &token, &format!("/customer/{}", created[44])).await;
        assert_eq!(first["data"][0], single.body);
        // A limit that fits everything: one page, no cursor.
        let all = page(&server, &token, "/customers?limit=100").await;
        assert_eq!(keys(&all, "customerKey"), newest_first);
        assert_eq!(all["hasMore"], false);
        assert_eq!(all["nextCursor"], Value::Null);
        // Exactly one page's worth left: no further page is promised.
        let last_page = page(&server, &token, "/customers?limit=45").await;
        assert_eq!(last_page["hasMore"], false);
    }
);

backend_test!(
    customers_are_found_by_email_and_by_prefix_in_any_case,
    |server: TestServer| async move {
        let token = server.token().await;
        let elodie = customer(&server, &token, "Élodie", "Durand", "Elodie.D@Example.com").await;
        let ada = customer(&server, &token, "Ada", "Lovelace", "ada@example.com").await;
        let adam = customer(&server, &token, "Adam", "Smith", "smith@example.org").await;
        let zoe = customer(&server, &token, "Zoë", "Ölmann", "zoe@example.net").await;

        let found = |query: &'static str| {
            let (server, token) = (&server, &token);
            async move { listed(server, token, &format!("/customers?{query}"), "customerKey").await }
        };
        // E-mail: exact, in any letter case.
        assert_eq!(found("email=elodie.d@example.com").await, [elodie.as_str()]);
        assert_eq!(
            found("email=ELODIE.D%40EXAMPLE.COM").await,
            [elodie.as_str()]
        );
        assert!(found("email=elodie@example.com").await.is_empty());
        // q: a prefix of the e-mail, first or last name; a customer matching twice is listed once.
        assert_eq!(found("q=ad").await, [adam.as_str(), ada.as_str()]);
        assert_eq!(found("q=ADA").await, [adam.as_str(), ada.as_str()]);
        assert_eq!(found("q=ada@").await, [ada.as_str()]);
        assert_eq!(found("q=%C3%A9lo").await, [elodie.as_str()], "é finds É");
        assert_eq!(found("q=ELODIE.").await, [elodie.as_str()], "by e-mail");
        assert_eq!(found("q=dur").await, [elodie.as_str()], "by last name");
        assert_eq!(found("q=%C3%B6lm").await, [zoe.as_str()], "ö finds Ö");
        assert_eq!(found("q=smith").await, [adam.as_str()]);
        assert!(found("q=lovelaces").await.is_empty());
        assert!(found("q=x").await.is_empty());
        // Both filters at once keep what both keep.
        assert_eq!(found("q=ad&email=ada@example.com").await, [ada.as_str()]);
        assert!(found("q=sm&email=ada@example.com").await.is_empty());

        // A search pages like the whole list, and its cursor holds for that search only.
        let first = page(&server, &token, "/customers?q=ad&limit=1").await;
        assert_eq!(keys(&first, "customerKey"), [adam.as_str()]);
        let cursor = first["nextCursor"].as_str().unwrap().to_string();
        let second = page(
            &server,
            &token,
            &format!("/customers?q=ad&limit=1&cursor={cursor}"),
        )
        .await;
        assert_eq!(keys(&second, "customerKey"), [ada.as_str()]);
        assert_eq!(second["hasMore"], false);
        refused(
            &server,
            &token,
            &format!("/customers?q=sm&limit=1&cursor={cursor}"),
            "cursor",
        )
        .await;
        refused(
            &server,
            &token,
            &format!("/customers?limit=1&cursor={cursor}"),
            "cursor",
        )
        .await;
        refused(&server, &token, "/customers?q=", "q").await;
        refused(&server, &token, "/customers?email=", "email").await;
    }
);

backend_test!(
    memberships_invoices_and_events_are_listed_with_their_filters,
    |server: TestServer| async move {
        let token = server.token().await;
        let a = server.create_customer(&token, "a@example.com").await;
        let b = server.create_customer(&token, "b@example.com").await;
        let m1 = server
            .active_membership(
                &token,
                "2027-03-01T00:00:00Z",
                server.membership_body(&a, "order-1"),
            )
            .await;
        let m2 = server
            .create_membership(&token, server.membership_body(&a, "order-2"))
            .await;
        let m3 = server
            .create_membership(&token, server.membership_body(&b, "order-3"))
            .await;
        let key = |record: &Value| record["membershipKey"].as_str().unwrap().to_string();
        let (m1, m2, m3) = (key(&m1), key(&m2), key(&m3));
        // m2's first invoice stays Open, m3's is voided by the cancel.
        declined_first_payment(&server, &token, &a, &m2).await;
        declined_first_payment(&server, &token, &b, &m3).await;
        cancel(&server, &token, &m3).await;
        let memberships = |query: String| {
            let (server, token) = (&server, &token);
            async move {
                listed(
                    server,
                    token,
                    &format!("/memberships{query}"),
                    "membershipKey",
                )
                .await
            }
        };

        // Memberships, newest first, each as GET /membership/{key} answers it.
        let all = page(&server, &token, "/memberships").await;
        assert_eq!(
            keys(&all, "membershipKey"),
            [m3.as_str(), m2.as_str(), m1.as_str()]
        );
        assert_eq!(all["data"][2], server.membership(&token, &m1).await);
        assert_eq!(memberships("?status=Active".into()).await, [m1.as_str()]);
        assert_eq!(memberships("?status=Canceled".into()).await, [m3.as_str()]);
        assert_eq!(
            memberships(format!("?customerKey={a}")).await,
            [m2.as_str(), m1.as_str()]
        );
        assert_eq!(
            memberships(format!("?customerKey={a}&status=Incomplete")).await,
            [m2.as_str()]
        );
        assert!(memberships(format!("?customerKey={b}&status=Active"))
            .await
            .is_empty());
        assert!(memberships("?customerKey=cstmr_unknown".into())
            .await
            .is_empty());
        refused(&server, &token, "/memberships?status=active", "status").await;

        // Invoices, newest first, each as GET /invoice/{key} answers it.
        let invoice_of = |m: &str| {
            let (server, token, m) = (&server, &token, m.to_string());
            async move {
                server.membership(token, &m).await["invoices"][0]["invoiceKey"]
                    .as_str()
                    .unwrap()
                    .to_string()
            }
        };
        let (i1, i2, i3) = (
            invoice_of(&m1).await,
            invoice_of(&m2).await,
            invoice_of(&m3).await,
        );
        let invoices = |query: String| {
            let (server, token) = (&server, &token);
            async move { listed(server, token, &format!("/invoices{query}"), "invoiceKey").await }
        };
        let all = page(&server, &token, "/invoices").await;
        assert_eq!(
            keys(&all, "invoiceKey"),
            [i3.as_str(), i2.as_str(), i1.as_str()]
        );
        let single = get(&server, &token, &format!("/invoice/{i1}")).await;
        // The PDF link's expiry is counted from each answer's second.
        let without_link = |mut invoice: Value| {
            invoice.as_object_mut().unwrap().remove("pdfUrl");
            invoice
        };
        assert_eq!(
            without_link(all["data"][2].clone()),
            without_link(single.body)
        );
        assert!(all["data"][2]["createdAt"].is_string());
        assert_eq!(invoices("?status=Paid".into()).await, [i1.as_str()]);
        assert_eq!(invoices("?status=Void".into()).await, [i3.as_str()]);
        assert_eq!(invoices("?status=Open".into()).await, [i2.as_str()]);
        assert_eq!(
            invoices(format!("?membershipKey={m2}")).await,
            [i2.as_str()]
        );
        assert_eq!(
            invoices(format!("?customerKey={a}")).await,
            [i2.as_str(), i1.as_str()]
        );
        assert_eq!(
            invoices(format!("?customerKey={a}&status=Paid")).await,
            [i1.as_str()]
        );
        assert!(invoices(format!("?customerKey={b}&status=Paid"))
            .await
            .is_empty());
        assert!(invoices(format!("?membershipKey={m1}&customerKey={b}"))
            .await
            .is_empty());
        assert!(invoices("?membershipKey=mmbrshp_unknown".into())
            .await
            .is_empty());
        refused(&server, &token, "/invoices?status=paid", "status").await;

        // Events, newest first, each as GET /membership/{key}/events lists it.
        let events = |query: String| {
            let (server, token) = (&server, &token);
            async move { listed(server, token, &format!("/events{query}"), "actionId").await }
        };
        let all = page(&server, &token, "/events?limit=100").await;
        let ids = keys(&all, "actionId");
        assert!(ids.len() >= 4, "activation, two declines, cancel: {all}");
        let of_m1 = get(&server, &token, &format!("/membership/{m1}/events"))
            .await
            .body;
        let newest_of_m1 = &of_m1["events"][0];
        let listed_record = all["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["actionId"] == newest_of_m1["actionId"])
            .expect("m1's newest event is listed");
        assert_eq!(listed_record, newest_of_m1);
        let m3_events = events(format!("?membershipKey={m3}")).await;
        assert_eq!(
            m3_events,
            [ids[0].as_str(), ids[1].as_str()],
            "the cancel and, before it, the declined payment: the newest events"
        );
        let transactions = events("?type=TRANSACTION_DATA_UPDATE&limit=100".into()).await;
        assert!(!transactions.is_empty());
        for record in all["data"].as_array().unwrap() {
            let id = record["actionId"].as_str().unwrap().to_string();
            let is_transaction = record["action"] == "TRANSACTION_DATA_UPDATE";
            assert_eq!(transactions.contains(&id), is_transaction, "{record}");
        }
        let changes = events(format!(
            "?type=SUBSCRIPTION_STATUS_CHANGED&membershipKey={m3}"
        ))
        .await;
        assert_eq!(changes, [ids[0].as_str()]);
        assert!(
            events(format!("?type=SUBSCRIPTION_UPDATED&membershipKey={m3}"))
                .await
                .is_empty()
        );
        // Delivery status: one event delivered, one given up on, the rest pending.
        for (status, id) in [("Delivered", &ids[0]), ("Undeliverable", &ids[1])] {
            sqlx::query("UPDATE events SET status = $1 WHERE action_id = $2")
                .bind(status)
                .bind(id)
                .execute(server.server.state.store.pool())
                .await
                .unwrap();
        }
        assert_eq!(
            events("?deliveryStatus=Delivered".into()).await,
            [ids[0].as_str()]
        );
        assert_eq!(
            events("?deliveryStatus=Undeliverable".into()).await,
            [ids[1].as_str()]
        );
        assert_eq!(
            events("?deliveryStatus=Pending&limit=100".into()).await,
            ids[2..].to_vec()
        );
        assert_eq!(
            events(format!("?deliveryStatus=Delivered&membershipKey={m3}")).await,
            [ids[0].as_str()]
        );
        assert_eq!(
            events(format!("?deliveryStatus=Undeliverable&membershipKey={m3}")).await,
            [ids[1].as_str()]
        );
        assert!(
            events(format!("?deliveryStatus=Pending&membershipKey={m3}"))
                .await
                .is_empty()
        );
        assert!(events("?membershipKey=mmbrshp_unknown".into())
            .await
            .is_empty());
        refused(
            &server,
            &token,
            "/events?type=SUBSCRIPTION_CANCELED",
            "type",
        )
        .await;
        refused(
            &server,
            &token,
            "/events?deliveryStatus=Done",
            "deliveryStatus",
        )
        .await;
    }
);
