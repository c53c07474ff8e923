//! The store calls behind each benchmarked API operation, made directly: the same statements
//! through the same pools and driver as a request, without HTTP, authentication, validation or
//! JSON. Their rate splits an API ratio in two: how much of the raw single-row rate the statement
//! itself reaches (the row's width, indexes and constraints) and how much of the statement's rate
//! the request reaches (the server's own work).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::Utc;
use recur::domain::calendar::{BillingCycle, IntervalType};
use recur::ids;
use recur::store::customers::{self, Created, NewCustomer};
use recur::store::memberships::{self, ClockCondition, CreatedAt, NewMembership};
use recur::store::Store;

/// One call of an operation, given the run's call number.
pub type Call = Box<dyn Fn(u64) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Whom the calls act for and on.
#[derive(Clone)]
pub struct Subject {
    /// The API's store.
    pub store: Store,
    /// The benchmark's merchant.
    pub merchant_id: i64,
    /// Its processor key.
    pub processor_key: String,
    /// Distinguishes this run's orders and e-mails from the API's.
    pub tag: String,
}

/// The n-th call's e-mail number when every third call repeats an e-mail stored before: the
/// e-mail of the call two before it, which was a new one.
pub fn repeating(n: u64) -> u64 {
    if n % 3 == 2 {
        n - 2
    } else {
        n
    }
}

/// `customers::create_or_get` with the e-mail numbered `email(n)` in call n, as create-customer
/// runs it: with [`std::convert::identity`] a new e-mail each call, with [`repeating`] a third of
/// them an existing customer's.
pub fn create_customer(subject: Subject, numbering: fn(u64) -> u64) -> Call {
    Box::new(move |n| {
        let s = subject.clone();
        Box::pin(async move {
            let m = numbering(n);
            let email = format!("statement-{}-{m}@example.com", s.tag);
            let customer = NewCustomer {
                processor_key: s.processor_key.clone(),
                first_name: "Bench".into(),
                last_name: "Mark".into(),
                email_identity: email.clone(),
                email,
                phone: "+4915112345678".into(),
                country_code: "DE".into(),
                address1: None,
                address2: None,
                city: None,
                state: None,
                zip_code: None,
                tax_ids: Vec::new(),
            };
            let key = ids::customer_key();
            let (_, created) =
                customers::create_or_get(&s.store, s.merchant_id, key, customer, Utc::now())
                    .await
                    .expect("create customer");
            // A new e-mail that a later call repeats may be stored by that call first.
            if m == n && numbering(n + 2) != n {
                assert_eq!(created, Created::New, "statement create-customer");
            }
        })
    })
}

/// `customers::get` over `keys`, as get-customer runs it.
pub fn get_customer(subject: Subject, keys: Arc<Vec<String>>) -> Call {
    Box::new(move |n| {
        let (s, keys) = (subject.clone(), keys.clone());
        Box::pin(async move {
            let key = &keys[(n as usize) % keys.len()];
            let found = customers::get(&s.store, s.merchant_id, key).await;
            assert!(
                found.expect("get customer").is_some(),
                "statement get-customer"
            );
        })
    })
}

/// `memberships::insert` for the customers `keys` in turn, as a valid create-membership runs it.
pub fn create_membership(subject: Subject, keys: Arc<Vec<String>>) -> Call {
    Box::new(move |n| {
        let (s, keys) = (subject.clone(), keys.clone());
        Box::pin(async move {
            let new = NewMembership {
                merchant_id: s.merchant_id,
                membership_key: ids::membership_key(),
                order_id: format!("statement-{}-{n}", s.tag),
                order_description: None,
                subscription_name: "Bench plan".into(),
                metadata: None,
                webhook_url: "https://merchant.example/hooks".into(),
                end_date: None,
                currency: "EUR".into(),
                total_amount: 2997,
                price_per_unit: Some(999),
                quantity: Some(3),
                cycle: BillingCycle {
                    interval_type: IntervalType::Monthly,
                    interval_count: 1,
                },
                charge_emitter_queue: None,
                tax_rates: Vec::new(),
                price_key: None,
                trial_days: None,
                discount: None,
                metered: Vec::new(),
            };
            let at = CreatedAt::new(Utc::now());
            let key = &keys[(n as usize) % keys.len()];
            let condition = ClockCondition::WithoutTestClock;
            let inserted = memberships::insert(&s.store, new, key, at, condition).await;
            assert!(
                inserted.expect("insert").is_some(),
                "statement create-membership"
            );
        })
    })
}

/// `memberships::get_with_invoices` over `keys`, as get-membership runs it.
pub fn get_membership(subject: Subject, keys: Arc<Vec<String>>) -> Call {
    Box::new(move |n| {
        let (s, keys) = (subject.clone(), keys.clone());
        Box::pin(async move {
            let key = &keys[(n as usize) % keys.len()];
            let found = memberships::get_with_invoices(&s.store, s.merchant_id, key).await;
            assert!(
                found.expect("get membership").is_some(),
                "statement get-membership"
            );
        })
    })
}
