//! The `TRANSACTION_DATA_UPDATE` payload of the hosted-payment-page spec, one field per row of
//! its table, shared by cashier transactions ([`super::cashier`]) and subscription charges and
//! refunds ([`super::subscription`]). `Action`, `ActionId` and `OrderId` are added when the
//! event is recorded, `Signature` at delivery (it derives from the merchant secret, which the
//! database never holds in the clear).

use chrono::{DateTime, Utc};
use recur_domain::money::{format_amount, Currency};
use recur_domain::time::format_utc;
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use crate::keys::ServerKeys;
use crate::store::cashier_transactions::{Attempt, CardFacts};

/// `CrmPaymentType` of a card payment.
pub const CRM_CARD: i64 = 1;
/// `CrmPaymentType` of an alternative method (e-wallet, bank transfer).
pub const CRM_ALTERNATIVE: i64 = 2;

/// The payer's `AccountDetails`.
#[derive(Debug, Clone, Default)]
pub struct AccountDetails {
    /// `MerchantId`.
    pub merchant_id: i64,
    /// `CreatedDate`.
    pub created: Option<DateTime<Utc>>,
    /// `FirstName`.
    pub first_name: Option<String>,
    /// `LastName`.
    pub last_name: Option<String>,
    /// `Email`.
    pub email: Option<String>,
    /// `Currency`.
    pub currency: String,
    /// `Country`.
    pub country: Option<String>,
    /// `Dob`, as `MM/dd/yyyy`.
    pub dob: Option<String>,
    /// `City`.
    pub city: Option<String>,
    /// `ZipCode`.
    pub zip_code: Option<String>,
    /// `Region`.
    pub region: Option<String>,
    /// `Street`.
    pub street: Option<String>,
    /// `Phone`.
    pub phone: Option<String>,
}

/// Everything a transaction notification says, before it is recorded.
#[derive(Debug, Clone)]
pub struct TransactionPayload {
    /// `OrganizationId`: the merchant.
    pub organization_id: i64,
    /// `MerchantOrderId`.
    pub merchant_order_id: String,
    /// `AccountId`.
    pub account_id: String,
    /// `AccountDetails`.
    pub account: AccountDetails,
    /// `UsdAmount` (the rate table has every accepted currency, so there always is one).
    pub usd_amount: Decimal,
    /// `TransactionType`: `PayIn`, `PayOut` or `Refund`.
    pub kind: &'static str,
    /// `TransactionStatus`: `Success`, `Rejected` or `Failed`.
    pub status: &'static str,
    /// `Amount`, exact decimal.
    pub amount: Value,
    /// `InitialAmount`, exact decimal.
    pub initial_amount: Value,
    /// `Currency`.
    pub currency: String,
    /// `TransactionId`.
    pub transaction_id: i64,
    /// `ExternalTransactionId` and `InternalPspId`: the processor's reference.
    pub reference: String,
    /// `PaymentProcessorId`.
    pub processor_id: i64,
    /// `PaymentProcessor` and `PaymentProcessorTitleForSync`.
    pub processor_name: String,
    /// `DeclineReasonCode`.
    pub decline_code: Option<String>,
    /// `DeclineReasonText`.
    pub decline_reason: Option<String>,
    /// The card (`CardType`, `LastCcDigits`, `MaskedPan`, `BinType`, `CardIssuer`,
    /// `CreditCardCountry`, `CreditCardDigest`); `None` for alternative methods.
    pub card: Option<CardFacts>,
    /// `CascadingInfo.SessionId`.
    pub cascade_id: Option<String>,
    /// `CascadingInfo.AttemptsVector`.
    pub attempts: Vec<Attempt>,
    /// `IssueDate`.
    pub issued_at: DateTime<Utc>,
    /// `ClientIP`.
    pub client_ip: Option<String>,
    /// `CrmPaymentType`.
    pub crm_payment_type: i64,
    /// `PlanKey`.
    pub plan_key: Option<String>,
    /// `IsSubscriptionTransaction`.
    pub is_subscription: bool,
    /// `SubscriptionInvoiceId`.
    pub subscription_invoice_id: Option<String>,
    /// `Retried`.
    pub retried: bool,
}

/// A money amount as a JSON number carrying the exact decimal (`12.5`, `1000`, `0.125`).
pub fn amount_number(minor: i64, currency: Currency) -> Value {
    format_amount(minor, currency)
        .parse::<serde_json::Number>()
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// A decimal as a JSON number carrying its exact digits.
pub fn decimal_number(value: Decimal) -> Value {
    value
        .normalize()
        .to_string()
        .parse::<serde_json::Number>()
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

impl TransactionPayload {
    /// The payload's fields, in the order of the spec's table.
    pub fn into_json(self) -> Map<String, Value> {
        let card = self.card.as_ref();
        let a = &self.account;
        let attempts: Vec<Value> = self
            .attempts
            .iter()
            .map(|attempt| {
                json!({
                    "PaymentSystem": attempt.processor_name,
                    "PaymentProcessorId": attempt.processor_id,
                    "PaymentProcessorKey": attempt.processor_key,
                    "DeclineReason": attempt.decline_reason,
                    "ExternalTransactionId": attempt.reference,
                    "InternalPspId": attempt.reference,
                    "TransactionId": self.transaction_id,
                    "Date": format_utc(attempt.at),
                    "Status": attempt.status,
                })
            })
            .collect();
        let mut out = Map::new();
        let mut put = |key: &str, value: Value| {
            out.insert(key.into(), value);
        };
        put("OrganizationId", self.organization_id.into());
        put("MerchantOrderId", self.merchant_order_id.into());
        put("AccountId", self.account_id.into());
        put(
            "AccountDetails",
            json!({
                "MerchantId": a.merchant_id,
                "CreatedDate": a.created.map(format_utc),
                "FirstName": a.first_name,
                "LastName": a.last_name,
                "Email": a.email,
                "Currency": a.currency,
                "Country": a.country,
                "Dob": a.dob,
                "City": a.city,
                "ZipCode": a.zip_code,
                "Region": a.region,
                "Street": a.street,
                "Phone": a.phone,
            }),
        );
        put("BinType", card.and_then(|c| c.bin_type.clone()).into());
        put("UsdAmount", decimal_number(self.usd_amount));
        put("TransactionType", self.kind.into());
        put("TransactionStatus", self.status.into());
        put("Amount", self.amount);
        put("InitialAmount", self.initial_amount);
        put("Currency", self.currency.into());
        put("TransactionId", self.transaction_id.into());
        put("ExternalTransactionId", self.reference.clone().into());
        put("PaymentProcessor", self.processor_name.clone().into());
        put("PaymentProcessorId", self.processor_id.into());
        put("PaymentProcessorTitleForSync", self.processor_name.into());
        put("DeclineReasonText", self.decline_reason.into());
        put("DeclineReasonCode", self.decline_code.into());
        put("CardType", card.map(|c| c.brand.clone()).into());
        put("CardIssuer", card.and_then(|c| c.issuer.clone()).into());
        put("LastCcDigits", card.map(|c| c.last4.clone()).into());
        put(
            "CascadingInfo",
            json!({ "SessionId": self.cascade_id, "AttemptsVector": attempts }),
        );
        put("IssueDate", format_utc(self.issued_at).into());
        put("ClientIP", self.client_ip.into());
        put("InternalPspId", self.reference.into());
        put("MaskedPan", card.map(CardFacts::masked_pan).into());
        put("EncryptedGatewayData", Value::Null);
        put(
            "CreditCardDigest",
            card.map(|c| c.fingerprint.clone()).into(),
        );
        put(
            "CreditCardCountry",
            card.and_then(|c| c.country.clone()).into(),
        );
        put("CrmPaymentType", self.crm_payment_type.into());
        put("PlanKey", self.plan_key.into());
        put("IsSubscriptionTransaction", self.is_subscription.into());
        put("SubscriptionInvoiceId", self.subscription_invoice_id.into());
        put("Retried", self.retried.into());
        out
    }
}

/// `AccountId` of the payer with `email` at a merchant: a UUID derived from the merchant and the
/// e-mail with the server key, so every payment of one payer carries the same account (a cashier
/// order and a subscription charge of a customer with that e-mail alike) and the e-mail cannot be
/// read back.
pub fn account_id(keys: &ServerKeys, merchant_id: i64, email: &str) -> String {
    let digest = keys.lookup_digest(&format!(
        "cashier-account:{merchant_id}:{}",
        email.to_lowercase()
    ));
    let mut bytes = [0u8; 16];
    if let Ok(decoded) = hex::decode(&digest[..32.min(digest.len())]) {
        bytes[..decoded.len()].copy_from_slice(&decoded);
    }
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}
