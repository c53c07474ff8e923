//! The portal's price switch (DESIGN §15): a membership made from a catalog price lists the
//! other active prices of its product in its currency; the confirmation page shows what the
//! switch does (the prorated amount now, or the renewal it waits for, per the merchant's
//! `portalPlanChange`), and confirming does exactly that; a decline changes nothing; a pending
//! change shows and can be dropped; prices that are not the membership's to choose, forged posts
//! and figures that moved are refused.

use recur::store::merchants::Mode;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::cashier::hidden;
use crate::fixtures::catalog::{price_with, product, send};
use crate::fixtures::checkout::open;
use crate::fixtures::memberships::key;
use crate::harness::TestServer;
use crate::visitor::{Page, Visitor};

/// The product Team's prices and a customer whose membership of 3 × `basic` went Active on
/// 1 April 2027, seen on 16 April (half of its period left) through a portal link.
struct Team {
    token: String,
    customer: String,
    key: String,
    portal: String,
    /// EUR 10.00 a month: the membership's.
    basic: String,
    /// EUR 20.00 a month.
    pro: String,
    /// EUR 100.00 a year.
    yearly: String,
    /// USD 10.00 a month.
    usd: String,
    /// EUR 15.00 a month, archived.
    archived: String,
    /// EUR 12.00 a month of another product.
    other_product: String,
}

async fn team(server: &TestServer, email: &str) -> Team {
    let token = server.token().await;
    let team = product(server, &token, "Team").await;
    let basic = price_with(server, &token, &team, json!({})).await;
    let pro = price_with(server, &token, &team, json!({"unitAmount": "20.00"})).await;
    let yearly = price_with(
        server,
        &token,
        &team,
        json!({"unitAmount": "100.00", "intervalType": "Annually"}),
    )
    .await;
    let usd = price_with(server, &token, &team, json!({"currency": "USD"})).await;
    let archived = price_with(server, &token, &team, json!({"unitAmount": "15.00"})).await;
    let patched = send(
        server,
        Method::PATCH,
        &format!("/prices/{archived}"),
        &token,
        Some(json!({"active": false})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let solo = product(server, &token, "Solo").await;
    let other_product = price_with(server, &token, &solo, json!({"unitAmount": "12.00"})).await;
    let customer = server.create_customer(&token, email).await;
    let body = json!({
        "customerKey": customer,
        "subscriptionName": "Team plan",
        "webhookUrl": "https://merchant.example/hooks",
        "productInfo": {"orderId": format!("order-{email}")},
        "priceId": basic,
        "quantity": 3
    });
    let record = server
        .active_membership(&token, "2027-04-01T00:00:00Z", body)
        .await;
    server.advance(&token, "2027-04-16T00:00:00Z").await;
    let portal = portal_link(server, &token, &customer).await;
    Team {
        key: key(&record),
        token,
        customer,
        portal,
        basic,
        pro,
        yearly,
        usd,
        archived,
        other_product,
    }
}

async fn portal_link(server: &TestServer, token: &str, customer: &str) -> String {
    let session = open(
        server,
        token,
        "/api/subscriptions/v1/portal/session",
        json!({"customerKey": customer}),
    )
    .await;
    session["portalRedirectUrl"].as_str().unwrap().to_string()
}

impl Team {
    fn switch_url(&self, price: &str) -> String {
        format!("{}/memberships/{}/switch/{price}", self.portal, self.key)
    }

    /// Where the portal sends the customer back to, with `done`'s banner.
    fn back(&self, server: &TestServer, done: &str) -> Option<String> {
        let path = self.portal.trim_start_matches(&server.base_url);
        Some(format!("{path}?done={done}"))
    }

    /// The portal with `done`'s banner, as the browser lands on it.
    async fn landed(&self, visitor: &Visitor, done: &str) -> Page {
        visitor.get(&format!("{}?done={done}", self.portal)).await
    }
}

/// The text of the element with `data-testid` `id` on `page` (no nested markup).
fn testid(page: &Page, id: &str) -> String {
    let marker = format!("data-testid=\"{id}\"");
    let start = page.text.find(&marker).unwrap_or_else(|| panic!("{id}"));
    let start = start + page.text[start..].find('>').unwrap() + 1;
    let end = start + page.text[start..].find('<').unwrap();
    page.text[start..end].to_string()
}

/// Opens the confirmation of `price` (expects 200) and posts it with its own token and quote.
async fn switch(visitor: &Visitor, url: &str) -> (Page, Page) {
    let confirm = visitor.get(url).await;
    assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
    let csrf = confirm.csrf();
    let quote = hidden(&confirm.text, "quote");
    let done = visitor
        .post(url, &[("csrfToken", &csrf), ("quote", &quote)])
        .await;
    (confirm, done)
}

async fn set_plan_change(server: &TestServer, token: &str, value: &str) {
    let reply = server
        .call(
            Method::PUT,
            "/api/subscriptions/v1/merchant/settings",
            Some(token),
            Some(json!({"portalPlanChange": value})),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

backend_test!(
    the_portal_offers_the_other_active_prices_of_the_product_in_its_currency,
    |server: TestServer| async move {
        let team = team(&server, "list@example.com").await;
        // An inline membership of the same customer offers nothing.
        let inline = server.membership_body(&team.customer, "order-inline");
        server
            .active_membership(&team.token, "2027-04-16T00:00:00Z", inline)
            .await;
        let page = Visitor::new().get(&team.portal).await;
        assert_eq!(page.status, StatusCode::OK);
        let offered: Vec<&str> = page
            .text
            .match_indices("data-testid=\"offer\" data-price=\"")
            .map(|(at, m)| &page.text[at + m.len()..at + m.len() + 30])
            .collect();
        assert_eq!(offered, [team.pro.as_str(), team.yearly.as_str()]);
        for absent in [&team.basic, &team.usd, &team.archived, &team.other_product] {
            assert!(!page.text.contains(absent.as_str()), "{absent}");
        }
        // Each with its amount and interval, and its total for the membership's 3 units.
        assert!(page
            .text
            .contains("<strong>€20.00</strong> <span class=\"muted\">per month</span>"));
        assert!(page.text.contains("× 3 = €60.00"));
        assert!(page
            .text
            .contains("<strong>€100.00</strong> <span class=\"muted\">per year</span>"));
        assert!(page.text.contains("× 3 = €300.00"));
        // In German, too.
        let german = Visitor::new()
            .client
            .get(&team.portal)
            .header("accept-language", "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("Zu einem anderen Preis wechseln"));
        assert!(german.contains("× 3 = 60,00 €"));
        // A canceled membership offers nothing.
        let canceled = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{}", team.key),
                Some(&team.token),
                None,
            )
            .await;
        assert_eq!(canceled.status, 200, "{}", canceled.body);
        let page = Visitor::new().get(&team.portal).await;
        assert!(!page.text.contains("data-testid=\"offer\""));
    }
);

backend_test!(
    switching_now_charges_exactly_the_amount_the_page_showed,
    |server: TestServer| async move {
        let team = team(&server, "now@example.com").await;
        let visitor = Visitor::new();
        // Up: half of (60.00 − 30.00) is charged now.
        let (confirm, done) = switch(&visitor, &team.switch_url(&team.pro)).await;
        assert_eq!(testid(&confirm, "current-price"), "€30.00 per month");
        assert_eq!(testid(&confirm, "new-price"), "€60.00 per month");
        assert_eq!(testid(&confirm, "switch-starts"), "Now");
        assert_eq!(testid(&confirm, "due-now"), "€15.00");
        assert_eq!(testid(&confirm, "next-billing"), "1 May 2027");
        assert!(confirm.text.contains("•••• 4242"), "the card charged");
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
        assert_eq!(done.location, team.back(&server, "switched"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.pro.as_str());
        assert_eq!(m["pricingInfo"]["totalAmount"], "60.00");
        let invoice = &m["invoices"][0];
        assert_eq!(invoice["kind"], "proration");
        assert_eq!(invoice["total"], "15.00");
        assert_eq!(invoice["amountPaid"], "15.00");
        let portal = team.landed(&visitor, "switched").await;
        assert_eq!(
            testid(&portal, "banner"),
            "Your subscription is switched to its new price."
        );
        assert!(portal
            .text
            .contains(&format!("data-price=\"{}\"", team.basic)));
        // Down: half of 30.00 becomes credit.
        let (confirm, done) = switch(&visitor, &team.switch_url(&team.basic)).await;
        assert_eq!(testid(&confirm, "due-now"), "€15.00");
        assert!(confirm.text.contains("Added to your credit now"));
        assert!(!confirm.text.contains("•••• 4242"), "no card is charged");
        assert_eq!(done.location, team.back(&server, "switched"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.basic.as_str());
        assert_eq!(m["creditBalance"], "15.00");
        // To a yearly price: a new period starts now, the unused half month (15.00) and the
        // credit (15.00) count against it.
        let (confirm, done) = switch(&visitor, &team.switch_url(&team.yearly)).await;
        assert_eq!(testid(&confirm, "due-now"), "€285.00");
        assert_eq!(testid(&confirm, "from-credit"), "€15.00");
        assert_eq!(testid(&confirm, "to-card"), "€270.00");
        assert_eq!(testid(&confirm, "next-billing"), "16 Apr 2028");
        assert_eq!(done.location, team.back(&server, "switched"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.yearly.as_str());
        assert_eq!(m["currentPeriodEnd"], "2028-04-16T00:00:00Z");
        assert_eq!(m["creditBalance"], "0.00");
        // The new year is invoiced in full, 300.00, paid by the credit note of the unused half
        // month (15.00), the credit (15.00) and the card (270.00).
        assert_eq!(m["invoices"][0]["total"], "300.00");
        assert_eq!(m["invoices"][0]["creditApplied"], "30.00");
        assert_eq!(m["invoices"][0]["amountPaid"], "270.00");
        // Both credits are credit notes on the first invoice, which billed the period.
        let notes: Vec<(&Value, &Value)> = m["invoices"][2]["creditNotes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|note| (&note["number"], &note["amount"]))
            .collect();
        assert_eq!(
            notes,
            [
                (&json!("CN-2027-000001"), &json!("15.00")),
                (&json!("CN-2027-000002"), &json!("15.00"))
            ]
        );
        // Posting the same switch again changes nothing more.
        let again = visitor
            .post(
                &team.switch_url(&team.yearly),
                &[
                    ("csrfToken", &confirm.csrf()),
                    ("quote", &hidden(&confirm.text, "quote")),
                ],
            )
            .await;
        assert_eq!(again.location, team.back(&server, "switched"));
        let charges = crate::fixtures::memberships::charges(&server, &team.key).await;
        assert_eq!(charges, 3, "the first payment and two proration charges");
    }
);

backend_test!(
    switching_at_the_next_period_schedules_it_for_the_renewal,
    |server: TestServer| async move {
        let team = team(&server, "later@example.com").await;
        set_plan_change(&server, &team.token, "nextPeriod").await;
        let visitor = Visitor::new();
        let (confirm, done) = switch(&visitor, &team.switch_url(&team.pro)).await;
        assert_eq!(testid(&confirm, "switch-starts"), "1 May 2027");
        assert_eq!(testid(&confirm, "due-now"), "Nothing");
        assert!(!confirm.text.contains("data-testid=\"next-billing\""));
        assert_eq!(done.location, team.back(&server, "scheduled"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.basic.as_str());
        assert_eq!(m["pricingInfo"]["totalAmount"], "30.00");
        assert_eq!(m["pendingUpdate"]["priceId"], team.pro.as_str());
        assert_eq!(m["pendingUpdate"]["pricingInfo"]["totalAmount"], "60.00");
        assert_eq!(m["pendingUpdate"]["effectiveAt"], "2027-05-01T00:00:00Z");
        assert_eq!(m["invoices"].as_array().unwrap().len(), 1, "nothing billed");
        let portal = team.landed(&visitor, "scheduled").await;
        assert_eq!(
            testid(&portal, "banner"),
            "The new price is scheduled: it applies from the next renewal."
        );
        assert!(portal
            .text
            .contains("<p>Changes to €60.00 per month on 1 May 2027.</p>"));
        let offered = |price: &str| portal.text.contains(&format!("data-price=\"{price}\""));
        assert!(
            !offered(&team.pro),
            "the scheduled price is not offered again"
        );
        assert!(offered(&team.yearly));
        // The same confirmation posted again schedules nothing more.
        let again = visitor
            .post(
                &team.switch_url(&team.pro),
                &[
                    ("csrfToken", &confirm.csrf()),
                    ("quote", &hidden(&confirm.text, "quote")),
                ],
            )
            .await;
        assert_eq!(again.location, team.back(&server, "scheduled"));
        server.advance(&team.token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.pro.as_str());
        assert_eq!(m["pendingUpdate"], Value::Null);
        assert_eq!(m["invoices"][0]["amountPaid"], "60.00");
    }
);

backend_test!(
    a_pending_change_is_shown_and_dropped,
    |server: TestServer| async move {
        let team = team(&server, "drop@example.com").await;
        // Scheduled by the merchant through the API: the portal shows it too.
        let reply = crate::fixtures::memberships::update(
            &server,
            &team.token,
            json!({"membershipKey": team.key, "priceId": team.yearly, "effective": "nextPeriod"}),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let visitor = Visitor::new();
        let page = visitor.get(&team.portal).await;
        assert!(page
            .text
            .contains("<p>Changes to €300.00 per year on 1 May 2027.</p>"));
        // Switches apply now here: the scheduled price may still be chosen, to apply now.
        assert!(page
            .text
            .contains(&format!("data-price=\"{}\"", team.yearly)));
        let url = format!(
            "{}/memberships/{}/pending-change/drop",
            team.portal, team.key
        );
        let forged = visitor.post(&url, &[("csrfToken", "nope")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["pendingUpdate"]["priceId"], team.yearly.as_str());
        let csrf = page.csrf();
        let dropped = visitor.post(&url, &[("csrfToken", &csrf)]).await;
        assert_eq!(dropped.status, StatusCode::SEE_OTHER);
        assert_eq!(dropped.location, team.back(&server, "dropped"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["pendingUpdate"], Value::Null);
        assert_eq!(m["priceId"], team.basic.as_str());
        let page = team.landed(&visitor, "dropped").await;
        assert_eq!(
            testid(&page, "banner"),
            "The scheduled change is dropped; your current price stays."
        );
        assert!(!page.text.contains("data-testid=\"pending-change\""));
        // Nothing left to drop: back to the portal, no banner.
        let again = visitor.post(&url, &[("csrfToken", &csrf)]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert!(!again.location.unwrap().contains("done="));
        server.advance(&team.token, "2027-05-01T00:00:00Z").await;
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(
            m["invoices"][0]["amountPaid"], "30.00",
            "the current price renews"
        );
    }
);

backend_test!(
    a_declined_proration_charge_shows_the_page_again_and_changes_nothing,
    |server: TestServer| async move {
        let team = team(&server, "declined@example.com").await;
        server
            .attach_card(&team.token, &team.customer, "4000000000000002")
            .await;
        let (confirm, done) = switch(&Visitor::new(), &team.switch_url(&team.pro)).await;
        assert_eq!(testid(&confirm, "due-now"), "€15.00");
        assert_eq!(done.status, StatusCode::PAYMENT_REQUIRED);
        assert_eq!(
            testid(&done, "form-message"),
            "Your card was declined. Try another card or contact your bank."
        );
        assert_eq!(
            testid(&done, "due-now"),
            "€15.00",
            "the same switch, to try again"
        );
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.basic.as_str());
        assert_eq!(m["pricingInfo"]["totalAmount"], "30.00");
        assert_eq!(m["creditBalance"], "0.00");
        assert_eq!(m["invoices"][0]["status"], "Void", "the proration invoice");
    }
);

backend_test!(
    prices_the_membership_may_not_choose_and_forged_posts_are_refused,
    |server: TestServer| async move {
        let team = team(&server, "forged@example.com").await;
        let visitor = Visitor::new();
        let confirm = visitor.get(&team.switch_url(&team.pro)).await;
        let csrf = confirm.csrf();
        let quote = hidden(&confirm.text, "quote");
        let other = server.another_merchant(Mode::Sandbox).await;
        let other_token = server.token_for(&other).await;
        let theirs = product(&server, &other_token, "Theirs").await;
        let theirs = price_with(
            &server,
            &other_token,
            &theirs,
            json!({"unitAmount": "20.00"}),
        )
        .await;
        for refused in [
            team.other_product.as_str(),
            team.usd.as_str(),
            team.archived.as_str(),
            theirs.as_str(),
            "price_unknown",
        ] {
            let url = team.switch_url(refused);
            assert_eq!(
                visitor.get(&url).await.status,
                StatusCode::NOT_FOUND,
                "{refused}"
            );
            let posted = visitor
                .post(&url, &[("csrfToken", &csrf), ("quote", &quote)])
                .await;
            assert_eq!(posted.status, StatusCode::NOT_FOUND, "{refused}");
        }
        // Another customer's membership is not switched through this portal.
        let stranger = server
            .create_customer(&team.token, "stranger@example.com")
            .await;
        let body = json!({"customerKey": stranger, "subscriptionName": "Team plan",
            "webhookUrl": "https://merchant.example/hooks", "productInfo": {"orderId": "s-1"},
            "priceId": team.basic, "quantity": 1});
        let theirs = server
            .active_membership(&team.token, "2027-04-16T00:00:00Z", body)
            .await;
        let url = format!(
            "{}/memberships/{}/switch/{}",
            team.portal,
            key(&theirs),
            team.pro
        );
        let posted = visitor
            .post(&url, &[("csrfToken", &csrf), ("quote", &quote)])
            .await;
        assert_eq!(posted.status, StatusCode::NOT_FOUND);
        // Without the form token, or with another: 403.
        let url = team.switch_url(&team.pro);
        let missing = visitor.post(&url, &[("quote", quote.as_str())]).await;
        assert_eq!(missing.status, StatusCode::FORBIDDEN);
        let wrong = visitor
            .post(&url, &[("csrfToken", &"0".repeat(64)), ("quote", &quote)])
            .await;
        assert_eq!(wrong.status, StatusCode::FORBIDDEN);
        // Figures other than the page's: the page again, with the figures of now.
        let moved = visitor
            .post(&url, &[("csrfToken", &csrf), ("quote", "now:0:0")])
            .await;
        assert_eq!(moved.status, StatusCode::CONFLICT);
        assert!(testid(&moved, "form-message").starts_with("The amount changed"));
        assert_eq!(hidden(&moved.text, "quote"), quote);
        for m in [team.key.as_str(), key(&theirs).as_str()] {
            let m = server.membership(&team.token, m).await;
            assert_eq!(m["priceId"], team.basic.as_str());
            assert_eq!(m["pendingUpdate"], Value::Null);
        }
        // Canceled since the page was read: nothing is switched, and the portal says why.
        let canceled = server
            .call(
                Method::POST,
                &format!("/api/subscriptions/v1/membership/cancel/{}", team.key),
                Some(&team.token),
                None,
            )
            .await;
        assert_eq!(canceled.status, 200);
        let late = visitor
            .post(&url, &[("csrfToken", &csrf), ("quote", &quote)])
            .await;
        assert_eq!(late.location, team.back(&server, "changed"));
        let m = server.membership(&team.token, &team.key).await;
        assert_eq!(m["priceId"], team.basic.as_str());
    }
);

backend_test!(
    a_trialing_membership_switches_without_a_charge,
    |server: TestServer| async move {
        let token = server.token().await;
        server.advance(&token, "2027-02-01T10:00:00Z").await;
        let team = product(&server, &token, "Team").await;
        let basic = price_with(&server, &token, &team, json!({"trialDays": 14})).await;
        let pro = price_with(&server, &token, &team, json!({"unitAmount": "20.00"})).await;
        let customer = server.create_customer(&token, "trial@example.com").await;
        server
            .attach_card(&token, &customer, "4242424242424242")
            .await;
        let created = server
            .create_membership(
                &token,
                json!({"customerKey": customer, "subscriptionName": "Team plan",
                    "webhookUrl": "https://merchant.example/hooks",
                    "productInfo": {"orderId": "trial-1"}, "priceId": basic}),
            )
            .await;
        let key = key(&created);
        assert_eq!(server.pay(&token, &key).await.body["status"], "Trialing");
        let portal = portal_link(&server, &token, &customer).await;
        let page = Visitor::new().get(&portal).await;
        assert_eq!(testid(&page, "status"), "Free trial");
        let charged_before = crate::fixtures::memberships::charges(&server, &key).await;
        let url = format!("{portal}/memberships/{key}/switch/{pro}");
        let (confirm, done) = switch(&Visitor::new(), &url).await;
        assert_eq!(testid(&confirm, "due-now"), "Nothing");
        assert_eq!(testid(&confirm, "next-billing"), "15 Feb 2027");
        assert_eq!(
            done.location
                .as_deref()
                .map(|l| l.ends_with("done=switched")),
            Some(true)
        );
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Trialing");
        assert_eq!(m["priceId"], pro.as_str());
        assert_eq!(
            crate::fixtures::memberships::charges(&server, &key).await,
            charged_before
        );
        server.advance(&token, "2027-02-15T10:00:00Z").await;
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["invoices"][0]["amountPaid"], "20.00");
    }
);
