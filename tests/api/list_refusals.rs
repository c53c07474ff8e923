//! What lists refuse and never show (DESIGN §10): 400 problems naming each bad parameter, cursors
//! refused when forged, altered, or of another merchant, list or filters; nothing of another
//! merchant's; 401 without a valid token.

use recur::store::merchants::Mode;
use reqwest::Method;
use serde_json::json;

use crate::backend_test;
use crate::fixtures::lists::{
    cancel, declined_first_payment, get, listed, page, refused, their_customer,
};
use crate::fixtures::API;
use crate::harness::TestServer;

backend_test!(
    bad_parameters_are_400_problems_that_name_them,
    |server: TestServer| async move {
        let token = server.token().await;
        for n in 0..3 {
            server
                .create_customer(&token, &format!("bad-{n}@example.com"))
                .await;
        }
        for path in ["/customers", "/memberships", "/invoices", "/events"] {
            for limit in ["0", "101", "x", "", "-1", "1.5"] {
                refused(&server, &token, &format!("{path}?limit={limit}"), "limit").await;
            }
            refused(&server, &token, &format!("{path}?limit=1&limit=2"), "limit").await;
            refused(&server, &token, &format!("{path}?cursor=abc"), "cursor").await;
            refused(&server, &token, &format!("{path}?cursor="), "cursor").await;
            // Unknown parameters are ignored.
            page(&server, &token, &format!("{path}?colour=blue&colour=red")).await;
        }
        let first = page(&server, &token, "/customers?limit=1").await;
        let cursor = first["nextCursor"].as_str().unwrap().to_string();
        page(
            &server,
            &token,
            &format!("/customers?limit=1&cursor={cursor}"),
        )
        .await;
        // Altered in one character, or taken to another list: refused.
        let mut altered: Vec<char> = cursor.chars().collect();
        altered[3] = if altered[3] == 'A' { 'B' } else { 'A' };
        let altered: String = altered.into_iter().collect();
        refused(
            &server,
            &token,
            &format!("/customers?cursor={altered}"),
            "cursor",
        )
        .await;
        for other_list in ["/memberships", "/invoices", "/events"] {
            refused(
                &server,
                &token,
                &format!("{other_list}?cursor={cursor}"),
                "cursor",
            )
            .await;
        }
        // Another merchant's cursor, for the same list: refused.
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        for n in 0..2 {
            let email = format!("theirs-{n}@example.com");
            their_customer(&server, &other_token, &other, &email).await;
        }
        let theirs = page(&server, &other_token, "/customers?limit=1").await;
        let their_cursor = theirs["nextCursor"].as_str().unwrap();
        page(
            &server,
            &other_token,
            &format!("/customers?limit=1&cursor={their_cursor}"),
        )
        .await;
        refused(
            &server,
            &token,
            &format!("/customers?limit=1&cursor={their_cursor}"),
            "cursor",
        )
        .await;
        // Every bad parameter is listed at once.
        let reply = get(
            &server,
            &token,
            "/memberships?limit=0&status=Frozen&customerKey=",
        )
        .await;
        let errors = reply.problem(400);
        for param in ["limit", "status", "customerKey"] {
            assert!(errors.contains_key(param), "{}", reply.body);
        }
    }
);

backend_test!(
    lists_never_show_another_merchants_records,
    |server: TestServer| async move {
        let token = server.token().await;
        let mine = server.create_customer(&token, "mine@example.com").await;
        let my_membership = server
            .create_membership(&token, server.membership_body(&mine, "mine-1"))
            .await;
        let my_key = my_membership["membershipKey"].as_str().unwrap();
        declined_first_payment(&server, &token, &mine, my_key).await;
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let theirs = their_customer(&server, &other_token, &other, "theirs@example.com").await;
        let their_membership = server
            .create_membership(&other_token, server.membership_body(&theirs, "theirs-1"))
            .await;
        let their_key = their_membership["membershipKey"]
            .as_str()
            .unwrap()
            .to_string();
        declined_first_payment(&server, &other_token, &theirs, &their_key).await;
        cancel(&server, &other_token, &their_key).await;
        let their_invoices = listed(&server, &other_token, "/invoices", "invoiceKey").await;
        assert_eq!(their_invoices.len(), 1);

        assert_eq!(
            listed(&server, &token, "/customers", "customerKey").await,
            [mine.as_str()]
        );
        assert_eq!(
            listed(&server, &token, "/memberships", "membershipKey").await,
            [my_key]
        );
        let invoices = listed(&server, &token, "/invoices", "invoiceKey").await;
        assert_eq!(invoices.len(), 1);
        assert!(!invoices.contains(&their_invoices[0]));
        let their_events = listed(&server, &other_token, "/events", "actionId").await;
        assert!(!their_events.is_empty(), "their decline and cancel");
        let my_events = listed(&server, &token, "/events", "actionId").await;
        assert!(my_events.iter().all(|id| !their_events.contains(id)));
        // Their keys, e-mail and name filter everything out, as unknown ones do.
        for path in [
            format!("/memberships?customerKey={theirs}"),
            format!("/invoices?customerKey={theirs}"),
            format!("/invoices?membershipKey={their_key}"),
            format!("/events?membershipKey={their_key}"),
            "/customers?email=theirs@example.com".to_string(),
            "/customers?q=theirs".to_string(),
        ] {
            let page = page(&server, &token, &path).await;
            assert_eq!(page["data"], json!([]), "{path}");
            assert_eq!(page["hasMore"], false);
        }
    }
);

backend_test!(lists_need_a_valid_token, |server: TestServer| async move {
    for path in ["/customers", "/memberships", "/invoices", "/events"] {
        for token in [None, Some("not-a-token")] {
            let reply = server
                .call(Method::GET, &format!("{API}{path}?limit=0"), token, None)
                .await;
            reply.problem(401);
            assert_eq!(
                reply.header("www-authenticate"),
                Some("Bearer error=\"invalid_token\"")
            );
        }
    }
});
