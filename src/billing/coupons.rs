//! Coupons given to memberships (DESIGN §15): with `couponCode` on create and update, and as a
//! promotion code on the hosted checkout. A coupon is redeemed (counted against its limit) in
//! the transaction that gives it to the membership, so a request that fails counts nothing and
//! an order id that already exists redeems nothing. From then on the membership holds the
//! coupon's terms ([`recur_domain::coupon::Discount`]); the invoices apply them.

use chrono::{DateTime, Utc};
use recur_domain::coupon::Refusal;
use recur_domain::membership::{accepts_coupon, PromotionCode};

use super::followups::save;
use super::{locked, BillingError};
use crate::platform::Platform;
use crate::store::coupons;
use crate::store::customers::Created;
use crate::store::memberships::{
    self, ClockCondition, CreatedAt, Membership, NewMembership, NewRow,
};
use crate::store::Tx;

/// Creates the membership `new` of the customer `customer_key` with the coupon `code`, or
/// answers the customer's existing membership of the same order id (redeeming nothing, whatever
/// the code: a repeated create is answered as the first was). The coupon must be redeemable for
/// the membership's currency at `at`; a create that loses a race for the order id rolls its
/// redemption back.
pub async fn create_with_coupon(
    state: &Platform,
    mut new: NewMembership,
    customer_key: &str,
    at: CreatedAt,
    code: &str,
) -> Result<Result<(Membership, Created), Refusal>, BillingError> {
    let (merchant_id, order_id) = (new.merchant_id, new.order_id.clone());
    let existing = memberships::by_order(state.store.pool(), merchant_id, customer_key, &order_id);
    if let Some(existing) = existing.await? {
        return Ok(Ok((existing, Created::Existing)));
    }
    let mut tx = state.store.begin().await?;
    let coupon = match coupons::redeem(&mut tx, merchant_id, code, &new.currency, at.now).await? {
        Ok(coupon) => coupon,
        Err(refusal) => return Ok(Err(refusal)),
    };
    new.discount = Some(coupon.discount());
    let row = NewRow {
        membership: new,
        customer_key: customer_key.to_string(),
        at,
        condition: ClockCondition::Any,
    };
    if let Some(created) = memberships::insert_in(&mut tx, &row).await? {
        tx.commit().await?;
        return Ok(Ok((created, Created::New)));
    }
    tx.rollback().await?;
    let existing =
        memberships::by_order(state.store.writer(), merchant_id, customer_key, &order_id)
            .await?
            .ok_or(BillingError::NotFound)?;
    Ok(Ok((existing, Created::Existing)))
}

/// Redeems `code` for `m` in `tx` at `at` and gives it the coupon, replacing the one it had:
/// from its next period invoice on. `Err(Refusal)` when the code is not redeemable (nothing
/// counted).
pub async fn give(
    tx: &mut Tx,
    m: &mut Membership,
    code: &str,
    at: DateTime<Utc>,
) -> Result<Result<(), Refusal>, BillingError> {
    match coupons::redeem(tx, m.merchant_id, code, &m.currency, at).await? {
        Ok(coupon) => {
            m.state.discount = Some(coupon.discount());
            Ok(Ok(()))
        }
        Err(refusal) => Ok(Err(refusal)),
    }
}

/// The promotion code a customer typed on the hosted checkout of the membership `key`:
/// redeemed and given to it when it has no coupon yet and owes its first payment (or starts
/// its trial), as [`accepts_coupon`] says. A membership that already has a coupon, or has
/// nothing to pay, is a conflict.
pub async fn apply_at_checkout(
    state: &Platform,
    merchant_id: i64,
    key: &str,
    code: &str,
) -> Result<Result<Membership, Refusal>, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = locked(&mut tx, state, merchant_id, key).await?;
    accepts_coupon(
        m.state.status,
        m.state.discount.as_ref(),
        PromotionCode::Apply,
    )
    .map_err(|why| BillingError::Conflict(why.into()))?;
    if let Err(refusal) = give(&mut tx, &mut m, code, at).await? {
        return Ok(Err(refusal));
    }
    if let Some(discount) = m.state.discount.as_mut() {
        discount.by_customer = true;
    }
    save(&mut tx, &mut m, at).await?;
    tx.commit().await?;
    Ok(Ok(m))
}

/// Takes back the promotion code the customer applied on the hosted checkout of the membership
/// `key`, before paying: the membership loses the coupon and the coupon its redemption, so the
/// code (or another) can be applied again. Only an Incomplete membership with no payment in
/// flight whose coupon the customer gave ([`accepts_coupon`]); a coupon the merchant gave, or
/// none, is a conflict.
pub async fn remove_at_checkout(
    state: &Platform,
    merchant_id: i64,
    key: &str,
) -> Result<Membership, BillingError> {
    let at = state.merchant_now(merchant_id).await?;
    let mut tx = state.store.begin().await?;
    let mut m = locked(&mut tx, state, merchant_id, key).await?;
    accepts_coupon(
        m.state.status,
        m.state.discount.as_ref(),
        PromotionCode::Remove,
    )
    .map_err(|why| BillingError::Conflict(why.into()))?;
    if let Some(discount) = m.state.discount.take() {
        coupons::release(&mut tx, merchant_id, &discount.coupon.coupon_id).await?;
    }
    save(&mut tx, &mut m, at).await?;
    tx.commit().await?;
    Ok(m)
}
