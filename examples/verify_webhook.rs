//! Verifies a recur webhook delivery: the spec's `Signature` and the Standard Webhooks signature.
//!
//! `cargo run --example verify_webhook -- HEADERS.json BODY MERCHANT_SECRET SIGNING_SECRET`
//! (HEADERS.json maps lower-case header names to values; BODY is the raw request body.)
//! Crates: `sha2`, `hmac`, `base64`, `hex`, `subtle`, `serde_json`.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Whether a delivery is authentic. `now` is the receiver's Unix time in seconds.
pub fn verify(
    headers: &HashMap<String, String>,
    body: &[u8],
    merchant_secret: &str,
    signing_secret: &str,
    now: i64,
) -> bool {
    let header = |name: &str| headers.get(name).map(String::as_str).unwrap_or_default();
    let same = |a: &str, b: &str| bool::from(a.as_bytes().ct_eq(b.as_bytes()));
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    // 1. The spec's signature: lowercase hex SHA-256 of "<merchant secret>:<OrderId>".
    let order_id = payload["OrderId"].as_str().unwrap_or_default();
    let expected = hex::encode(Sha256::digest(format!("{merchant_secret}:{order_id}")));
    let in_body = payload["Signature"].as_str().unwrap_or_default();
    if !same(&expected, header("x-signature")) || !same(&expected, in_body) {
        return false;
    }
    // 2. Standard Webhooks: HMAC-SHA256 over "<id>.<timestamp>.<body>" with the decoded key.
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    let Ok(sent_at) = timestamp.parse::<i64>() else {
        return false;
    };
    if (now - sent_at).abs() > 300 {
        return false;
    }
    let key_text = signing_secret
        .strip_prefix("whsec_")
        .unwrap_or(signing_secret);
    let Ok(key) = BASE64.decode(key_text) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key) else {
        return false;
    };
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let wanted = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    header("webhook-signature")
        .split_whitespace()
        .any(|given| same(&wanted, given))
}

// The tests compile this file as a module and call `verify`, leaving `main` unused there.
#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, headers, body, merchant_secret, signing_secret] = args.as_slice() else {
        eprintln!("usage: verify_webhook HEADERS.json BODY MERCHANT_SECRET SIGNING_SECRET");
        std::process::exit(2);
    };
    let headers: HashMap<String, String> =
        serde_json::from_slice(&std::fs::read(headers).expect("headers file"))
            .expect("JSON object");
    let body = std::fs::read(body).expect("body file");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let ok = verify(&headers, &body, merchant_secret, signing_secret, now);
    println!("{}", if ok { "valid" } else { "invalid" });
    std::process::exit(if ok { 0 } else { 1 });
}
