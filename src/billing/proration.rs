//! A change waiting on its proration charge (DESIGN §4): the membership's state after the
//! update travels in the `Pending` charge ([`Target`]) and is applied only once the processor
//! approved it, with the credit note of what the change owes back (an interval change's unused
//! time).

use recur_domain::calendar::{BillingCycle, IntervalType, Period};
use recur_domain::coupon::Discount;
use recur_domain::membership::{EmailKind, Settlement, Terms};
use recur_domain::price::Price;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::credit_notes::OwedBack;
use super::followups::Followups;
use super::BillingError;
use crate::store::charges::Charge;
use crate::store::from_micros;
use crate::store::memberships::Membership;

/// The membership's state after the update, kept in a proration charge until it is approved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Target {
    pub(super) version: i64,
    pub(super) subscription_name: String,
    pub(super) metadata: Option<String>,
    pub(super) return_to_website_link: Option<String>,
    pub(super) end_date: Option<i64>,
    pub(super) total_amount: i64,
    pub(super) price_per_unit: Option<i64>,
    pub(super) quantity: Option<i64>,
    pub(super) interval_type: String,
    pub(super) interval_count: u32,
    pub(super) credit_balance: i64,
    pub(super) period: Option<(i64, i64)>,
    pub(super) updates: Map<String, Value>,
    /// What a coupon takes off the current period once the change applies.
    #[serde(default)]
    pub(super) period_discount: i64,
    /// The change starts a period whose invoice used a cycle of the coupon.
    #[serde(default)]
    pub(super) discount_used: bool,
    /// The catalog price the terms come from (`priceId`), if any.
    #[serde(default)]
    pub(super) price_key: Option<String>,
    /// A coupon given (its redemption counted with the update) or removed.
    #[serde(default)]
    pub(super) discount: Option<DiscountChange>,
    /// What the change owes back, written as a credit note once it applies; `credit_balance`
    /// includes it.
    #[serde(default)]
    pub(super) owed_back: Option<OwedBack>,
}

/// A change of a membership's coupon by an update.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum DiscountChange {
    /// The coupon redeemed for it, from its next period invoice on.
    Set(Discount),
    /// No coupon any more.
    Remove,
}

impl Target {
    /// The membership's terms once the update applies.
    fn terms(&self) -> Result<Terms, BillingError> {
        Ok(Terms {
            price: Price {
                total: self.total_amount,
                per_unit: self.price_per_unit,
                quantity: self.quantity,
            },
            cycle: BillingCycle {
                interval_type: IntervalType::parse(&self.interval_type)
                    .map_err(|e| BillingError::Internal(anyhow::anyhow!(e.to_string())))?,
                interval_count: self.interval_count,
            },
            end_date: self.end_date.map(from_micros),
            credit_balance: self.credit_balance,
            period: self.period.map(|(start, end)| Period {
                start: from_micros(start),
                end: from_micros(end),
            }),
            period_discount: self.period_discount,
            discount_used: self.discount_used,
        })
    }

    /// Applies the update's fields other than the terms, which the domain applies
    /// ([`recur_domain::membership::MembershipState::change_terms`]).
    fn apply_fields(&self, m: &mut Membership) {
        m.subscription_name.clone_from(&self.subscription_name);
        m.metadata.clone_from(&self.metadata);
        m.return_to_website_link
            .clone_from(&self.return_to_website_link);
        m.price_key.clone_from(&self.price_key);
        match &self.discount {
            Some(DiscountChange::Set(discount)) => m.state.discount = Some(discount.clone()),
            Some(DiscountChange::Remove) => m.state.discount = None,
            None => {}
        }
    }

    /// Applies the whole update to `m`, rescheduling its next action.
    pub(super) fn apply(&self, m: &mut Membership) -> Result<(), BillingError> {
        m.state.change_terms(self.terms()?);
        self.apply_fields(m);
        Ok(())
    }
}

pub(super) fn followups_of(target: &Target, email: Option<EmailKind>) -> Followups {
    Followups {
        updated: (!target.updates.is_empty()).then(|| target.updates.clone()),
        email,
        ..Followups::default()
    }
}

/// The answer to a proration charge, and what follows: paid and the change applied, or the
/// invoice voided on a decline ([`recur_domain::membership::MembershipState::proration_settled`]).
/// Nothing moves a membership while its charge is in flight (one attempt in flight per
/// membership, `store::charges`), so the change always applies; should the membership ever have
/// moved on all the same (another version), the money taken becomes credit rather than being
/// lost.
pub fn proration_settled(
    m: &mut Membership,
    charge: &Charge,
    approved: bool,
) -> Result<(Settlement, Followups), BillingError> {
    let target: Option<Target> = match (approved, charge.pending_update.as_deref()) {
        (true, Some(json)) => {
            Some(serde_json::from_str(json).map_err(|e| BillingError::Internal(e.into()))?)
        }
        _ => None,
    };
    let target = target.filter(|target| target.version == m.version);
    let terms = target.as_ref().map(Target::terms).transpose()?;
    let settlement = m.state.proration_settled(terms, charge.amount, approved);
    let followups = match target {
        Some(target) if settlement.terms_changed => {
            target.apply_fields(m);
            followups_of(&target, settlement.email)
        }
        _ => Followups::after(&settlement),
    };
    Ok((settlement, followups))
}

/// What the update that `charge` applied owes back (a credit note to write in the transaction
/// that applies it), if anything.
pub fn owed_back(charge: &Charge) -> Result<Option<OwedBack>, BillingError> {
    let Some(json) = charge.pending_update.as_deref() else {
        return Ok(None);
    };
    let target: Target =
        serde_json::from_str(json).map_err(|e| BillingError::Internal(e.into()))?;
    Ok(target.owed_back)
}

/// The coupon (`cpn_…`) whose redemption an update waiting on `charge` counted, if any: a
/// declined charge changes nothing, so that redemption is given back.
pub fn redeemed_coupon(charge: &Charge) -> Result<Option<String>, BillingError> {
    let Some(json) = charge.pending_update.as_deref() else {
        return Ok(None);
    };
    let target: Target =
        serde_json::from_str(json).map_err(|e| BillingError::Internal(e.into()))?;
    Ok(match target.discount {
        Some(DiscountChange::Set(discount)) => Some(discount.coupon.coupon_id),
        _ => None,
    })
}
