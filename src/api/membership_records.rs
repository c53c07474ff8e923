//! The membership record every membership operation answers with, and its invoices.

use std::collections::HashMap;

use recur_domain::calendar::BillingCycle;
use recur_domain::coupon::Discount;
use recur_domain::money::{format_amount, Currency};
use recur_domain::price::Price;
use recur_domain::time::format_utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::invoice_records::{CouponRecord, CreditNoteRecord, InvoiceRecord};
use super::problem::ApiError;
use crate::state::AppState;
use crate::store::credit_notes;
use crate::store::invoices::{self, Invoice, RECENT_INVOICES};
use crate::store::memberships::Membership;

/// A `chargeEmitterQueue` item.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeEmitterItem {
    /// `Success` or `Rejected`.
    pub transaction_status: String,
    /// Decline message of a `Rejected` item.
    pub description: Option<String>,
}

/// `productInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductInfoRecord {
    /// The merchant's order id; unique per customer.
    pub order_id: String,
    /// Free text.
    pub description: Option<String>,
}

/// `pricingInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PricingInfoRecord {
    /// ISO 4217 code.
    pub currency: String,
    /// Price per period, decimal string.
    pub total_amount: String,
    /// Price per unit, decimal string, when given.
    pub price_per_unit: Option<String>,
    /// Quantity, when given.
    pub quantity: Option<i64>,
}

/// `billingCycle`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillingCycleRecord {
    /// Daily, Weekly, Monthly or Annually.
    pub interval_type: String,
    /// Units between charges, at least 1.
    pub interval_count: u32,
}

/// A membership as returned by every membership operation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MembershipRecord {
    /// `mmbrshp_` + 24 base62 characters.
    pub membership_key: String,
    /// Owning customer.
    pub customer_key: String,
    /// Display name.
    pub subscription_name: String,
    /// End date, UTC.
    pub end_date: Option<String>,
    /// Event endpoint.
    pub webhook_url: String,
    /// Merchant's free-form string.
    pub metadata: Option<String>,
    /// Where the customer is sent after an update.
    pub return_to_website_link: Option<String>,
    /// Sandbox outcomes of recurring attempts.
    pub charge_emitter_queue: Option<Vec<ChargeEmitterItem>>,
    /// The merchant's order.
    pub product_info: ProductInfoRecord,
    /// Price and currency.
    pub pricing_info: PricingInfoRecord,
    /// Renewal cycle.
    pub billing_cycle: BillingCycleRecord,
    /// Incomplete, Expired, Active, PastDue, Unpaid, Canceled or Completed; beyond the spec,
    /// Trialing (card saved, first charge at `trialEnd`) and Paused.
    pub status: String,
    /// Start of the current period.
    pub current_period_start: Option<String>,
    /// End of the current period.
    pub current_period_end: Option<String>,
    /// Next charge attempt.
    pub next_billing_date: Option<String>,
    /// Credit applied first at the next charges, decimal string.
    pub credit_balance: String,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// Cancellation time.
    pub canceled_at: Option<String>,
    /// The tax rates its next invoices bill with (`txr_…`), in order.
    pub tax_rate_ids: Vec<String>,
    /// The catalog price (`price_…`) its terms come from; `null` for inline `pricingInfo`.
    pub price_id: Option<String>,
    /// The free trial its checkout starts, in days; `null` without one.
    pub trial_days: Option<u32>,
    /// When its trial ends (or ended), once started.
    pub trial_end: Option<String>,
    /// Its coupon while the coupon still discounts invoices; `null` otherwise.
    pub discount: Option<DiscountRecord>,
    /// When a Paused membership resumes by itself; `null` when paused until resumed.
    pub resume_at: Option<String>,
    /// The change of terms the next renewal applies (`"effective": "nextPeriod"`).
    pub pending_update: Option<PendingUpdateRecord>,
    /// The metered prices (`price_…`) whose usage its renewals bill in arrears.
    pub metered_price_ids: Vec<String>,
    /// Latest invoices first.
    pub invoices: Vec<MembershipInvoiceRecord>,
}

/// A membership's coupon and how long it still discounts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscountRecord {
    /// The coupon.
    #[serde(flatten)]
    pub coupon: CouponRecord,
    /// Period invoices it still discounts; `null`: every one (`forever`).
    pub cycles_left: Option<u32>,
}

impl DiscountRecord {
    /// The record of `discount` on a membership billing in `currency`.
    pub fn new(discount: &Discount, currency: Currency) -> Self {
        DiscountRecord {
            coupon: CouponRecord::new(&discount.coupon, currency),
            cycles_left: discount.cycles_left,
        }
    }
}

/// Terms scheduled for the next period.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingUpdateRecord {
    /// The price from then on.
    pub pricing_info: PricingInfoRecord,
    /// The cycle from then on.
    pub billing_cycle: BillingCycleRecord,
    /// The catalog price they come from, if any.
    pub price_id: Option<String>,
    /// When it applies: the end of the current period (of a Paused membership, its `resumeAt`).
    pub effective_at: Option<String>,
}

/// `pricingInfo` of `price` in `currency`.
fn pricing_info(price: Price, currency: Currency) -> PricingInfoRecord {
    PricingInfoRecord {
        currency: currency.code().to_string(),
        total_amount: format_amount(price.total, currency),
        price_per_unit: price.per_unit.map(|p| format_amount(p, currency)),
        quantity: price.quantity,
    }
}

/// `billingCycle` of `cycle`.
fn billing_cycle(cycle: BillingCycle) -> BillingCycleRecord {
    BillingCycleRecord {
        interval_type: cycle.interval_type.as_str().into(),
        interval_count: cycle.interval_count,
    }
}

/// An invoice of a membership record, with its credit notes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MembershipInvoiceRecord {
    /// The invoice's amounts, lines and times.
    #[serde(flatten)]
    pub invoice: InvoiceRecord,
    /// Its credit notes, oldest first, as `GET /invoice/{invoiceKey}` lists them.
    pub credit_notes: Vec<CreditNoteRecord>,
}

/// The credit notes of the invoices membership records show, by invoice id, their PDF links
/// signed when read.
#[derive(Debug, Default)]
pub struct CreditNotes(HashMap<i64, Vec<CreditNoteRecord>>);

impl CreditNotes {
    /// The credit notes of the merchant's `invoices`, in one statement.
    pub async fn of<'a>(
        state: &AppState,
        merchant_id: i64,
        invoices: impl IntoIterator<Item = &'a Invoice>,
    ) -> Result<Self, ApiError> {
        let ids: Vec<i64> = invoices.into_iter().map(|i| i.id).collect();
        let found = credit_notes::of_invoices(state.store.pool(), merchant_id, &ids).await?;
        let now = state.clock.now();
        let mut records = HashMap::with_capacity(found.len());
        for (invoice_id, notes) in found {
            let notes = notes
                .iter()
                .map(|note| CreditNoteRecord::of(state, note, now))
                .collect::<Result<Vec<_>, _>>()?;
            records.insert(invoice_id, notes);
        }
        Ok(Self(records))
    }

    /// Those of the invoice `invoice_id`, taken out.
    fn take(&mut self, invoice_id: i64) -> Vec<CreditNoteRecord> {
        self.0.remove(&invoice_id).unwrap_or_default()
    }
}

impl MembershipRecord {
    /// The record of `m` with its recent invoices and their credit notes (taken from `notes`).
    pub fn new(m: &Membership, invoices: &[Invoice], notes: &mut CreditNotes) -> Self {
        let currency = m.currency();
        MembershipRecord {
            membership_key: m.membership_key.clone(),
            customer_key: m.customer_key.clone(),
            subscription_name: m.subscription_name.clone(),
            end_date: m.state.end_date.map(format_utc),
            webhook_url: m.webhook_url.clone(),
            metadata: m.metadata.clone(),
            return_to_website_link: m.return_to_website_link.clone(),
            charge_emitter_queue: m.state.charge_emitter_queue.as_ref().map(|queue| {
                queue
                    .iter()
                    .map(|d| ChargeEmitterItem {
                        transaction_status: if d.succeed { "Success" } else { "Rejected" }.into(),
                        description: (!d.succeed).then(|| d.description.clone()),
                    })
                    .collect()
            }),
            product_info: ProductInfoRecord {
                order_id: m.order_id.clone(),
                description: m.order_description.clone(),
            },
            pricing_info: pricing_info(m.state.price, currency),
            billing_cycle: billing_cycle(m.state.cycle),
            status: m.state.status.as_str().into(),
            current_period_start: m.state.current_period.map(|p| format_utc(p.start)),
            current_period_end: m.state.current_period.map(|p| format_utc(p.end)),
            next_billing_date: m.state.next_billing_date().map(format_utc),
            credit_balance: format_amount(m.state.credit_balance, currency),
            created_at: format_utc(m.created_at),
            updated_at: format_utc(m.updated_at),
            canceled_at: m.state.canceled_at.map(format_utc),
            tax_rate_ids: m.tax_rates.iter().map(|r| r.tax_rate_id.clone()).collect(),
            price_id: m.price_key.clone(),
            metered_price_ids: m.metered.iter().map(|t| t.price_key.clone()).collect(),
            trial_days: m.state.trial_days,
            trial_end: m.state.trial_end.map(format_utc),
            discount: m
                .state
                .discount
                .as_ref()
                .map(|d| DiscountRecord::new(d, currency)),
            resume_at: m.state.resume_at.map(format_utc),
            pending_update: m
                .state
                .scheduled
                .as_ref()
                .map(|change| PendingUpdateRecord {
                    pricing_info: pricing_info(change.price, currency),
                    billing_cycle: billing_cycle(change.cycle),
                    price_id: change.price_key.clone(),
                    effective_at: m.state.scheduled_change_at().map(format_utc),
                }),
            invoices: invoices
                .iter()
                .map(|invoice| MembershipInvoiceRecord {
                    invoice: InvoiceRecord::from(invoice),
                    credit_notes: notes.take(invoice.id),
                })
                .collect(),
        }
    }
}

/// Reads the record of a membership (with its recent invoices) after a change.
pub async fn record_of(state: &AppState, m: &Membership) -> Result<MembershipRecord, ApiError> {
    let invoices = invoices::recent(state.store.pool(), m.id, RECENT_INVOICES).await?;
    let mut notes = CreditNotes::of(state, m.merchant_id, &invoices).await?;
    Ok(MembershipRecord::new(m, &invoices, &mut notes))
}
