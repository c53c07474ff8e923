//! The parts of Stripe's objects recur reads, as Stripe's API reference documents them. Every
//! other field is ignored, so fields Stripe adds change nothing.

use serde::Deserialize;

/// The client secret of a PaymentIntent or SetupIntent: what a hosted page's Stripe.js confirms
/// it with. Handed to that page only; never logged (its `Debug` hides it) nor stored.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// The secret, for the page's Stripe.js.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecret(…)")
    }
}

/// A Customer (`cus_…`).
#[derive(Debug, Clone, Deserialize)]
pub struct Customer {
    /// `cus_…`.
    pub id: String,
}

/// A PaymentMethod (`pm_…`).
#[derive(Debug, Clone, Deserialize)]
pub struct PaymentMethod {
    /// `pm_…`.
    pub id: String,
    /// `card`, `sepa_debit`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The card's details when `type` is `card`.
    #[serde(default)]
    pub card: Option<Card>,
    /// The Customer it is attached to, if any.
    #[serde(default)]
    pub customer: Option<String>,
}

/// A card's details, without its number (Stripe never gives it out).
#[derive(Debug, Clone, Deserialize)]
pub struct Card {
    /// `visa`, `mastercard`, `amex`, …
    pub brand: String,
    /// The last four digits.
    pub last4: String,
    /// Expiry month, 1–12.
    pub exp_month: i64,
    /// Expiry year, four digits.
    pub exp_year: i64,
    /// The same card gives the same value within one Stripe account.
    #[serde(default)]
    pub fingerprint: Option<String>,
}

/// A PaymentIntent (`pi_…`): one attempt to collect an amount.
#[derive(Debug, Clone, Deserialize)]
pub struct PaymentIntent {
    /// `pi_…`.
    pub id: String,
    /// `succeeded`, `processing`, `requires_action`, `requires_payment_method`, `canceled`, …
    pub status: String,
    /// Why the last confirmation failed, when it did.
    #[serde(default)]
    pub last_payment_error: Option<PaymentError>,
    /// What a hosted page's Stripe.js needs to let the customer authenticate.
    #[serde(default)]
    pub client_secret: Option<ClientSecret>,
    /// What recur put in it (`attemptKey`, `invoiceKey`, `membershipKey`).
    #[serde(default)]
    pub metadata: std::collections::HashMap<String, String>,
}

/// A SetupIntent (`seti_…`): saving a card for later charges, authenticated by the customer.
#[derive(Debug, Clone, Deserialize)]
pub struct SetupIntent {
    /// `seti_…`.
    pub id: String,
    /// `succeeded` once the card is saved; `requires_payment_method`, `requires_action`, …
    pub status: String,
    /// The Customer the card is saved for.
    #[serde(default)]
    pub customer: Option<String>,
    /// The card saved (`pm_…`), once there is one.
    #[serde(default)]
    pub payment_method: Option<String>,
    /// What a hosted page's Stripe.js confirms it with.
    #[serde(default)]
    pub client_secret: Option<ClientSecret>,
    /// What recur wrote on it (`cashierSession` for a cashier's).
    #[serde(default)]
    pub metadata: std::collections::HashMap<String, String>,
}

/// A Charge (`ch_…`): what a confirmed PaymentIntent made.
#[derive(Debug, Clone, Deserialize)]
pub struct Charge {
    /// `ch_…`.
    pub id: String,
    /// The PaymentIntent that made it.
    #[serde(default)]
    pub payment_intent: Option<String>,
}

/// A page of a list (`{"object": "list", "data": […]}`).
#[derive(Debug, Clone, Deserialize)]
pub struct List<T> {
    /// The page's objects.
    pub data: Vec<T>,
}

/// A Refund (`re_…`).
#[derive(Debug, Clone, Deserialize)]
pub struct Refund {
    /// `re_…`.
    pub id: String,
    /// Minor units.
    #[serde(default)]
    pub amount: i64,
    /// What recur put in it (`refundKey` for its own refunds).
    #[serde(default)]
    pub metadata: std::collections::HashMap<String, String>,
    /// `succeeded`, `pending`, `requires_action`, `failed` or `canceled`.
    pub status: String,
    /// Why it failed, when it did (`expired_or_canceled_card`, …).
    #[serde(default)]
    pub failure_reason: Option<String>,
}

/// The error a PaymentIntent's last confirmation ended with.
#[derive(Debug, Clone, Deserialize)]
pub struct PaymentError {
    /// `card_declined`, `authentication_required`, `expired_card`, …
    #[serde(default)]
    pub code: Option<String>,
    /// The issuer's reason (`insufficient_funds`, …), for declines.
    #[serde(default)]
    pub decline_code: Option<String>,
    /// Stripe's message, meant for the customer.
    #[serde(default)]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_documented_setup_intent_is_read_and_its_secret_never_printed() {
        // Stripe's API reference, "The SetupIntent object" (abridged only of fields recur does
        // not read).
        let body = r#"{"id":"seti_1Mm8s8LkdIwHu7ix0OXBfTRG","object":"setup_intent",
            "application":null,"cancellation_reason":null,
            "client_secret":"seti_1Mm8s8LkdIwHu7ix0OXBfTRG_secret_NXDICkPqPeiBTAFqWmkbff09lRmSVXe",
            "created":1678942624,"customer":"cus_NXDIHLhQ1bpfP4","description":null,
            "last_setup_error":null,"latest_attempt":null,"livemode":false,"mandate":null,
            "metadata":{},"next_action":null,"on_behalf_of":null,"payment_method":"pm_1Mm8s8",
            "payment_method_types":["card"],"single_use_mandate":null,"status":"succeeded",
            "usage":"off_session"}"#;
        let intent: SetupIntent = serde_json::from_str(body).unwrap();
        assert_eq!(intent.status, "succeeded");
        assert_eq!(intent.customer.as_deref(), Some("cus_NXDIHLhQ1bpfP4"));
        assert_eq!(intent.payment_method.as_deref(), Some("pm_1Mm8s8"));
        let secret = intent.client_secret.unwrap();
        assert!(secret
            .expose()
            .starts_with("seti_1Mm8s8LkdIwHu7ix0OXBfTRG_secret_"));
        assert_eq!(format!("{secret:?}"), "ClientSecret(…)");
    }

    #[test]
    fn a_documented_payment_intent_and_refund_list_are_read() {
        // Stripe's API reference, "The PaymentIntent object" and "List all refunds" (abridged).
        let intent = r#"{"id":"pi_3MtwBwLkdIwHu7ix28a3tqPa","object":"payment_intent",
            "amount":2000,"client_secret":"pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH",
            "currency":"usd","customer":null,"last_payment_error":null,"latest_charge":null,
            "metadata":{"attemptKey":"charge:42"},"next_action":null,"payment_method":null,
            "status":"requires_payment_method"}"#;
        let intent: PaymentIntent = serde_json::from_str(intent).unwrap();
        assert_eq!(intent.metadata["attemptKey"], "charge:42");
        assert!(intent.client_secret.is_some());
        let refunds = r#"{"object":"list","url":"/v1/refunds","has_more":false,"data":[
            {"id":"re_1Nispe2eZvKYlo2Cd31jOCgZ","object":"refund","amount":1000,
             "charge":"ch_1NirD82eZvKYlo2CIvbtLWuY","created":1692942318,"currency":"usd",
             "metadata":{},"payment_intent":"pi_1GszsK2eZvKYlo2CfhZyoZLp","reason":null,
             "status":"succeeded"}]}"#;
        let refunds: List<Refund> = serde_json::from_str(refunds).unwrap();
        assert_eq!(refunds.data[0].amount, 1000);
        assert!(refunds.data[0].metadata.is_empty());
    }

    #[test]
    fn a_documented_card_payment_method_is_read() {
        // The example of Stripe's API reference, "The PaymentMethod object" (abridged only of
        // fields recur does not read).
        let body = r#"{"id":"pm_1Q0PsIJvEtkwdCNYMSaVuRz6","object":"payment_method",
            "allow_redisplay":"unspecified","billing_details":{"address":{"city":null,
            "country":null,"line1":null,"line2":null,"postal_code":null,"state":null},
            "email":null,"name":"John Doe","phone":null},"card":{"brand":"visa","checks":{
            "address_line1_check":null,"address_postal_code_check":null,"cvc_check":"pass"},
            "country":"US","display_brand":"visa","exp_month":8,"exp_year":2026,
            "fingerprint":"mToisGZ01V71BCos","funding":"credit","generated_from":null,
            "last4":"4242","networks":{"available":["visa"],"preferred":null},
            "three_d_secure_usage":{"supported":true},"wallet":null},"created":1726673582,
            "customer":null,"livemode":false,"metadata":{},"type":"card"}"#;
        let method: PaymentMethod = serde_json::from_str(body).unwrap();
        assert_eq!(method.kind, "card");
        assert_eq!(method.customer, None);
        let card = method.card.unwrap();
        assert_eq!((card.brand.as_str(), card.last4.as_str()), ("visa", "4242"));
        assert_eq!((card.exp_month, card.exp_year), (8, 2026));
        assert_eq!(card.fingerprint.as_deref(), Some("mToisGZ01V71BCos"));
    }
}
