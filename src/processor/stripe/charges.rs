//! What an off-session PaymentIntent's answer means for a charge attempt (DESIGN §17, §3):
//! Stripe's answer, never the browser's, read into recur's [`ChargeOutcome`], or into "not
//! settled yet" when Stripe has not decided (the attempt stays `Pending`).

use chrono::TimeDelta;

use super::client::Refusal;
use super::objects::{ClientSecret, PaymentIntent, Refund};
use crate::processor::ChargeOutcome;

/// The code of an attempt that needs the customer to authenticate (3-D Secure): the
/// payment-failed e-mail's pay-now page lets them.
pub const AUTHENTICATION_REQUIRED: &str = "authentication_required";

/// How long a customer on a hosted page has to authenticate a payment Stripe asked them to
/// authenticate, from the payment's start; then the PaymentIntent is cancelled, so that it can
/// never succeed unrecorded.
pub const AUTHENTICATION_WINDOW: TimeDelta = TimeDelta::minutes(15);

/// A payment waiting for its customer, on a hosted page, to authenticate it: what the page's
/// Stripe.js needs.
#[derive(Debug, Clone)]
pub struct Authentication {
    /// The publishable key of the account that holds the card.
    pub publishable_key: String,
    /// The PaymentIntent's client secret (never logged).
    pub client_secret: ClientSecret,
}

/// The outcome a PaymentIntent stands for; `None` while Stripe has not decided (`processing`,
/// or a status recur does not ask for), to be settled by Stripe's webhook or asked again.
pub fn outcome(intent: &PaymentIntent) -> Option<ChargeOutcome> {
    let reference = intent.id.clone();
    match intent.status.as_str() {
        "succeeded" => Some(ChargeOutcome::Approved { reference }),
        "requires_action" | "requires_confirmation" => Some(ChargeOutcome::Declined {
            reference,
            code: AUTHENTICATION_REQUIRED.into(),
            reason: "The card needs the customer to confirm the payment.".into(),
        }),
        "requires_payment_method" | "canceled" => {
            let error = intent.last_payment_error.as_ref();
            Some(ChargeOutcome::Declined {
                reference,
                code: error
                    .and_then(|e| e.decline_code.clone().or_else(|| e.code.clone()))
                    .unwrap_or_else(|| "card_declined".into()),
                reason: error
                    .and_then(|e| e.message.clone())
                    .unwrap_or_else(|| "The card was declined.".into()),
            })
        }
        _ => None,
    }
}

/// The outcome a refusal of a confirmation stands for: a decline for a card error (Stripe
/// answers 402 with `type: card_error`; its `decline_code`, else its `code`); `None` for any
/// other refusal (a revoked key, a bad request), which is the merchant's to fix, not the
/// customer's: the attempt stays `Pending` and is asked again.
pub fn refusal_outcome(refusal: &Refusal) -> Option<ChargeOutcome> {
    if refusal.status != 402 && refusal.kind != "card_error" {
        return None;
    }
    let reference = refusal
        .payment_intent
        .as_ref()
        .and_then(|intent| intent["id"].as_str())
        .unwrap_or_default()
        .to_owned();
    Some(ChargeOutcome::Declined {
        reference,
        code: refusal
            .decline_code
            .clone()
            .or_else(|| refusal.code.clone())
            .unwrap_or_else(|| "card_declined".into()),
        reason: refusal.message.clone(),
    })
}

/// The outcome a Refund stands for; `None` while Stripe has not decided (`pending`,
/// `requires_action`).
pub fn refund_outcome(refund: &Refund) -> Option<ChargeOutcome> {
    let reference = refund.id.clone();
    match refund.status.as_str() {
        "succeeded" => Some(ChargeOutcome::Approved { reference }),
        "failed" | "canceled" => Some(ChargeOutcome::Declined {
            reference,
            code: refund
                .failure_reason
                .clone()
                .unwrap_or_else(|| "refund_failed".into()),
            reason: "Stripe could not refund the payment.".into(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(body: &str) -> PaymentIntent {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn a_succeeded_intent_is_approved_under_its_id() {
        let approved = outcome(&intent(r#"{"id":"pi_1","status":"succeeded"}"#));
        assert_eq!(
            approved,
            Some(ChargeOutcome::Approved {
                reference: "pi_1".into()
            })
        );
    }

    #[test]
    fn an_intent_that_needs_the_customer_asks_for_authentication() {
        let Some(ChargeOutcome::Declined { code, .. }) =
            outcome(&intent(r#"{"id":"pi_2","status":"requires_action"}"#))
        else {
            panic!("a decline");
        };
        assert_eq!(code, AUTHENTICATION_REQUIRED);
    }

    #[test]
    fn a_failed_intent_keeps_the_issuers_reason() {
        // Stripe's documented shape of an off-session decline's PaymentIntent.
        let declined = outcome(&intent(
            r#"{"id":"pi_3","status":"requires_payment_method","last_payment_error":{
                "code":"card_declined","decline_code":"insufficient_funds",
                "message":"Your card has insufficient funds.","type":"card_error"}}"#,
        ));
        assert_eq!(
            declined,
            Some(ChargeOutcome::Declined {
                reference: "pi_3".into(),
                code: "insufficient_funds".into(),
                reason: "Your card has insufficient funds.".into(),
            })
        );
    }

    #[test]
    fn an_undecided_intent_is_no_outcome_yet() {
        assert_eq!(
            outcome(&intent(r#"{"id":"pi_4","status":"processing"}"#)),
            None
        );
    }

    fn refusal(status: u16, kind: &str, decline_code: Option<&str>) -> Refusal {
        Refusal {
            status,
            kind: kind.into(),
            code: Some("card_declined".into()),
            decline_code: decline_code.map(Into::into),
            message: "Your card was declined.".into(),
            payment_intent: Some(serde_json::json!({"id": "pi_5"})),
        }
    }

    #[test]
    fn a_card_error_is_a_decline_in_stripes_shape_and_the_emulators() {
        // Stripe: 402 card_error with decline_code and the intent; localstripe: 402
        // invalid_request_error with code only.
        assert_eq!(
            refusal_outcome(&refusal(402, "card_error", Some("do_not_honor"))),
            Some(ChargeOutcome::Declined {
                reference: "pi_5".into(),
                code: "do_not_honor".into(),
                reason: "Your card was declined.".into(),
            })
        );
        let Some(ChargeOutcome::Declined { code, .. }) =
            refusal_outcome(&refusal(402, "invalid_request_error", None))
        else {
            panic!("a decline");
        };
        assert_eq!(code, "card_declined");
    }

    #[test]
    fn a_refund_is_settled_once_stripe_decided() {
        let refund = |body: &str| serde_json::from_str::<Refund>(body).unwrap();
        assert_eq!(
            refund_outcome(&refund(r#"{"id":"re_1","status":"succeeded"}"#)),
            Some(ChargeOutcome::Approved {
                reference: "re_1".into()
            })
        );
        let Some(ChargeOutcome::Declined { code, .. }) = refund_outcome(&refund(
            r#"{"id":"re_2","status":"failed","failure_reason":"expired_or_canceled_card"}"#,
        )) else {
            panic!("a failed refund");
        };
        assert_eq!(code, "expired_or_canceled_card");
        assert_eq!(
            refund_outcome(&refund(r#"{"id":"re_3","status":"pending"}"#)),
            None
        );
    }

    #[test]
    fn a_refused_key_or_request_is_no_decline() {
        assert_eq!(
            refusal_outcome(&refusal(401, "invalid_request_error", None)),
            None
        );
        assert_eq!(
            refusal_outcome(&refusal(400, "invalid_request_error", None)),
            None
        );
    }
}
