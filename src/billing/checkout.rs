//! Hosted checkout and portal sessions, what a checkout shows and collects (the amount due now
//! and when the next charge falls), and saving the card a customer enters (as a processor
//! token, never the number).

use chrono::{DateTime, Duration, Utc};
use recur_domain::card::CardNumber;
use recur_domain::coupon::AppliedCoupon;
use recur_domain::status::MembershipStatus;
use recur_domain::tax::InvoiceTax;

use super::BillingError;
use crate::ids;
use crate::links;
use crate::platform::Platform;
use crate::store::checkout_sessions::{self, CheckoutSession, NewSession, SessionKind};
use crate::store::invoices;
use crate::store::memberships::Membership;
use crate::store::payment_methods::{self, MethodType, NewPaymentMethod, PaymentMethod};
use crate::store::Tx;

/// How long a checkout link works.
pub const CHECKOUT_LIFETIME: Duration = Duration::hours(24);
/// How long a portal link works.
pub const PORTAL_LIFETIME: Duration = Duration::hours(1);
/// How long the pay-now link of a "payment failed" e-mail works: well past the dunning schedule
/// (retries 1, 3 and 5 days after the failure), so that it still pays an Unpaid membership.
pub const PAY_NOW_LINK_LIFETIME: Duration = Duration::days(30);

/// A session to open.
#[derive(Debug, Clone)]
pub struct SessionSpec<'a> {
    /// The merchant.
    pub merchant_id: i64,
    /// The customer it serves.
    pub customer_id: i64,
    /// The membership to pay (a checkout); `None` opens a portal.
    pub membership: Option<&'a Membership>,
    /// Where the customer goes afterwards; a checkout falls back to the membership's
    /// `returnToWebsiteLink`.
    pub return_url: Option<String>,
}

/// Opens a checkout or portal session; returns the link's token (kept nowhere: only its keyed
/// digest is stored) and the session.
pub async fn open_session(
    state: &Platform,
    spec: SessionSpec<'_>,
    now: DateTime<Utc>,
) -> Result<(String, CheckoutSession), BillingError> {
    let (kind, lifetime, prefix) = match spec.membership {
        Some(_) => (SessionKind::Checkout, CHECKOUT_LIFETIME, "cs_"),
        None => (SessionKind::Portal, PORTAL_LIFETIME, "ps_"),
    };
    let token = ids::prefixed("", 40);
    let return_url = spec.return_url.or_else(|| {
        spec.membership
            .and_then(|m| m.return_to_website_link.clone())
    });
    let mut tx = state.store.begin().await?;
    let session = checkout_sessions::insert(
        &mut tx,
        NewSession {
            merchant_id: spec.merchant_id,
            customer_id: spec.customer_id,
            membership_id: spec.membership.map(|m| m.id),
            session_key: ids::prefixed(prefix, 24),
            token_digest: &state.keys.lookup_digest(&token),
            kind,
            return_url: return_url.as_deref(),
            expires_at: now + lifetime,
        },
        now,
    )
    .await?;
    tx.commit().await?;
    Ok((token, session))
}

/// Opens the pay-now link of `m`'s failed renewal in the caller's transaction (the one that
/// records the failure and its e-mail): a checkout session that works for
/// [`PAY_NOW_LINK_LIFETIME`]. Returns its session key. The link's token is derived from that key
/// under the server key ([`links::pay_now_url`]) and only its keyed digest is stored, so the e-mail
/// outbox keeps the key, never the token.
pub async fn open_pay_now_link(
    tx: &mut Tx,
    state: &Platform,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<String, sqlx::Error> {
    let session_key = ids::prefixed("cs_", 24);
    checkout_sessions::insert(
        tx,
        NewSession {
            merchant_id: m.merchant_id,
            customer_id: m.customer_id,
            membership_id: Some(m.id),
            session_key: session_key.clone(),
            token_digest: &state
                .keys
                .lookup_digest(&links::pay_now_token(state, &session_key)),
            kind: SessionKind::Checkout,
            return_url: m.return_to_website_link.as_deref(),
            expires_at: at + PAY_NOW_LINK_LIFETIME,
        },
        at,
    )
    .await?;
    Ok(session_key)
}

/// Why a checkout takes money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The first period of an Incomplete membership.
    FirstPayment,
    /// The open invoice of a PastDue, Unpaid or Canceled membership.
    PayNow,
    /// Saving the card of an Incomplete membership with a trial: nothing is charged now; the
    /// amounts are the first charge's, when the trial ends.
    TrialStart,
}

/// What a checkout collects now.
#[derive(Debug, Clone)]
pub struct DueNow {
    /// First payment, pay-now or trial start.
    pub purpose: Purpose,
    /// Before credit, minor units.
    pub subtotal: i64,
    /// A coupon's discount, minor units.
    pub discount: i64,
    /// The coupon the discount comes from, when there is one.
    pub coupon: Option<AppliedCoupon>,
    /// Each tax of the invoice (DESIGN §14), in the membership's order.
    pub taxes: Vec<InvoiceTax>,
    /// EU rates were skipped: the customer accounts for the VAT.
    pub reverse_charge: bool,
    /// Credit applied, minor units.
    pub credit_applied: i64,
    /// Charged to the card, minor units.
    pub amount: i64,
    /// When the next renewal would charge, if one is scheduled to follow.
    pub next_charge: Option<DateTime<Utc>>,
    /// What the first charge at the trial's end will be (a trial start), minor units.
    pub first_charge: Option<i64>,
}

/// What a checkout of `m` would collect at `at`: the first period of an Incomplete membership,
/// or the oldest open invoice of one whose status lets pay-now collect it
/// ([`MembershipStatus::pays_open_invoice`]); `None` when it has nothing to pay (Active, or over
/// with nothing open).
pub async fn due_now(
    state: &Platform,
    m: &Membership,
    at: DateTime<Utc>,
) -> Result<Option<DueNow>, BillingError> {
    let next_charge = m.state.next_charge_once_paid(at);
    match m.state.status {
        MembershipStatus::Incomplete if m.state.starts_with_trial() => {
            let taxation = super::taxation::of(state.store.pool(), m).await?;
            let plan = m.state.period_invoice(&m.subscription_name, &taxation);
            Ok(Some(DueNow {
                purpose: Purpose::TrialStart,
                subtotal: plan.subtotal,
                discount: plan.discount,
                coupon: plan.coupon,
                taxes: plan.taxes,
                reverse_charge: plan.reverse_charge,
                credit_applied: 0,
                amount: 0,
                next_charge,
                first_charge: Some(plan.amount_due),
            }))
        }
        MembershipStatus::Incomplete => {
            let taxation = super::taxation::of(state.store.pool(), m).await?;
            let plan = m.state.period_invoice(&m.subscription_name, &taxation);
            Ok(Some(DueNow {
                purpose: Purpose::FirstPayment,
                subtotal: plan.subtotal,
                discount: plan.discount,
                coupon: plan.coupon,
                taxes: plan.taxes,
                reverse_charge: plan.reverse_charge,
                credit_applied: plan.credit_applied,
                amount: plan.amount_due,
                next_charge,
                first_charge: None,
            }))
        }
        status if status.pays_open_invoice() => {
            let open = invoices::oldest_open(state.store.pool(), m.id).await?;
            Ok(open.map(|invoice| DueNow {
                purpose: Purpose::PayNow,
                subtotal: invoice.subtotal,
                discount: invoice.discount,
                coupon: invoice.coupon,
                taxes: invoice.taxes,
                reverse_charge: invoice.reverse_charge,
                credit_applied: invoice.credit_applied,
                amount: invoice.amount_due,
                next_charge,
                first_charge: None,
            }))
        }
        _ => Ok(None),
    }
}

/// Hands a card to the processor and saves its token, brand, BIN, last four digits and a keyed
/// fingerprint for the customer. `attached` cards are used for renewals at once; others wait
/// until they have paid ([`payment_methods::attach`]).
pub async fn save_card(
    state: &Platform,
    merchant_id: i64,
    customer_id: i64,
    card: &CardNumber,
    attached: bool,
    at: DateTime<Utc>,
) -> Result<PaymentMethod, BillingError> {
    let token = state.processor.tokenize(merchant_id, card).await?;
    let fingerprint = state.keys.card_fingerprint(merchant_id, card);
    let mut tx = state.store.begin().await?;
    let method = payment_methods::insert(
        &mut tx,
        NewPaymentMethod {
            merchant_id,
            customer_id,
            payment_method_key: ids::payment_method_key(),
            processor_token: &token,
            brand: card.brand().as_str(),
            bin: card.bin(),
            last4: card.last4(),
            fingerprint: &fingerprint,
            attached,
            processor_id: None,
            expiry: None,
            method_type: MethodType::Card,
        },
        at,
    )
    .await?;
    tx.commit().await?;
    Ok(method)
}
