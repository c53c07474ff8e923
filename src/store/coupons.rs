//! The `coupons` table (DESIGN §15): a merchant's coupons, their terms fixed once created,
//! archivable (`active`), and how often each has been redeemed. Codes are stored uppercase and
//! unique per merchant, so they match in any letter case. Every query is scoped by merchant id.
//!
//! Whether a coupon can be redeemed is the domain's rule ([`recur_domain::coupon::redeemable`]);
//! [`redeem`] asks it of the coupon's row, locked, and counts the redemption with a statement
//! that checks the same condition again: concurrent redemptions never take a coupon past its
//! `max_redemptions`.

use chrono::{DateTime, Utc};
use recur_domain::coupon::{
    redeemable, AppliedCoupon, CouponDuration, CouponOff, Discount, RedemptionTerms,
};
use recur_domain::tax::parse_percentage;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Window};
use super::{from_micros, to_micros, Tx};

/// Why a code was not redeemed: the domain's, with its field error.
pub use recur_domain::coupon::Refusal;

/// A stored coupon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coupon {
    /// Internal id.
    pub id: i64,
    /// The merchant's id.
    pub merchant_id: i64,
    /// `cpn_…`.
    pub coupon_key: String,
    /// What customers type, uppercase.
    pub code: String,
    /// What it takes off.
    pub off: CouponOff,
    /// The currency of an amount off (ISO 4217, uppercase); `None` for a percentage.
    pub currency: Option<String>,
    /// How many period invoices it discounts.
    pub duration: CouponDuration,
    /// How many redemptions it allows; `None`: no limit.
    pub max_redemptions: Option<i64>,
    /// How many times it has been redeemed.
    pub times_redeemed: i64,
    /// From when it can no longer be redeemed (the merchant's time); `None`: never.
    pub expires_at: Option<DateTime<Utc>>,
    /// Archived coupons (`false`) cannot be redeemed.
    pub active: bool,
    /// Creation time (the merchant's).
    pub created_at: DateTime<Utc>,
}

impl Coupon {
    /// The coupon as an invoice names it.
    pub fn applied(&self) -> AppliedCoupon {
        AppliedCoupon {
            coupon_id: self.coupon_key.clone(),
            code: self.code.clone(),
            off: self.off,
        }
    }

    /// The discount a membership given this coupon starts with.
    pub fn discount(&self) -> Discount {
        Discount::new(self.applied(), self.duration)
    }

    /// The terms that decide whether it can be redeemed.
    pub fn redemption_terms(&self) -> RedemptionTerms<'_> {
        RedemptionTerms {
            active: self.active,
            expires_at: self.expires_at,
            currency: self.currency.as_deref(),
            max_redemptions: self.max_redemptions,
            times_redeemed: self.times_redeemed,
        }
    }
}

/// The terms of a new coupon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCoupon {
    /// `cpn_…`.
    pub coupon_key: String,
    /// Uppercase ([`recur_domain::coupon::code`]).
    pub code: String,
    /// What it takes off.
    pub off: CouponOff,
    /// The currency of an amount off; `None` for a percentage.
    pub currency: Option<String>,
    /// How many period invoices it discounts.
    pub duration: CouponDuration,
    /// How many redemptions it allows.
    pub max_redemptions: Option<i64>,
    /// When it expires.
    pub expires_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "c.id, c.merchant_id, c.coupon_key, c.code, c.percent_off, c.amount_off, \
     c.currency, c.duration, c.duration_in_cycles, c.max_redemptions, c.times_redeemed, \
     c.expires_at, c.active, c.created_at";

/// [`COLUMNS`] of the table itself, for `RETURNING`.
fn returning() -> String {
    format!("RETURNING {}", COLUMNS.replace("c.", ""))
}

fn decode(row: &AnyRow) -> Result<Coupon, sqlx::Error> {
    let invalid = |e: String| sqlx::Error::Decode(e.into());
    let percent: Option<String> = row.try_get("percent_off")?;
    let amount: Option<i64> = row.try_get("amount_off")?;
    let off = match (percent, amount) {
        (Some(p), None) => {
            CouponOff::PercentOff(parse_percentage(&p).map_err(|e| invalid(e.into()))?)
        }
        (None, Some(amount)) => CouponOff::AmountOff(amount),
        _ => {
            return Err(invalid(
                "a coupon takes a percentage or an amount off".into(),
            ))
        }
    };
    let duration: String = row.try_get("duration")?;
    let cycles: Option<i64> = row.try_get("duration_in_cycles")?;
    let duration = CouponDuration::parse(&duration, cycles).map_err(|(_, e)| invalid(e))?;
    Ok(Coupon {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        coupon_key: row.try_get("coupon_key")?,
        code: row.try_get("code")?,
        off,
        currency: row.try_get("currency")?,
        duration,
        max_redemptions: row.try_get("max_redemptions")?,
        times_redeemed: row.try_get("times_redeemed")?,
        expires_at: row
            .try_get::<Option<i64>, _>("expires_at")?
            .map(from_micros),
        active: row.try_get::<i64, _>("active")? == 1,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Stores a new active coupon of `merchant_id`, in one statement; `None` when the merchant
/// already has a coupon with its code (archived or not).
pub async fn insert<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    new: &NewCoupon,
    now: DateTime<Utc>,
) -> Result<Option<Coupon>, sqlx::Error> {
    let (percent_off, amount_off) = match new.off {
        CouponOff::PercentOff(p) => (Some(p.to_string()), None),
        CouponOff::AmountOff(amount) => (None, Some(amount)),
    };
    let sql = format!(
        "INSERT INTO coupons (merchant_id, coupon_key, code, percent_off, amount_off, currency, \
         duration, duration_in_cycles, max_redemptions, expires_at, active, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11) \
         ON CONFLICT (merchant_id, code) DO NOTHING {}",
        returning()
    );
    let cycles = match new.duration {
        CouponDuration::Repeating(n) => Some(i64::from(n)),
        CouponDuration::Once | CouponDuration::Forever => None,
    };
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(new.coupon_key.as_str())
        .bind(new.code.as_str())
        .bind(percent_off)
        .bind(amount_off)
        .bind(new.currency.as_deref())
        .bind(new.duration.as_str())
        .bind(cycles)
        .bind(new.max_redemptions)
        .bind(new.expires_at.map(to_micros))
        .bind(to_micros(now))
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's coupon with this key.
pub async fn by_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    coupon_key: &str,
) -> Result<Option<Coupon>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM coupons c WHERE c.merchant_id = $1 AND c.coupon_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(coupon_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's coupon with this code, in any letter case (for previews: nothing is
/// redeemed).
pub async fn by_code<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    code: &str,
) -> Result<Option<Coupon>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM coupons c WHERE c.merchant_id = $1 AND c.code = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(code.to_ascii_uppercase())
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// A page of the merchant's coupons, archived ones too, newest first ([`keyset`]).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    window: Window,
) -> Result<Vec<Coupon>, sqlx::Error> {
    let select = format!("SELECT {COLUMNS} FROM coupons c");
    let rows = keyset::page(
        executor,
        &select,
        "c",
        merchant_id,
        &Filters::default(),
        window,
    )
    .await?;
    rows.iter().map(decode).collect()
}

/// Archives (`false`) or restores the merchant's coupon, in one statement: the coupon as
/// changed, or `None` when the merchant has no such coupon.
pub async fn set_active<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    coupon_key: &str,
    active: bool,
) -> Result<Option<Coupon>, sqlx::Error> {
    let sql = format!(
        "UPDATE coupons SET active = $3 WHERE merchant_id = $1 AND coupon_key = $2 {}",
        returning()
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(coupon_key)
        .bind(i64::from(active))
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Redeems the merchant's coupon with `code` (any letter case) for a membership billed in
/// `currency` at `now` (the merchant's time): the coupon, counted once more, or why not.
///
/// One `SELECT` reads the coupon, locking its row on PostgreSQL (`FOR UPDATE`; SQLite has one
/// writer, and `tx` holds it from its start): no coupon with this code is unknown; for one, the
/// domain's rule decides ([`redeemable`]: archived, expired, for another currency, exhausted, in
/// that order). A redeemable coupon is counted by a conditional `UPDATE` that checks the same
/// condition on the row: concurrent redemptions queue on the row's lock and each reads the row as
/// the one before left it, so a coupon is never redeemed more than `max_redemptions` times; the
/// condition only guards that, and should it count nothing the code is refused as unknown. The
/// redemption commits or rolls back with `tx`.
pub async fn redeem(
    tx: &mut Tx,
    merchant_id: i64,
    code: &str,
    currency: &str,
    now: DateTime<Utc>,
) -> Result<Result<Coupon, Refusal>, sqlx::Error> {
    let currency = currency.to_ascii_uppercase();
    let lock = match super::Backend::of(tx) {
        super::Backend::Postgres => " FOR UPDATE",
        super::Backend::Sqlite => "",
    };
    let sql =
        format!("SELECT {COLUMNS} FROM coupons c WHERE c.merchant_id = $1 AND c.code = $2{lock}");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(code.to_ascii_uppercase())
        .fetch_optional(&mut **tx)
        .await?;
    let Some(coupon) = row.as_ref().map(decode).transpose()? else {
        return Ok(Err(Refusal::Unknown));
    };
    if let Err(refusal) = redeemable(&coupon.redemption_terms(), &currency, now) {
        return Ok(Err(refusal));
    }
    let counted = count_redemption(tx, &coupon, &currency, to_micros(now)).await?;
    Ok(counted.ok_or(Refusal::Unknown))
}

/// The conditional `UPDATE` of [`redeem`]: `coupon` counted once more, or `None` when its row
/// is not redeemable for `currency` at `now` (the condition of
/// [`redeemable`](recur_domain::coupon::redeemable), in SQL).
async fn count_redemption(
    tx: &mut Tx,
    coupon: &Coupon,
    currency: &str,
    now: i64,
) -> Result<Option<Coupon>, sqlx::Error> {
    let sql = format!(
        "UPDATE coupons SET times_redeemed = times_redeemed + 1 \
         WHERE merchant_id = $1 AND id = $2 AND active = 1 \
         AND (expires_at IS NULL OR expires_at > $3) \
         AND (max_redemptions IS NULL OR times_redeemed < max_redemptions) \
         AND (currency IS NULL OR currency = $4) {}",
        returning()
    );
    let row = sqlx::query(&sql)
        .bind(coupon.merchant_id)
        .bind(coupon.id)
        .bind(now)
        .bind(currency)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Gives back one redemption of the merchant's coupon `coupon_key` (an update that redeemed it
/// was declined, so it never applied).
pub async fn release(tx: &mut Tx, merchant_id: i64, coupon_key: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE coupons SET times_redeemed = times_redeemed - 1 \
         WHERE merchant_id = $1 AND coupon_key = $2 AND times_redeemed > 0",
    )
    .bind(merchant_id)
    .bind(coupon_key)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
