//! What a membership's status (and its coupon) lets the merchant or the customer do, asked
//! alike by the API, the billing engine and the pages: pause it ([`can_pause`]) and give or take
//! back a promotion code on its hosted checkout ([`accepts_coupon`]). The price switch of the
//! portal is [`super::can_switch_price`].

use crate::coupon::Discount;
use crate::status::{transition, LifecycleEvent, MembershipStatus};

/// What a pause asks of a membership, by its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseRequest {
    /// An Active membership is paused ([`super::MembershipState::pause`]).
    Pause,
    /// A Paused membership takes the new resume date
    /// ([`super::MembershipState::set_resume_at`]).
    NewResumeDate,
}

/// Whether a membership in `status` can be paused: an Active one is paused (the lifecycle's
/// [`LifecycleEvent::Paused`]), a Paused one takes a new resume date. Any other status is a
/// conflict: `Err` says why, as the API answers it.
pub fn can_pause(status: MembershipStatus) -> Result<PauseRequest, String> {
    if transition(status, LifecycleEvent::Paused).is_ok() {
        return Ok(PauseRequest::Pause);
    }
    if status == MembershipStatus::Paused {
        return Ok(PauseRequest::NewResumeDate);
    }
    Err(format!(
        "a {status} membership cannot be paused; only an Active one can"
    ))
}

/// What a customer does with a promotion code on a membership's hosted checkout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromotionCode {
    /// Applies a code: the membership is given its coupon.
    Apply,
    /// Takes back the code they applied: the membership loses its coupon.
    Remove,
}

/// Whether a membership in `status` with the coupon `discount` (`None`: none) lets the customer
/// apply or remove a promotion code on its hosted checkout: only before its first payment (or
/// trial start), while it is Incomplete; a code applies to a membership with no coupon yet, and
/// only a coupon the customer gave (`by_customer`) is theirs to remove (the merchant's is the
/// merchant's). `Err` says why not, as the billing engine answers it (a conflict).
pub fn accepts_coupon(
    status: MembershipStatus,
    discount: Option<&Discount>,
    action: PromotionCode,
) -> Result<(), &'static str> {
    let first_payment = status == MembershipStatus::Incomplete;
    match action {
        PromotionCode::Apply if !first_payment => {
            Err("a promotion code applies to a first payment only")
        }
        PromotionCode::Apply if discount.is_some() => Err("the membership already has a coupon"),
        PromotionCode::Remove if !first_payment => {
            Err("a promotion code can be removed before the first payment only")
        }
        PromotionCode::Remove if !discount.is_some_and(|d| d.by_customer) => {
            Err("the membership has no promotion code of the customer's")
        }
        PromotionCode::Apply | PromotionCode::Remove => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategies::{any_instant, any_state};
    use super::*;
    use crate::coupon::{AppliedCoupon, CouponDuration, CouponOff};
    use crate::tax::Taxation;
    use proptest::prelude::*;

    fn discount(by_customer: bool) -> Discount {
        let coupon = AppliedCoupon {
            coupon_id: "cpn_1".into(),
            code: "SPRING".into(),
            off: CouponOff::AmountOff(500),
        };
        Discount {
            by_customer,
            ..Discount::new(coupon, CouponDuration::Once)
        }
    }

    #[test]
    fn an_active_membership_pauses_and_a_paused_one_takes_a_new_date() {
        assert_eq!(can_pause(MembershipStatus::Active), Ok(PauseRequest::Pause));
        assert_eq!(
            can_pause(MembershipStatus::Paused),
            Ok(PauseRequest::NewResumeDate)
        );
        assert_eq!(
            can_pause(MembershipStatus::PastDue),
            Err("a PastDue membership cannot be paused; only an Active one can".into())
        );
    }

    #[test]
    fn promotion_codes_before_the_first_payment() {
        use MembershipStatus::{Active, Incomplete};
        use PromotionCode::{Apply, Remove};
        let (theirs, merchants) = (discount(true), discount(false));
        assert_eq!(accepts_coupon(Incomplete, None, Apply), Ok(()));
        assert_eq!(
            accepts_coupon(Incomplete, Some(&merchants), Apply),
            Err("the membership already has a coupon")
        );
        assert_eq!(
            accepts_coupon(Active, None, Apply),
            Err("a promotion code applies to a first payment only")
        );
        assert_eq!(accepts_coupon(Incomplete, Some(&theirs), Remove), Ok(()));
        for none in [None, Some(&merchants)] {
            assert_eq!(
                accepts_coupon(Incomplete, none, Remove),
                Err("the membership has no promotion code of the customer's")
            );
        }
        assert_eq!(
            accepts_coupon(Active, Some(&theirs), Remove),
            Err("a promotion code can be removed before the first payment only")
        );
    }

    fn any_status() -> impl Strategy<Value = MembershipStatus> {
        prop::sample::select(MembershipStatus::ALL.to_vec())
    }

    proptest! {
        /// Exactly an Active membership is paused, exactly a Paused one takes a new date, and
        /// the rule agrees with the lifecycle's transition.
        #[test]
        fn can_pause_exactly_active_and_paused(status in any_status()) {
            let answer = can_pause(status);
            prop_assert_eq!(answer == Ok(PauseRequest::Pause), status == MembershipStatus::Active);
            prop_assert_eq!(
                answer == Ok(PauseRequest::NewResumeDate),
                status == MembershipStatus::Paused
            );
            prop_assert_eq!(
                answer == Ok(PauseRequest::Pause),
                transition(status, LifecycleEvent::Paused).is_ok()
            );
        }

        /// What the rule answers is what the membership's state does: a membership it says
        /// pauses pauses, and no other does.
        #[test]
        fn can_pause_says_what_a_pause_does(mut m in any_state(), at in any_instant()) {
            let asked = can_pause(m.status);
            let paused = m.pause(at, None, &Taxation::none());
            prop_assert_eq!(paused.is_ok(), asked == Ok(PauseRequest::Pause));
        }

        /// A code applies exactly to an Incomplete membership without a coupon, and is removed
        /// exactly from an Incomplete one whose coupon the customer gave.
        #[test]
        fn accepts_coupon_exactly_before_the_first_payment(
            status in any_status(),
            coupon in proptest::option::of(any::<bool>()),
        ) {
            let discount = coupon.map(discount);
            let incomplete = status == MembershipStatus::Incomplete;
            prop_assert_eq!(
                accepts_coupon(status, discount.as_ref(), PromotionCode::Apply).is_ok(),
                incomplete && discount.is_none()
            );
            prop_assert_eq!(
                accepts_coupon(status, discount.as_ref(), PromotionCode::Remove).is_ok(),
                incomplete && coupon == Some(true)
            );
        }
    }
}
