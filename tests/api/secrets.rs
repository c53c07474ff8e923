//! No card number, secret or token ends up where it should not: a full run of the real binary
//! (debug logging) is searched — its log, the whole database, the e-mails — for every card number,
//! password, merchant secret, signing secret, access token, API key and cashier session token it
//! handled.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::backend_matrix;
use crate::harness::{fresh_postgres_database, stripe_url, Backend};
use crate::process::{access_token, Recur};

backend_matrix!(secrets_and_card_numbers_never_leak, |backend| async move {
    let data = tempfile::tempdir().unwrap();
    let database_url = match backend {
        Backend::Postgres => fresh_postgres_database().await,
        Backend::Sqlite => format!("sqlite://{}/recur.sqlite3?mode=rwc", data.path().display()),
    };
    let recur = Recur {
        env: vec![
            ("RECUR_DATA_DIR".into(), data.path().display().to_string()),
            ("RECUR_DATABASE_URL".into(), database_url.clone()),
            ("RECUR_LISTEN".into(), "127.0.0.1:0".into()),
            ("RECUR_DEMO_MERCHANT".into(), "false".into()),
            ("RECUR_LOG".into(), "debug".into()),
            ("RECUR_STRIPE_API_BASE".into(), stripe_url()),
        ],
    };
    let created = recur
        .command(&["merchant", "create", "--name", "Leak Test", "--json"])
        .output()
        .unwrap();
    assert!(created.status.success());
    let merchant: Value = serde_json::from_slice(&created.stdout).unwrap();
    let log_path = data.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (mut server, base) = recur.serve_logging_to(log);
    let client = reqwest::Client::new();
    let api = format!("{base}/api/subscriptions/v1");
    let token = access_token(&client, &api, &merchant).await;
    let call = |method: reqwest::Method, path: &str, body: Option<Value>| {
        let mut request = client
            .request(method, format!("{api}{path}"))
            .bearer_auth(&token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            request
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap_or(Value::Null)
        }
    };
    let cards = [
        "4242 4242 4242 4242",
        "4000 0000 0000 9995",
        "5555555555554444",
    ];
    let customer = call(
        reqwest::Method::POST,
        "/customer",
        Some(
            json!({"processorKey": merchant["processorKey"], "firstName": "Lee", "lastName": "Kage",
                    "email": "leak@example.com", "phone": "+4915112345678", "countryCode": "DE"}),
        ),
    )
    .await;
    let customer_key = customer["customerKey"].as_str().unwrap();
    for card in cards {
        call(
            reqwest::Method::POST,
            "/test-helpers/payment-method",
            Some(json!({"customerKey": customer_key, "cardNumber": card})),
        )
        .await;
    }
    let membership = call(
        reqwest::Method::POST,
        "/membership",
        Some(json!({"customerKey": customer_key, "subscriptionName": "Gold", "webhookUrl": "https://merchant.example/hooks",
                    "productInfo": {"orderId": "leak-1"}, "pricingInfo": {"currency": "EUR", "totalAmount": "10.00"},
                    "billingCycle": {"intervalType": "Monthly"}})),
    )
    .await;
    let key = membership["membershipKey"].as_str().unwrap();
    let paid = call(
        reqwest::Method::POST,
        &format!("/test-helpers/membership/{key}/pay"),
        None,
    )
    .await;
    assert_eq!(paid["status"], "Active", "{paid}");
    call(
        reqwest::Method::PUT,
        "/membership",
        Some(json!({"membershipKey": key, "pricePerUnit": "20.00"})),
    )
    .await;
    // An API key: created under an Idempotency-Key (whose answer is remembered), then used.
    let created_key: Value = client
        .post(format!("{api}/api-keys"))
        .bearer_auth(&token)
        .header("idempotency-key", "leak-key")
        .json(&json!({"name": "Leak", "scope": "write"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let api_key = created_key["secret"].as_str().unwrap().to_string();
    assert!(client
        .get(format!("{api}/customer/{customer_key}"))
        .bearer_auth(&api_key)
        .send()
        .await
        .unwrap()
        .status()
        .is_success());
    // A hosted-page session: merchant secret in a header, session token in the redirect URL.
    let secret = merchant["merchantSecret"].as_str().unwrap();
    let timestamp = chrono::Utc::now().timestamp().to_string();
    let signature = hex::encode(Sha256::digest(format!(
        "leak@example.com;{timestamp};{secret}"
    )));
    let session: Value = client
        .post(format!("{base}/api/payment/hosted-page"))
        .header("X-Merchant-Secret", secret)
        .json(&json!({"timestamp": timestamp, "signature": signature, "orderId": "leak-order",
                      "webhookUrl": "https://merchant.example/hooks",
                      "successRedirectUrl": "https://merchant.example/ok", "failedRedirectUrl": "https://merchant.example/no",
                      "billingDetails": {"firstName": "Lee", "lastName": "Kage", "email": "leak@example.com",
                                         "country": "DE", "phone": "+4915112345678", "currency": "EUR", "lockedAmount": "5.00"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let redirect = session["redirectUrl"]
        .as_str()
        .expect("a cashier session")
        .to_string();
    let session_token = url::Url::parse(&redirect)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "sessionToken")
        .map(|(_, v)| v.to_string())
        .unwrap();
    assert!(client
        .get(&redirect)
        .send()
        .await
        .unwrap()
        .status()
        .is_success());
    // A card typed into the hosted checkout, and the checkout and portal links' tokens.
    let second = call(
        reqwest::Method::POST,
        "/membership",
        Some(json!({"customerKey": customer_key, "subscriptionName": "Silver", "webhookUrl": "https://merchant.example/hooks",
                    "productInfo": {"orderId": "leak-2"}, "pricingInfo": {"currency": "EUR", "totalAmount": "7.00"},
                    "billingCycle": {"intervalType": "Monthly"}})),
    )
    .await;
    let checkout = call(
        reqwest::Method::POST,
        "/checkout/session",
        Some(json!({"customerKey": customer_key, "membershipKey": second["membershipKey"]})),
    )
    .await;
    let checkout_url = checkout["checkoutRedirectUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let page = client
        .get(&checkout_url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let at = page.find("name=\"csrfToken\" value=\"").unwrap() + 24;
    let csrf = page[at..at + 64].to_string();
    let typed_card = "4000 0566 5566 5556";
    let paid = client
        .post(&checkout_url)
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("cardNumber", typed_card),
            ("expiry", "12/34"),
            ("cvc", "737"),
            ("holder", "Lee Kage"),
        ])
        .send()
        .await
        .unwrap();
    assert!(paid.status().is_success() || paid.status().is_redirection());
    let portal = call(
        reqwest::Method::POST,
        "/portal/session",
        Some(json!({"customerKey": customer_key})),
    )
    .await;
    let portal_url = portal["portalRedirectUrl"].as_str().unwrap().to_string();
    assert!(client
        .get(&portal_url)
        .send()
        .await
        .unwrap()
        .status()
        .is_success());
    // A Stripe account, connected against localstripe: its secret key and webhook secret.
    let stripe_secret_key = "sk_test_LeakCheck7f3a9c21d04b6e58";
    let stripe_webhook_secret = "whsec_LeakCheck0c4e8a2f61b9d357";
    let connected = call(
        reqwest::Method::POST,
        "/processors",
        Some(
            json!({"kind": "stripe", "name": "Leak Stripe", "secretKey": stripe_secret_key,
            "publishableKey": "pk_test_LeakCheck", "webhookSecret": stripe_webhook_secret}),
        ),
    )
    .await;
    assert_eq!(connected["kind"], "stripe", "{connected}");
    let link_tokens = [checkout_url, portal_url].map(|u| u.rsplit('/').next().unwrap().to_string());
    // Let the mailer write its .eml files.
    let mail_dir = data.path().join("mail");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_dir(&mail_dir).map(|d| d.count()).unwrap_or(0) < 3 {
        assert!(Instant::now() < deadline, "the receipts were not written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill().unwrap();
    server.wait().unwrap();

    // Everything recur wrote, as bytes.
    let mut haystack: Vec<u8> = std::fs::read(&log_path).unwrap();
    assert!(haystack.len() > 1000, "debug logging produced a log");
    for entry in std::fs::read_dir(&mail_dir).unwrap() {
        haystack.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    match backend {
        Backend::Sqlite => {
            for entry in std::fs::read_dir(data.path()).unwrap() {
                let path = entry.unwrap().path();
                if path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("recur.sqlite3")
                {
                    haystack.extend(std::fs::read(path).unwrap());
                }
            }
        }
        Backend::Postgres => {
            let dump = std::process::Command::new("pg_dump")
                .args(["--data-only", &database_url])
                .stderr(Stdio::inherit())
                .output()
                .expect("pg_dump runs");
            assert!(dump.status.success());
            assert!(dump.stdout.len() > 1000, "the dump has the data");
            haystack.extend(dump.stdout);
        }
    }
    let text = String::from_utf8_lossy(&haystack);
    assert!(
        text.contains("leak@example.com"),
        "the search covers real data"
    );
    let mut needles: Vec<(String, String)> = cards
        .iter()
        .chain([&typed_card])
        .map(|c| (format!("card {c}"), c.replace(' ', "")))
        .collect();
    for field in ["password", "merchantSecret", "webhookSigningSecret"] {
        needles.push((field.into(), merchant[field].as_str().unwrap().to_string()));
    }
    let whsec_key = merchant["webhookSigningSecret"]
        .as_str()
        .unwrap()
        .trim_start_matches("whsec_")
        .to_string();
    needles.push(("signing key".into(), whsec_key));
    needles.push(("access token".into(), token.clone()));
    needles.push((
        "access token signature".into(),
        token.rsplit('.').next().unwrap().to_string(),
    ));
    needles.push(("cashier session token".into(), session_token));
    needles.push(("API key secret".into(), api_key.clone()));
    needles.push((
        "API key secret without its prefix".into(),
        api_key.trim_start_matches("rk_").to_string(),
    ));
    for token in link_tokens {
        needles.push(("checkout or portal link token".into(), token));
    }
    needles.push(("Stripe secret key".into(), stripe_secret_key.into()));
    needles.push((
        "Stripe secret key without its prefix".into(),
        stripe_secret_key.trim_start_matches("sk_test_").into(),
    ));
    needles.push(("Stripe webhook secret".into(), stripe_webhook_secret.into()));
    let server_key = std::fs::read_to_string(data.path().join("server.key")).unwrap();
    needles.push(("server key".into(), server_key.trim().to_string()));
    for (what, needle) in needles {
        assert!(
            !text.contains(&needle),
            "{what} found in recur's log, database or e-mails"
        );
    }
});
