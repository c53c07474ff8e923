//! The webhook events recur emits, in one place (DESIGN §5). Each kind of event is a variant of
//! [`Event`] with one payload builder, in the spec's PascalCase shape; every event becomes its
//! outbox row ([`NewEvent`]) here, written in the transaction of the change it reports. Adding
//! an event type touches this module only. Billing and the cashier build events; the dispatcher
//! delivers the rows.

pub mod cashier;
pub mod membership;
pub mod subscription;
pub mod transaction;

use chrono::{DateTime, Utc};
use recur_domain::time::format_utc;
use serde_json::{Map, Value};

use crate::store::invoices::Invoice;
use crate::store::memberships::Membership;
use crate::store::outbox::{self, NewEvent};
use crate::store::Tx;
use cashier::OrderTransaction;
use subscription::SubscriptionTransaction;

/// The `Action` of an event: the kind of change it reports, as the webhook names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `SUBSCRIPTION_STATUS_CHANGED`.
    StatusChanged,
    /// `SUBSCRIPTION_UPDATED`.
    Updated,
    /// `TRANSACTION_DATA_UPDATE`.
    Transaction,
    /// `SUBSCRIPTION_TRIAL_WILL_END` (beyond the spec: DESIGN §15).
    TrialWillEnd,
}

impl Action {
    /// Every `Action`.
    pub const ALL: [Action; 4] = [
        Action::StatusChanged,
        Action::Updated,
        Action::Transaction,
        Action::TrialWillEnd,
    ];

    /// The `Action` named `text`, if any.
    pub fn parse(text: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// The `Action` text of the payload.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::StatusChanged => "SUBSCRIPTION_STATUS_CHANGED",
            Action::Updated => "SUBSCRIPTION_UPDATED",
            Action::Transaction => "TRANSACTION_DATA_UPDATE",
            Action::TrialWillEnd => "SUBSCRIPTION_TRIAL_WILL_END",
        }
    }
}

/// An event to record: what changed, with everything its payload is built from.
pub enum Event<'a> {
    /// A membership's status changed: the membership with its new status and its `recent`
    /// invoices.
    MembershipStatusChanged {
        /// The membership as saved.
        membership: &'a Membership,
        /// Its latest invoices, newest first.
        recent: &'a [Invoice],
    },
    /// Fields of a membership changed.
    MembershipUpdated {
        /// The membership as saved.
        membership: &'a Membership,
        /// Its latest invoices, newest first.
        recent: &'a [Invoice],
        /// Only the changed keys of the spec's table (`Name`, `PricePerUnit`, `Quantity`,
        /// `EndDate`, `IntervalType`, `IntervalCount`, `Metadata`).
        updates: Map<String, Value>,
    },
    /// A membership's trial ends in three days: the status-change payload plus `TrialEnd`.
    TrialWillEnd {
        /// The membership as saved.
        membership: &'a Membership,
        /// Its latest invoices, newest first.
        recent: &'a [Invoice],
    },
    /// A subscription's charge attempt or refund completed.
    MembershipTransaction(SubscriptionTransaction<'a>),
    /// A cashier order's payment, payout, retry or refund completed.
    CashierTransaction(OrderTransaction<'a>),
}

impl<'a> Event<'a> {
    /// Its `Action`.
    pub fn action(&self) -> Action {
        match self {
            Event::MembershipStatusChanged { .. } => Action::StatusChanged,
            Event::MembershipUpdated { .. } => Action::Updated,
            Event::TrialWillEnd { .. } => Action::TrialWillEnd,
            Event::MembershipTransaction(_) | Event::CashierTransaction(_) => Action::Transaction,
        }
    }

    /// Its outbox row, issued at `at`. A membership's events go to its `webhookUrl` and carry
    /// `IssuedAt`; a cashier order's go to its session's.
    fn into_outbox(self, at: DateTime<Utc>) -> NewEvent<'a> {
        let action = self.action().as_str();
        let of_membership = |m: &'a Membership, mut fields: Map<String, Value>| {
            fields.insert("IssuedAt".into(), format_utc(at).into());
            NewEvent {
                merchant_id: m.merchant_id,
                membership_id: Some(m.id),
                action,
                order_id: &m.order_id,
                webhook_url: &m.webhook_url,
                fields,
            }
        };
        match self {
            Event::MembershipStatusChanged { membership, recent } => {
                of_membership(membership, membership::status_changed(membership, recent))
            }
            Event::MembershipUpdated {
                membership,
                recent,
                updates,
            } => of_membership(membership, membership::updated(membership, recent, updates)),
            Event::TrialWillEnd { membership, recent } => {
                of_membership(membership, membership::trial_will_end(membership, recent))
            }
            Event::MembershipTransaction(t) => {
                let m = t.facts.membership;
                of_membership(m, subscription::payload(t, at))
            }
            Event::CashierTransaction(o) => {
                let (t, webhook_url) = (o.transaction, o.webhook_url);
                NewEvent {
                    merchant_id: t.merchant_id,
                    membership_id: None,
                    action,
                    order_id: &t.order_id,
                    webhook_url,
                    fields: cashier::payload(o, at),
                }
            }
        }
    }
}

/// The `Action` of a test event, sent to one webhook endpoint on the merchant's request
/// (DESIGN §12). It reports no change, so it is not one of [`Action::ALL`]: no filter names it.
pub const TEST_ACTION: &str = "WEBHOOK_TEST";

/// The payload of a test event with `ActionId` `action_id`, issued at `at`.
pub fn test_payload(action_id: &str, at: DateTime<Utc>) -> String {
    serde_json::json!({
        "Action": TEST_ACTION,
        "ActionId": action_id,
        "IssuedAt": format_utc(at),
    })
    .to_string()
}

/// Records `events` in the outbox, issued and due for delivery at `at`, in one statement.
pub async fn record(tx: &mut Tx, events: Vec<Event<'_>>, at: DateTime<Utc>) -> sqlx::Result<()> {
    let rows = events.into_iter().map(|e| e.into_outbox(at)).collect();
    outbox::insert_events(tx, rows, at).await?;
    Ok(())
}
