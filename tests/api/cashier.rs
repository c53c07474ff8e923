//! The cashier behind a hosted-page session: payments through the card cascade, alternative
//! methods, payouts, the identity step, and the notification payload against the spec's field
//! table. The merchant's operations on orders afterwards are in `cashier_orders.rs`; the helpers
//! that open sessions and pay them as a browser would are in [`crate::fixtures::cashier`].

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::backend_matrix;
use crate::fixtures::cashier::{
    card, form_of, hidden, notices, open_order, page, pay, post_form, secret_post, session_body,
    submit, visitor,
};
use crate::fixtures::sha256_hex;
use crate::fixtures::spec::keys;
use crate::fixtures::webhooks::server_with;
use crate::receivers::{eventually, WebhookReceiver};

backend_matrix!(
    a_card_payment_notifies_every_spec_field,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let url = open_order(&server, "hp-order-1", &receiver.url, json!({})).await;
        let answer = pay(&visitor(), &url, card("4242 4242 4242 4242", "101")).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER);
        assert_eq!(
            answer.location.as_deref(),
            Some("https://shop.example.com/ok")
        );

        eventually(|| !receiver.received().is_empty()).await;
        let request = &receiver.received()[0];
        let body = request.json();
        let secret = &server.merchant.merchant_secret;
        assert_eq!(
            body["Signature"],
            sha256_hex(&format!("{secret}:hp-order-1")).as_str()
        );

        // One to one with the spec's table, nested objects included, each of its type.
        let (top, account, attempt) = crate::fixtures::spec::notification_fields();
        assert_eq!(keys(&body), top, "payload fields = spec table");
        assert_eq!(keys(&body["AccountDetails"]), account);
        assert_eq!(
            keys(&body["CascadingInfo"]),
            BTreeSet::from(["SessionId".into(), "AttemptsVector".into()])
        );
        assert_eq!(keys(&body["CascadingInfo"]["AttemptsVector"][0]), attempt);
        crate::fixtures::spec::assert_documented_types(&body, &[]);

        // Filled from real data.
        assert_eq!(body["Action"], "TRANSACTION_DATA_UPDATE");
        assert_eq!(body["OrderId"], "hp-order-1");
        assert_eq!(body["MerchantOrderId"], "hp-order-1");
        assert_eq!(body["TransactionType"], "PayIn");
        assert_eq!(body["TransactionStatus"], "Success");
        assert_eq!(body["Amount"], json!(49.9));
        assert_eq!(body["InitialAmount"], json!(49.9));
        assert_eq!(body["Currency"], "EUR");
        assert_eq!(body["UsdAmount"], json!(53.89), "49.90 EUR × 1.08");
        assert_eq!(body["MaskedPan"], "424242******4242");
        assert_eq!(body["LastCcDigits"], "4242");
        assert_eq!(body["CardType"], "Visa");
        assert_eq!(body["BinType"], "credit");
        assert_eq!(body["CreditCardCountry"], "US");
        assert_eq!(body["CardIssuer"], "Sandbox Bank");
        assert_eq!(body["PaymentProcessorId"], 101);
        assert_eq!(body["PaymentProcessor"], "Sandbox Card Gateway A");
        assert_eq!(body["ClientIP"], "127.0.0.1");
        assert_eq!(body["Retried"], false);
        assert_eq!(body["IsSubscriptionTransaction"], false);
        assert_eq!(body["CrmPaymentType"], 1);
        assert!(body["TransactionId"].is_i64());
        assert!(body["ExternalTransactionId"]
            .as_str()
            .unwrap()
            .starts_with("sbx_"));
        assert_eq!(body["InternalPspId"], body["ExternalTransactionId"]);
        let details = &body["AccountDetails"];
        assert_eq!(details["Dob"], "12/10/1990");
        assert_eq!(details["FirstName"], "Ada");
        assert_eq!(details["Country"], "DE");
        assert_eq!(details["Currency"], "EUR");
        assert!(uuid::Uuid::parse_str(body["AccountId"].as_str().unwrap()).is_ok());
        assert!(uuid::Uuid::parse_str(body["ActionId"].as_str().unwrap()).is_ok());
        let attempts = body["CascadingInfo"]["AttemptsVector"].as_array().unwrap();
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0]["Status"], "Success");
        assert!(
            uuid::Uuid::parse_str(attempts[0]["PaymentProcessorKey"].as_str().unwrap()).is_ok()
        );

        // The order is final: the link shows the outcome, a new session for it is refused.
        let done = page(visitor().get(&url).send().await.unwrap()).await;
        assert_eq!(done.status, StatusCode::OK);
        assert!(done.text.contains("Payment received"), "{}", done.text);
        let again = secret_post(
            &server,
            "/api/payment/hosted-page",
            &session_body(&server, "hp-order-1", &receiver.url, json!({})),
        )
        .await;
        assert!(again.problem(400).contains_key("orderId"));
    }
);

backend_matrix!(
    a_soft_decline_cascades_to_the_next_gateway,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let url = open_order(&server, "hp-cascade", &receiver.url, json!({})).await;
        let answer = pay(&visitor(), &url, card("4000000000000119", "101")).await;
        assert_eq!(
            answer.location.as_deref(),
            Some("https://shop.example.com/ok")
        );
        let notice = &notices(&server, "hp-cascade").await[0];
        assert_eq!(notice["TransactionStatus"], "Success");
        assert_eq!(notice["PaymentProcessorId"], 102);
        let attempts = notice["CascadingInfo"]["AttemptsVector"]
            .as_array()
            .unwrap();
        assert_eq!(attempts.len(), 2);
        assert_eq!(attempts[0]["PaymentProcessorId"], 101);
        assert_eq!(attempts[0]["Status"], "Rejected");
        assert_eq!(
            attempts[0]["DeclineReason"],
            "The gateway could not process the card."
        );
        assert_eq!(attempts[1]["PaymentProcessorId"], 102);
        assert_eq!(attempts[1]["Status"], "Success");
        assert_ne!(
            attempts[0]["ExternalTransactionId"],
            attempts[1]["ExternalTransactionId"]
        );

        // A hard decline does not cascade.
        let url = open_order(&server, "hp-hard", &receiver.url, json!({})).await;
        let answer = pay(&visitor(), &url, card("4000000000000002", "101")).await;
        assert_eq!(
            answer.location.as_deref(),
            Some("https://shop.example.com/failed")
        );
        let notice = &notices(&server, "hp-hard").await[0];
        assert_eq!(notice["TransactionStatus"], "Rejected");
        assert_eq!(notice["DeclineReasonCode"], "card_declined");
        assert_eq!(
            notice["CascadingInfo"]["AttemptsVector"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
);

backend_matrix!(
    editable_amounts_methods_and_the_identity_step,
    |backend| async move {
        let receiver = WebhookReceiver::start().await;
        let server = server_with(backend, &receiver).await;
        let url = open_order(&server, "hp-open-amount", &receiver.url, json!({"billingDetails": {"lockedAmount": null}, "successRedirectUrl": null, "failedRedirectUrl": null})).await;
        let client = visitor();
        // Bad amounts and a bad card come back with the fields marked; nothing is charged.
        for amount in ["abc", "12.345", "0", "-5"] {
            let mut fields = card("4242424242424242", "101");
            fields.push(("amount", amount.into()));
            let answer = pay(&client, &url, fields).await;
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{amount}");
            assert!(answer.text.contains("id=\"amount-error\""), "{amount}");
        }
        let mut fields = card("4242424242424241", "101");
        fields.push(("amount", "12.34".into()));
        assert_eq!(
            pay(&client, &url, fields).await.status,
            StatusCode::BAD_REQUEST
        );
        assert!(notices(&server, "hp-open-amount").await.is_empty());

        // Without a failed URL, a decline shows the form again with the reason.
        let mut fields = card("4000000000000002", "101");
        fields.push(("amount", "12.34".into()));
        let declined = pay(&client, &url, fields).await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        assert!(declined.text.contains("data-testid=\"form-message\""));

        // The identity step: the card waits for the answer, then pays.
        let mut fields = card("4000000000003220", "101");
        fields.push(("amount", "12.34".into()));
        let parked = pay(&client, &url, fields).await;
        assert_eq!(parked.status, StatusCode::SEE_OTHER);
        let location = format!("{}{}", server.base_url, parked.location.unwrap());
        let challenge = page(client.get(&location).send().await.unwrap()).await;
        assert!(
            // The shared challenge template writes its action HTML-escaped.
            challenge
                .text
                .contains("action=\"&#x2f;cashier&#x2f;confirm\""),
            "{}",
            challenge.text
        );
        let form: Vec<(String, String)> = ["sessionToken", "m_orderId", "csrfToken"]
            .iter()
            .map(|n| (n.to_string(), hidden(&challenge.text, n)))
            .chain([("action".to_string(), "confirm".to_string())])
            .collect();
        let confirmed = page(
            client
                .post(format!("{}/cashier/confirm", server.base_url))
                .form(&form)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(confirmed.status, StatusCode::SEE_OTHER);
        let done = page(client.get(&location).send().await.unwrap()).await;
        assert!(done.text.contains("Payment received"), "{}", done.text);
        let all = notices(&server, "hp-open-amount").await;
        assert_eq!(all.len(), 2, "the decline and the payment");
        assert_eq!(all[1]["Amount"], json!(12.34));
        assert_eq!(all[1]["InitialAmount"], json!(12.34));
        assert_eq!(all[1]["TransactionStatus"], "Success");

        // An alternative method needs no card.
        let url = open_order(&server, "hp-wallet", &receiver.url, json!({})).await;
        let answer = submit(&client, &url, &[("processorId", "201")]).await;
        assert_eq!(
            answer.location.as_deref(),
            Some("https://shop.example.com/ok")
        );
        let notice = &notices(&server, "hp-wallet").await[0];
        assert_eq!(notice["PaymentProcessor"], "Sandbox E-Wallet");
        assert_eq!(notice["CrmPaymentType"], 2);
        assert_eq!(notice["MaskedPan"], Value::Null);
        // A processor the session hides cannot be used.
        let url = open_order(
            &server,
            "hp-hidden",
            &receiver.url,
            json!({"disabledPspIds": [201]}),
        )
        .await;
        assert_eq!(
            submit(&client, &url, &[("processorId", "201")])
                .await
                .status,
            StatusCode::BAD_REQUEST
        );

        // A form without its token is refused.
        let refused = client
            .post(format!("{}/cashier", server.base_url))
            .form(&[
                (
                    "sessionToken",
                    hidden(
                        &page(client.get(&url).send().await.unwrap()).await.text,
                        "sessionToken",
                    )
                    .as_str(),
                ),
                ("m_orderId", "hp-hidden"),
                ("processorId", "101"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    }
);

backend_matrix!(a_double_submission_charges_once, |backend| async move {
    let receiver = WebhookReceiver::start().await;
    let server = server_with(backend, &receiver).await;
    let url = open_order(&server, "hp-double", &receiver.url, json!({})).await;
    let client = visitor();
    // One form, posted twice at once (a double click).
    let mut form = form_of(&client, &url).await;
    form.extend(
        card("4242424242424242", "101")
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    let (a, b) = tokio::join!(
        post_form(&client, &url, &form),
        post_form(&client, &url, &form),
    );
    assert!(a.status == StatusCode::SEE_OTHER && b.status == StatusCode::SEE_OTHER);
    let count = server
        .count(
            "SELECT COUNT(*) FROM cashier_transactions WHERE order_id = $1",
            "hp-double",
        )
        .await;
    assert_eq!(count, 1);
});
