//! The promotion code on the hosted checkout (DESIGN §15): a first payment or a trial start
//! without a coupon takes a code in a form of its own; a valid one is redeemed once and the page
//! shows its discount and the new amount, which the charge (or the trial's first charge) uses;
//! refused and malformed codes are told under the field in English and German and count nothing;
//! a customer takes their own code back before paying (not one the merchant gave); the forms
//! need the page's token. SQLite and PostgreSQL.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::catalog::{coupon, redeemed, send};
use crate::fixtures::checkout::open;
use crate::fixtures::checkout::{checkout_of, RETURN};
use crate::fixtures::memberships::charges;
use crate::fixtures::shown;
use crate::fixtures::SESSIONS;
use crate::harness::TestServer;
use crate::visitor::{Page, Visitor};

/// What a code that is no code is told, in English and German.
const MALFORMED: &str =
    "Enter the code as given: letters, digits, hyphens or underscores, at most 40 characters.";
const MALFORMED_DE: &str =
    "Geben Sie den Code wie erhalten ein: Buchstaben, Ziffern, Binde- oder Unterstriche, höchstens 40 Zeichen.";

/// Posts `code` to the promotion code form of the checkout at `url`, with the page's token.
async fn apply(visitor: &Visitor, url: &str, code: &str) -> Page {
    let csrf = visitor.get(url).await.csrf();
    visitor
        .post(
            &format!("{url}/coupon"),
            &[("csrfToken", csrf.as_str()), ("code", code)],
        )
        .await
}

/// The checkout's path (where its posts lead back to).
fn path_of<'a>(server: &TestServer, url: &'a str) -> &'a str {
    url.strip_prefix(&server.base_url).unwrap()
}

backend_test!(
    a_promotion_code_discounts_the_first_payment_once,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "promo-1@example.com", None).await;
        coupon(
            &server,
            &token,
            json!({"code": "SPRING20", "percentOff": "20", "duration": "repeating", "durationInCycles": 3}),
        )
        .await;
        coupon(
            &server,
            &token,
            json!({"code": "OTHER", "percentOff": "50", "duration": "once"}),
        )
        .await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert!(
            page.text.contains("data-testid=\"promo-form\""),
            "{}",
            page.text
        );
        assert!(page
            .text
            .contains("<label for=\"promo-code\">Promotion code</label>"));
        assert!(!page.text.contains("data-testid=\"discount\""));
        assert_eq!(shown(&page.text, "due-today"), "€29.97");

        // Any letter case and surrounding blanks; post/redirect/get.
        let applied = apply(&visitor, &url, "  spring20 ").await;
        assert_eq!(applied.status, StatusCode::SEE_OTHER, "{}", applied.text);
        assert_eq!(applied.location.as_deref(), Some(path_of(&server, &url)));
        let page = visitor.get(&url).await;
        assert!(page
            .text
            .contains("data-testid=\"discount\"><dt>Discount (SPRING20)</dt><dd>-€5.99</dd>"));
        assert_eq!(shown(&page.text, "due-today"), "€23.98");
        assert!(page.text.contains(">Pay €23.98<"), "{}", page.text);
        assert_eq!(
            shown(&page.text, "promo-applied"),
            "Promotion code SPRING20 applied"
        );
        assert!(!page.text.contains("data-testid=\"promo-form\""));
        assert_eq!(redeemed(&server, "SPRING20").await, 1);

        // The form posted again (a second tab, a double click), or another code: the page as
        // it is, nothing counted, the first coupon kept.
        for code in ["SPRING20", "OTHER"] {
            let again = apply(&visitor, &url, code).await;
            assert_eq!(again.status, StatusCode::SEE_OTHER, "{code}");
        }
        assert_eq!(redeemed(&server, "SPRING20").await, 1);
        assert_eq!(redeemed(&server, "OTHER").await, 0);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["discount"]["code"], "SPRING20");
        assert_eq!(m["discount"]["cyclesLeft"], 3);

        let paid = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location.as_deref(), Some(RETURN));
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        let invoice = &m["invoices"][0];
        assert_eq!(invoice["subtotal"], "29.97");
        assert_eq!(invoice["discount"], "5.99");
        assert_eq!(invoice["coupon"]["code"], "SPRING20");
        assert_eq!(invoice["amountPaid"], "23.98");
        assert_eq!(m["discount"]["cyclesLeft"], 2);
        assert_eq!(charges(&server, &key).await, 1);

        // Paid: a code posted now changes nothing.
        let csrf = page.csrf();
        let late = visitor
            .post(
                &format!("{url}/coupon"),
                &[("csrfToken", csrf.as_str()), ("code", "OTHER")],
            )
            .await;
        assert_eq!(late.status, StatusCode::SEE_OTHER);
        assert_eq!(redeemed(&server, "OTHER").await, 0);
    }
);

backend_test!(
    refused_promotion_codes_say_why_in_both_languages,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "promo-2@example.com", None).await;
        // Clock: 2027-01-10 09:00.
        for body in [
            json!({"code": "OLD", "percentOff": "10", "duration": "once", "expiresAt": "2027-01-10T10:00:00"}),
            json!({"code": "GONE", "percentOff": "10", "duration": "once"}),
            json!({"code": "ONLYONE", "percentOff": "10", "duration": "once", "maxRedemptions": 1}),
            json!({"code": "DOLLARS", "amountOff": "5.00", "currency": "USD", "duration": "once"}),
        ] {
            coupon(&server, &token, body).await;
        }
        let archive = send(&server, Method::GET, "/coupons", &token, None).await;
        let gone = archive.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["code"] == "GONE")
            .unwrap()["couponId"]
            .as_str()
            .unwrap()
            .to_string();
        let archived = send(
            &server,
            Method::PATCH,
            &format!("/coupons/{gone}"),
            &token,
            Some(json!({"active": false})),
        )
        .await;
        assert_eq!(archived.status, 200, "{}", archived.body);
        // ONLYONE's one redemption goes to another customer's membership.
        let other = server.create_customer(&token, "first@example.com").await;
        let mut body = server.membership_body(&other, "order-first");
        body["couponCode"] = json!("onlyone");
        server.create_membership(&token, body).await;
        server.advance(&token, "2027-01-10T11:00:00Z").await;

        let visitor = Visitor::new();
        let cases = [
            (
                "NOPE",
                "This code is not valid.",
                "Dieser Code ist ungültig.",
            ),
            (
                "gone",
                "This code is no longer valid.",
                "Dieser Code ist nicht mehr gültig.",
            ),
            (
                "OLD",
                "This code has expired.",
                "Dieser Code ist abgelaufen.",
            ),
            (
                "OnlyOne",
                "This code has been used up.",
                "Dieser Code ist bereits aufgebraucht.",
            ),
            (
                "DOLLARS",
                "This code is for another currency.",
                "Dieser Code gilt für eine andere Währung.",
            ),
            ("", MALFORMED, MALFORMED_DE),
            ("two words", MALFORMED, MALFORMED_DE),
            (&"A".repeat(41), MALFORMED, MALFORMED_DE),
        ];
        let csrf = visitor.get(&url).await.csrf();
        for (code, english, german) in cases {
            let refused = apply(&visitor, &url, code).await;
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{code}: {}",
                refused.text
            );
            assert_eq!(shown(&refused.text, "promo-error"), english, "{code}");
            assert!(refused
                .text
                .contains("aria-invalid=\"true\" aria-describedby=\"promo-error\""));
            assert!(refused.text.contains("data-testid=\"promo-form\""));
            assert_eq!(shown(&refused.text, "due-today"), "€29.97");
            let in_german = visitor
                .client
                .post(format!("{url}/coupon"))
                .header("accept-language", "de")
                .form(&[("csrfToken", csrf.as_str()), ("code", code)])
                .send()
                .await
                .unwrap();
            assert_eq!(in_german.status(), StatusCode::BAD_REQUEST);
            let text = in_german.text().await.unwrap();
            assert_eq!(shown(&text, "promo-error"), german, "{code}");
            assert!(text.contains(">Aktionscode<"), "{text}");
        }
        // The code typed is shown again, escaped.
        let odd = apply(&visitor, &url, "<b>x</b>").await;
        assert_eq!(odd.status, StatusCode::BAD_REQUEST);
        assert!(odd.text.contains("value=\"&lt;b&gt;x&lt;"), "{}", odd.text);

        assert_eq!(
            server.membership(&token, &key).await["discount"],
            Value::Null
        );
        for code in ["OLD", "GONE", "DOLLARS"] {
            assert_eq!(redeemed(&server, code).await, 0, "{code}");
        }
        assert_eq!(redeemed(&server, "ONLYONE").await, 1);
        let paid = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "29.97");
    }
);

backend_test!(
    a_promotion_code_discounts_the_first_charge_after_a_trial,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "promo-3@example.com", Some(14)).await;
        coupon(
            &server,
            &token,
            json!({"code": "FIVE", "amountOff": "5.00", "currency": "EUR", "duration": "once"}),
        )
        .await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert!(page.text.contains("data-testid=\"promo-form\""));
        let applied = apply(&visitor, &url, "five").await;
        assert_eq!(applied.status, StatusCode::SEE_OTHER, "{}", applied.text);
        let page = visitor.get(&url).await;
        assert!(page
            .text
            .contains("data-testid=\"discount\"><dt>Discount (FIVE)</dt><dd>-€5.00</dd>"));
        assert!(page
            .text
            .contains("<dt>After the trial</dt><dd>€24.97</dd>"));
        assert_eq!(shown(&page.text, "due-today"), "€0.00");
        assert_eq!(
            shown(&page.text, "trial-terms"),
            "Free trial until 24 Jan 2027, then €24.97 per month."
        );
        assert_eq!(
            shown(&page.text, "promo-applied"),
            "Promotion code FIVE applied"
        );

        let started = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(started.status, StatusCode::SEE_OTHER);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Trialing");
        assert_eq!(m["discount"]["code"], "FIVE");
        assert_eq!(charges(&server, &key).await, 0);
        let done = visitor.get(&url).await;
        assert_eq!(shown(&done.text, "first-charge"), "€24.97 · 24 Jan 2027");

        server.advance(&token, "2027-01-24T09:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        let first = &m["invoices"][0];
        assert_eq!(first["subtotal"], "29.97");
        assert_eq!(first["discount"], "5.00");
        assert_eq!(first["amountPaid"], "24.97");
        assert_eq!(m["discount"], Value::Null, "used once");
        assert_eq!(redeemed(&server, "FIVE").await, 1);
    }
);

backend_test!(
    promotion_codes_need_the_pages_token_and_an_open_first_payment,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "promo-4@example.com", None).await;
        coupon(
            &server,
            &token,
            json!({"code": "SPRING20", "percentOff": "20", "duration": "forever"}),
        )
        .await;
        let visitor = Visitor::new();
        let coupon_url = format!("{url}/coupon");
        let missing = visitor.post(&coupon_url, &[("code", "SPRING20")]).await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN);
        let forged = visitor
            .post(
                &coupon_url,
                &[("csrfToken", "0".repeat(64).as_str()), ("code", "SPRING20")],
            )
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let csrf = visitor.get(&url).await.csrf();
        let cross_site = visitor
            .client
            .post(&coupon_url)
            .header("origin", "https://evil.example")
            .form(&[("csrfToken", csrf.as_str()), ("code", "SPRING20")])
            .send()
            .await
            .unwrap();
        assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
        let unknown = visitor
            .post(
                &format!("{}/checkout/{}/coupon", server.base_url, "x".repeat(40)),
                &[("csrfToken", csrf.as_str()), ("code", "SPRING20")],
            )
            .await;
        assert_eq!(unknown.status, StatusCode::GONE);
        // Another checkout's token does not do for this one.
        let (_, other_url) = checkout_of(&server, &token, "promo-5@example.com", None).await;
        let other_csrf = visitor.get(&other_url).await.csrf();
        let swapped = visitor
            .post(
                &coupon_url,
                &[("csrfToken", other_csrf.as_str()), ("code", "SPRING20")],
            )
            .await;
        assert_eq!(swapped.status, StatusCode::FORBIDDEN);
        assert_eq!(redeemed(&server, "SPRING20").await, 0);
        assert_eq!(
            server.membership(&token, &key).await["discount"],
            Value::Null
        );

        // A pay-now page collects a fixed invoice: no field, and a post counts nothing.
        let (customer, late) = server
            .past_due_membership(
                &token,
                "promo-6@example.com",
                "order-late",
                "2027-02-01T00:00:00Z",
                "2027-03-01T00:00:00Z",
            )
            .await;
        let session = open(
            &server,
            &token,
            SESSIONS,
            json!({"customerKey": customer, "membershipKey": late}),
        )
        .await;
        let pay_now = session["checkoutRedirectUrl"].as_str().unwrap().to_string();
        let page = visitor.get(&pay_now).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("Pay your overdue invoice"));
        assert!(!page.text.contains("data-testid=\"promo-form\""));
        let posted = apply(&visitor, &pay_now, "SPRING20").await;
        assert_eq!(posted.status, StatusCode::SEE_OTHER);
        assert_eq!(redeemed(&server, "SPRING20").await, 0);
        assert_eq!(
            server.membership(&token, &late).await["discount"],
            Value::Null
        );
    }
);

/// Posts the remove form of the checkout at `url`, with the page's token.
async fn remove(visitor: &Visitor, url: &str) -> Page {
    let csrf = visitor.get(url).await.csrf();
    visitor
        .post(
            &format!("{url}/coupon/remove"),
            &[("csrfToken", csrf.as_str())],
        )
        .await
}

backend_test!(
    a_customer_takes_a_promotion_code_back_before_paying,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "promo-7@example.com", None).await;
        coupon(
            &server,
            &token,
            json!({"code": "ONLYONE", "percentOff": "20", "duration": "once", "maxRedemptions": 1}),
        )
        .await;
        let visitor = Visitor::new();
        let applied = apply(&visitor, &url, "onlyone").await;
        assert_eq!(applied.status, StatusCode::SEE_OTHER, "{}", applied.text);
        let page = visitor.get(&url).await;
        assert_eq!(shown(&page.text, "due-today"), "€23.98");
        assert!(page.text.contains(">Remove</button>"), "{}", page.text);
        assert_eq!(redeemed(&server, "ONLYONE").await, 1);

        // Without the page's token nothing is taken back.
        let remove_url = format!("{url}/coupon/remove");
        let missing = visitor.post(&remove_url, &[]).await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN);
        let forged = visitor
            .post(&remove_url, &[("csrfToken", "0".repeat(64).as_str())])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(redeemed(&server, "ONLYONE").await, 1);

        // Removed: the field is back, the full price is due, the redemption is given back, so
        // the single-use code can be applied again (here or by anyone else).
        let removed = remove(&visitor, &url).await;
        assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.text);
        assert_eq!(removed.location.as_deref(), Some(path_of(&server, &url)));
        let page = visitor.get(&url).await;
        assert!(page.text.contains("data-testid=\"promo-form\""));
        assert!(!page.text.contains("data-testid=\"discount\""));
        assert_eq!(shown(&page.text, "due-today"), "€29.97");
        assert_eq!(redeemed(&server, "ONLYONE").await, 0);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["discount"], Value::Null);
        // Posted twice: the page as it is.
        let twice = remove(&visitor, &url).await;
        assert_eq!(twice.status, StatusCode::SEE_OTHER);
        assert_eq!(redeemed(&server, "ONLYONE").await, 0);

        let csrf = page.csrf();
        let again = apply(&visitor, &url, "ONLYONE").await;
        assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.text);
        assert_eq!(redeemed(&server, "ONLYONE").await, 1);
        let paid = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["invoices"][0]["amountPaid"], "23.98");

        // Paid (the page has no form now; the token of before): the code stays.
        let late = visitor
            .post(&remove_url, &[("csrfToken", csrf.as_str())])
            .await;
        assert_eq!(late.status, StatusCode::SEE_OTHER);
        assert_eq!(redeemed(&server, "ONLYONE").await, 1);
        assert_eq!(
            server.membership(&token, &key).await["invoices"][0]["coupon"]["code"],
            "ONLYONE"
        );
    }
);

backend_test!(
    a_coupon_the_merchant_gave_is_not_the_customers_to_remove,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-01-10T09:00:00Z").await;
        coupon(
            &server,
            &token,
            json!({"code": "GIFT", "percentOff": "50", "duration": "forever"}),
        )
        .await;
        let customer = server.create_customer(&token, "promo-8@example.com").await;
        let mut body = server.membership_body(&customer, "order-gift");
        body["couponCode"] = json!("GIFT");
        let created = server.create_membership(&token, body).await;
        let key = created["membershipKey"].as_str().unwrap().to_string();
        let session = open(
            &server,
            &token,
            SESSIONS,
            json!({"customerKey": customer, "membershipKey": key, "returnToWebsiteLink": RETURN}),
        )
        .await;
        let url = session["checkoutRedirectUrl"].as_str().unwrap().to_string();
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert_eq!(
            shown(&page.text, "promo-applied"),
            "Promotion code GIFT applied"
        );
        assert!(
            !page.text.contains("data-testid=\"promo-remove\""),
            "{}",
            page.text
        );
        let posted = remove(&visitor, &url).await;
        assert_eq!(posted.status, StatusCode::SEE_OTHER);
        assert_eq!(redeemed(&server, "GIFT").await, 1);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["discount"]["code"], "GIFT");
    }
);
