//! Off-session charges through the Stripe connector against localstripe: a good card is
//! approved under its PaymentIntent, a card Stripe declines is a decline with Stripe's code,
//! and a card that needs 3-D Secure asks for the customer's authentication.

use recur::config::StripeConfig;
use recur::processor::stripe::charges::{self, AUTHENTICATION_REQUIRED};
use recur::processor::stripe::{ChargeIntent, Connection, StripeApi};
use recur::processor::ChargeOutcome;
use serde_json::Value;

use crate::harness::stripe_url;

const SECRET_KEY: &str = "sk_test_51ConnectorCharges";

async fn stripe_post(path: &str, form: &[(&str, &str)]) -> Value {
    reqwest::Client::new()
        .post(format!("{}{path}", stripe_url()))
        .basic_auth(SECRET_KEY, Some(""))
        .form(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A Customer with the card `number` attached, as checkout or the merchant's Stripe.js leaves
/// them: `(cus_…, pm_…)`.
async fn customer_with_card(number: &str) -> (String, String) {
    let customer = stripe_post("/v1/customers", &[("email", "charges@example.com")]).await;
    let customer = customer["id"].as_str().unwrap().to_owned();
    let card = stripe_post(
        "/v1/payment_methods",
        &[
            ("type", "card"),
            ("card[number]", number),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2030"),
            ("card[cvc]", "123"),
        ],
    )
    .await;
    let card = card["id"].as_str().unwrap().to_owned();
    stripe_post(
        &format!("/v1/payment_methods/{card}/attach"),
        &[("customer", customer.as_str())],
    )
    .await;
    (customer, card)
}

async fn charge(number: &str, key: &str) -> Option<ChargeOutcome> {
    let api = StripeApi::new(&StripeConfig {
        api_base: stripe_url(),
        js_url: format!("{}/js.stripe.com/v3/", stripe_url()),
        timeout_seconds: 10,
    })
    .unwrap();
    let connection = Connection::new(&api, SECRET_KEY.into());
    let (customer, card) = customer_with_card(number).await;
    let answer = connection
        .confirm_charge(&ChargeIntent {
            idempotency_key: key,
            amount: 1999,
            currency: "EUR",
            customer: &customer,
            payment_method: &card,
            invoice_key: "inv_connector",
            membership_key: "mbr_connector",
            customer_present: false,
        })
        .await;
    match answer {
        Ok(intent) => charges::outcome(&intent),
        Err(recur::processor::stripe::StripeError::Refused(refusal)) => {
            charges::refusal_outcome(&refusal)
        }
        Err(error) => panic!("localstripe answers: {error}"),
    }
}

#[tokio::test]
async fn off_session_charges_read_stripes_answer() {
    let Some(ChargeOutcome::Approved { reference }) = charge("4242424242424242", "att-ok").await
    else {
        panic!("a good card is approved");
    };
    assert!(reference.starts_with("pi_"), "{reference}");

    let Some(ChargeOutcome::Declined { code, reason, .. }) =
        charge("4000000000000341", "att-declined").await
    else {
        panic!("a card Stripe declines is a decline");
    };
    assert_eq!(code, "card_declined");
    assert!(!reason.is_empty());

    let Some(ChargeOutcome::Declined { code, .. }) = charge("4000000000003220", "att-3ds").await
    else {
        panic!("a card that needs 3-D Secure off-session is a decline asking for it");
    };
    assert_eq!(code, AUTHENTICATION_REQUIRED);
}
