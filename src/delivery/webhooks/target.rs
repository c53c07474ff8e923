//! What a leased delivery sends, and where: an event to its own URL (a membership's
//! `webhookUrl`, a cashier session's), or an event to one of the merchant's registered
//! endpoints (DESIGN §12).

use crate::store::endpoint_deliveries::Leased;
use crate::store::events::Event;

/// A leased delivery's destination and payload.
#[derive(Debug, Clone)]
pub(super) enum Target {
    /// An event to its own URL, signed with the merchant's signing secret.
    Own(Event),
    /// An event, or a test event, to a registered endpoint, signed with the endpoint's secret
    /// (and its previous one while a rotation's overlap lasts).
    Endpoint(Leased),
}

impl Target {
    /// Where it is POSTed.
    pub(super) fn url(&self) -> &str {
        match self {
            Target::Own(event) => &event.webhook_url,
            Target::Endpoint(delivery) => &delivery.url,
        }
    }

    /// The event's `ActionId` (the `webhook-id`).
    pub(super) fn action_id(&self) -> &str {
        match self {
            Target::Own(event) => &event.action_id,
            Target::Endpoint(delivery) => &delivery.action_id,
        }
    }

    /// The event's `OrderId`, which the spec's `Signature` signs; none for a test event.
    pub(super) fn order_id(&self) -> Option<&str> {
        match self {
            Target::Own(event) => Some(&event.order_id),
            Target::Endpoint(delivery) => delivery.order_id.as_deref(),
        }
    }

    /// The payload without `Signature`.
    pub(super) fn payload(&self) -> &str {
        match self {
            Target::Own(event) => &event.payload,
            Target::Endpoint(delivery) => &delivery.payload,
        }
    }

    /// Attempts made in the current round.
    pub(super) fn round_attempts(&self) -> i64 {
        match self {
            Target::Own(event) => event.round_attempts,
            Target::Endpoint(delivery) => delivery.round_attempts,
        }
    }

    /// Whose event it is.
    pub(super) fn merchant_id(&self) -> i64 {
        match self {
            Target::Own(event) => event.merchant_id,
            Target::Endpoint(delivery) => delivery.merchant_id,
        }
    }
}
