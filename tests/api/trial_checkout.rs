//! The hosted checkout of a membership with a free trial (DESIGN §15): the page says the trial
//! is free (nothing due today, the trial's end and the first charge after it), the button starts
//! the trial, the card (also through the identity check) is saved without a charge and the
//! membership is Trialing; the confirmation names the trial's end and the first charge. A
//! coupon's discount is a line of its own on every checkout. SQLite and PostgreSQL.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::backend_test;
use crate::fixtures::checkout::{checkout_of, give_discount, spring20, RETURN};
use crate::fixtures::memberships::charges;
use crate::fixtures::shown;
use crate::harness::TestServer;
use crate::visitor::Visitor;

async fn attached_cards(server: &TestServer, membership: &Value) -> i64 {
    server
        .count(
            "SELECT COUNT(*) FROM payment_methods p JOIN customers c ON c.id = p.customer_id \
             WHERE c.customer_key = $1 AND p.attached_at IS NOT NULL",
            membership["customerKey"].as_str().unwrap(),
        )
        .await
}

backend_test!(
    a_trial_checkout_saves_the_card_and_charges_nothing,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "trial-1@example.com", Some(14)).await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let text = &page.text;
        assert!(text.contains("Free trial of"), "{text}");
        assert_eq!(shown(text, "trial-days"), "14 days free");
        assert_eq!(shown(text, "due-today"), "€0.00");
        assert!(
            text.contains("data-testid=\"after-trial\"><dt>After the trial</dt><dd>€29.97</dd>")
        );
        assert_eq!(
            shown(text, "trial-terms"),
            "Free trial until 24 Jan 2027, then €29.97 per month."
        );
        assert_eq!(shown(text, "submit"), "Start free trial");
        assert!(!text.contains("Pay €"), "no payment is asked for: {text}");
        assert!(!text.contains("data-testid=\"discount\""), "no coupon");
        assert!(text.contains("You are not charged today."));
        assert!(text.contains("id=\"cardNumber\""), "the card is collected");

        let german = visitor
            .client
            .get(&url)
            .header("accept-language", "de")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(german.contains("Kostenlose Testphase starten"), "{german}");
        assert!(german.contains("Kostenlos bis 24.01.2027, danach 29,97 € pro Monat."));

        let started = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", started.text);
        assert_eq!(started.location.as_deref(), Some(RETURN));
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Trialing");
        assert_eq!(m["trialEnd"], "2027-01-24T09:00:00Z");
        assert_eq!(m["invoices"], json!([]), "nothing invoiced");
        assert_eq!(charges(&server, &key).await, 0, "nothing charged");
        assert_eq!(attached_cards(&server, &m).await, 1, "the card is saved");

        let done = visitor.get(&url).await;
        assert_eq!(done.status, StatusCode::OK);
        assert!(
            done.text.contains("Your free trial has started"),
            "{}",
            done.text
        );
        assert!(
            !done.text.contains("Payment received") && !done.text.contains("Payment successful")
        );
        assert_eq!(shown(&done.text, "trial-end"), "24 Jan 2027");
        assert_eq!(shown(&done.text, "first-charge"), "€29.97 · 24 Jan 2027");
        // A second post finds the trial started and charges nothing either.
        let again = visitor
            .post(
                &url,
                &[
                    ("csrfToken", page.csrf().as_str()),
                    ("cardNumber", "4242 4242 4242 4242"),
                    ("expiry", "12/34"),
                    ("cvc", "123"),
                    ("holder", "Ada Lovelace"),
                ],
            )
            .await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        let path = url.strip_prefix(&server.base_url).unwrap();
        assert_eq!(again.location.as_deref(), Some(path), "to the confirmation");
        assert_eq!(charges(&server, &key).await, 0);
    }
);

backend_test!(
    a_trial_checkout_confirms_the_card_and_shows_the_coupon,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "trial-2@example.com", Some(7)).await;
        give_discount(&server, &key, &spring20()).await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        // 20 % of 29.97 is 5.994: 5.99 off the first charge.
        assert!(
            page.text
                .contains("data-testid=\"discount\"><dt>Discount (SPRING20)</dt><dd>-€5.99</dd>"),
            "{}",
            page.text
        );
        assert!(page
            .text
            .contains("<dt>After the trial</dt><dd>€23.98</dd>"));
        assert_eq!(shown(&page.text, "due-today"), "€0.00");
        assert_eq!(
            shown(&page.text, "trial-terms"),
            "Free trial until 17 Jan 2027, then €23.98 per month."
        );

        // The identity check comes first; confirming it starts the trial.
        let step = visitor.pay(&url, "4000 0000 0000 3220").await;
        assert_eq!(step.status, StatusCode::SEE_OTHER);
        let challenge = visitor.get(&url).await;
        assert!(challenge.text.contains("•••• 3220"), "{}", challenge.text);
        assert_eq!(
            shown(&challenge.text, "challenge-text"),
            "Your bank asks you to confirm this card before it is saved for the payments after your free trial."
        );
        assert_eq!(
            server.membership(&token, &key).await["status"],
            "Incomplete"
        );
        let confirmed = visitor
            .post(
                &format!("{url}/confirm"),
                &[("csrfToken", &challenge.csrf()), ("action", "confirm")],
            )
            .await;
        assert_eq!(
            confirmed.location.as_deref(),
            Some(RETURN),
            "{}",
            confirmed.text
        );
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Trialing");
        assert_eq!(m["discount"]["code"], "SPRING20");
        assert_eq!(charges(&server, &key).await, 0);
        let done = visitor.get(&url).await;
        assert_eq!(shown(&done.text, "first-charge"), "€23.98 · 17 Jan 2027");
    }
);

backend_test!(
    a_first_payment_shows_its_discount_line,
    |server: TestServer| async move {
        let token = server.token().await;
        let (key, url) = checkout_of(&server, &token, "coupon-1@example.com", None).await;
        give_discount(&server, &key, &spring20()).await;
        let visitor = Visitor::new();
        let page = visitor.get(&url).await;
        assert!(page.text.contains("Discount (SPRING20)"), "{}", page.text);
        assert_eq!(shown(&page.text, "due-today"), "€23.98");
        assert!(!page.text.contains("data-testid=\"trial-terms\""));
        assert!(page.text.contains(">Pay €23.98<"), "{}", page.text);
        let paid = visitor.pay(&url, "4242 4242 4242 4242").await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        let m = server.membership(&token, &key).await;
        assert_eq!(m["status"], "Active");
        assert_eq!(m["invoices"][0]["amountPaid"], "23.98");
        let done = visitor.get(&url).await;
        assert!(done.text.contains("Payment successful"));
    }
);
