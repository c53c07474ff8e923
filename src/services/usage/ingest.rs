//! Taking usage events (`POST /usage-events`, DESIGN §19): up to [`MAX_EVENTS`] a request,
//! valid as a whole or refused as a whole, each `transactionId` counted once per merchant,
//! forever.
//!
//! A request is checked field by field with three statements (its memberships by key and by
//! customer, and which of its meter codes are archived), then written in one transaction: the
//! events under their `(merchant, transactionId)` key, which decides which are new, then each
//! new event added to its period's total under that total's row lock. An event is refused when
//! its period has been invoiced already (before its membership's current period, or a period an
//! invoice billed while the request was on its way), when it falls in a pause, or when its meter
//! is archived; a repeat of an event accepted before is a duplicate even then, so that a retry
//! of an accepted request always answers.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use recur_domain::membership::parse_end_date;
use recur_domain::status::MembershipStatus;
use recur_domain::usage::meter::{self as meter_rules, Aggregation};
use recur_domain::usage::totals::Totals;
use recur_domain::usage::value::{numeric_value, unique_key};
use recur_domain::usage::MeteredTerm;
use recur_domain::validation::FieldErrors;
use rust_decimal::Decimal;

use crate::http::input::{prefixed, Field};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::memberships::metered::{self, MeteredMembership};
use crate::store::meters;
use crate::store::usage::{self, NewEvent, PeriodKey};

/// The most events one request carries.
pub const MAX_EVENTS: usize = 1000;
/// The longest `transactionId`.
pub const MAX_TRANSACTION_ID_CHARS: usize = 255;
/// How far ahead of the merchant's time an event's `timestamp` may be.
pub const MAX_AHEAD: Duration = Duration::minutes(5);

/// One usage event as given.
#[derive(Debug, Default)]
pub struct EventInput {
    /// The merchant's id of the event, counted once.
    pub transaction_id: Field<String>,
    /// The membership it is for (`mmbrshp_…`), or
    pub membership_key: Field<String>,
    /// the customer (`cstmr_…`) whose one membership with the meter it is for.
    pub customer_key: Field<String>,
    /// The meter's code.
    pub code: Field<String>,
    /// When it happened (UTC `YYYY-MM-DDTHH:mm:ss`); the merchant's time when absent.
    pub timestamp: Field<String>,
    /// The event's properties: the meter's property among them.
    pub properties: Field<serde_json::Map<String, serde_json::Value>>,
}

/// What a request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingested {
    /// Events stored and counted now.
    pub accepted: usize,
    /// Events whose transaction id was counted before (or earlier in the request).
    pub duplicates: usize,
}

/// An event that passed every check of its own.
struct Checked {
    /// Its index in the request.
    index: usize,
    transaction_id: String,
    key: PeriodKey,
    at: DateTime<Utc>,
    aggregation: Aggregation,
    value: Option<Decimal>,
    unique: Option<String>,
    /// Why its time takes no new event (a period already invoiced, a pause): only a duplicate
    /// may be that.
    late: Option<&'static str>,
    /// Its meter is archived: only a duplicate may be that.
    archived: bool,
}

/// An event's membership reference: by membership or by customer.
enum Owner {
    Membership(String),
    Customer(String),
}

/// Stores the merchant's usage `events`: how many were new and how many repeated; every
/// failing field of a refused request is listed under `events[i]`, and nothing is stored.
pub async fn ingest(
    state: &AppState,
    merchant_id: i64,
    events: Field<Vec<Field<EventInput>>>,
) -> Result<Ingested, ServiceError> {
    let mut errors = FieldErrors::new();
    let Some(events) = events.required("events", &mut errors) else {
        return Err(ServiceError::Validation(errors));
    };
    if events.is_empty() || events.len() > MAX_EVENTS {
        errors.add("events", format!("must hold 1 to {MAX_EVENTS} events"));
        return Err(ServiceError::Validation(errors));
    }
    let now = state.merchant_now(merchant_id).await?;
    let shaped: Vec<Option<Shaped>> = events
        .into_iter()
        .enumerate()
        .map(|(i, event)| shape(i, event, now, &mut errors))
        .collect();
    let memberships = owners(state, merchant_id, &shaped).await?;
    let mut checked = Vec::with_capacity(shaped.len());
    for (index, event) in shaped.into_iter().enumerate() {
        if let Some(event) = event {
            if let Some(c) = check(index, event, &memberships, &mut errors) {
                checked.push(c);
            }
        }
    }
    if !errors.is_empty() {
        // Refused anyway: an event in an invoiced period or a pause, or of an archived meter,
        // is named too (alone, a repeat of one taken before would be a duplicate).
        for event in &checked {
            refuse_new(event, &mut errors);
        }
        return Err(ServiceError::Validation(errors));
    }
    let total = checked.len();
    // A transaction id repeated within the request counts once: its first event.
    let mut seen = HashSet::with_capacity(total);
    checked.retain(|c| seen.insert(c.transaction_id.clone()));
    checked.sort_by(|a, b| a.transaction_id.cmp(&b.transaction_id));
    let accepted = write(state, merchant_id, &checked, now).await?;
    Ok(Ingested {
        accepted,
        duplicates: total - accepted,
    })
}

/// An event whose fields each have their form.
struct Shaped {
    transaction_id: String,
    owner: Owner,
    code: String,
    at: DateTime<Utc>,
    properties: serde_json::Map<String, serde_json::Value>,
}

/// Event `i`'s fields by the rules that need nothing stored.
fn shape(
    i: usize,
    event: Field<EventInput>,
    now: DateTime<Utc>,
    errors: &mut FieldErrors,
) -> Option<Shaped> {
    let path = format!("events[{i}]");
    let event = event.required(&path, errors)?;
    let field = |name: &str| format!("{path}.{name}");
    let transaction_id = event
        .transaction_id
        .required(&field("transactionId"), errors)
        .and_then(|id| errors.check(&field("transactionId"), transaction_id(&id)));
    let owner = match (event.membership_key, event.customer_key) {
        (membership @ Field::Present(_), Field::Absent | Field::Null) => membership
            .required(&field("membershipKey"), errors)
            .and_then(|k| errors.check(&field("membershipKey"), prefixed(&k, "mmbrshp_")))
            .map(Owner::Membership),
        (Field::Absent | Field::Null, customer @ Field::Present(_)) => customer
            .required(&field("customerKey"), errors)
            .and_then(|k| errors.check(&field("customerKey"), prefixed(&k, "cstmr_")))
            .map(Owner::Customer),
        (Field::Present(_), Field::Present(_)) => {
            errors.add(field("customerKey"), "must be absent with membershipKey");
            None
        }
        (membership, customer) => {
            if let Field::Invalid(message) = membership {
                errors.add(field("membershipKey"), message);
            } else if let Field::Invalid(message) = customer {
                errors.add(field("customerKey"), message);
            } else {
                errors.add(field("membershipKey"), "is required (or customerKey)");
            }
            None
        }
    };
    let code = event
        .code
        .required(&field("code"), errors)
        .and_then(|c| errors.check(&field("code"), meter_rules::meter_code(&c)));
    let at = match event.timestamp.optional(&field("timestamp"), errors) {
        Some(text) => {
            let at = parse_end_date(&text).and_then(|at| {
                if at > now + MAX_AHEAD {
                    Err("must be at most 5 minutes ahead of the merchant's time".into())
                } else {
                    Ok(at)
                }
            });
            errors.check(&field("timestamp"), at)
        }
        None => Some(now),
    };
    let properties = event
        .properties
        .optional(&field("properties"), errors)
        .unwrap_or_default();
    Some(Shaped {
        transaction_id: transaction_id?,
        owner: owner?,
        code: code?,
        at: at?,
        properties,
    })
}

/// `transactionId`: 1 to [`MAX_TRANSACTION_ID_CHARS`] characters, no control characters.
fn transaction_id(id: &str) -> Result<String, String> {
    if id.is_empty() || id.chars().count() > MAX_TRANSACTION_ID_CHARS {
        return Err(format!(
            "must be 1 to {MAX_TRANSACTION_ID_CHARS} characters"
        ));
    }
    if id.chars().any(char::is_control) {
        return Err("must hold no control characters".into());
    }
    Ok(id.to_string())
}

/// The memberships the events name, by membership key and by customer key, and the codes they
/// name of archived meters, in three statements.
struct Owners {
    by_key: HashMap<String, MeteredMembership>,
    by_customer: HashMap<String, Vec<MeteredMembership>>,
    archived: HashSet<String>,
}

async fn owners(
    state: &AppState,
    merchant_id: i64,
    events: &[Option<Shaped>],
) -> Result<Owners, ServiceError> {
    let mut keys: Vec<&str> = Vec::new();
    let mut customers: Vec<&str> = Vec::new();
    let mut codes: Vec<&str> = Vec::new();
    for event in events.iter().flatten() {
        codes.push(&event.code);
        match &event.owner {
            Owner::Membership(key) => keys.push(key),
            Owner::Customer(key) => customers.push(key),
        }
    }
    keys.sort_unstable();
    keys.dedup();
    customers.sort_unstable();
    customers.dedup();
    codes.sort_unstable();
    codes.dedup();
    let pool = state.store.pool();
    let by_key = metered::by_keys(pool, merchant_id, &keys).await?;
    let of_customers = metered::of_customers(pool, merchant_id, &customers).await?;
    let archived = meters::archived_codes(pool, merchant_id, &codes).await?;
    let mut by_customer: HashMap<String, Vec<MeteredMembership>> = HashMap::new();
    for m in of_customers {
        by_customer
            .entry(m.customer_key.clone())
            .or_default()
            .push(m);
    }
    Ok(Owners {
        by_key: by_key
            .into_iter()
            .map(|m| (m.membership_key.clone(), m))
            .collect(),
        by_customer,
        archived,
    })
}

/// Event `index` against its membership and meter.
fn check(
    index: usize,
    event: Shaped,
    owners: &Owners,
    errors: &mut FieldErrors,
) -> Option<Checked> {
    let field = |name: &str| format!("events[{index}].{name}");
    let carries = |m: &MeteredMembership| m.metered.iter().any(|t| t.meter_code == event.code);
    let membership = match &event.owner {
        Owner::Membership(key) => match owners.by_key.get(key) {
            None => {
                errors.add(
                    field("membershipKey"),
                    "does not match a membership of this merchant",
                );
                return None;
            }
            Some(m) if !carries(m) => {
                errors.add(
                    field("code"),
                    "is not the code of a meter the membership's metered prices bill",
                );
                return None;
            }
            Some(m) => m,
        },
        Owner::Customer(key) => {
            let mut with_meter = owners
                .by_customer
                .get(key)
                .into_iter()
                .flatten()
                .filter(|m| carries(m));
            match (with_meter.next(), with_meter.next()) {
                (Some(one), None) => one,
                (None, _) => {
                    errors.add(
                        field("customerKey"),
                        "has no membership whose metered prices bill this code's meter",
                    );
                    return None;
                }
                (Some(_), Some(_)) => {
                    errors.add(
                        field("customerKey"),
                        "has several memberships billing this code's meter: give membershipKey",
                    );
                    return None;
                }
            }
        }
    };
    let term: &MeteredTerm = membership
        .metered
        .iter()
        .find(|t| t.meter_code == event.code)?;
    let Some(period) = membership.period else {
        let path = match event.owner {
            Owner::Membership(_) => field("membershipKey"),
            Owner::Customer(_) => field("customerKey"),
        };
        errors.add(&path, "names a membership that has no billing period yet");
        return None;
    };
    let ended = matches!(
        membership.status,
        MembershipStatus::Canceled | MembershipStatus::Completed | MembershipStatus::Expired
    );
    // An event past the period's end belongs to the next period, which the pending renewal
    // starts; one before the period's start to a period already invoiced.
    let start = if event.at >= period.end {
        period.end
    } else {
        period.start
    };
    // A paused membership's period ended at the pause: an event after it falls in the pause.
    let paused = membership.status == MembershipStatus::Paused && event.at >= period.end;
    let late = if ended || event.at < period.start {
        Some(INVOICED)
    } else if paused {
        Some(PAUSED)
    } else {
        None
    };
    let (value, unique) = match (&term.property, term.aggregation) {
        (_, Aggregation::Count) | (None, _) => (None, None),
        (Some(property), aggregation) => {
            let path = format!("events[{index}].properties.{property}");
            let Some(given) = event.properties.get(property) else {
                errors.add(&path, "is required by the meter");
                return None;
            };
            if aggregation == Aggregation::UniqueCount {
                (None, Some(errors.check(&path, unique_key(given))?))
            } else {
                (Some(errors.check(&path, numeric_value(given))?), None)
            }
        }
    };
    Some(Checked {
        index,
        transaction_id: event.transaction_id,
        key: PeriodKey::new(membership.id, term.meter_id, start),
        at: event.at,
        aggregation: term.aggregation,
        value,
        unique,
        late,
        archived: owners.archived.contains(&event.code),
    })
}

/// The message of an event in a period already invoiced.
const INVOICED: &str = "is inside a period already invoiced";

/// The message of an event during a pause.
const PAUSED: &str = "is inside a pause: a paused membership takes no usage";

/// The message of an event of an archived meter.
const ARCHIVED: &str = "names an archived meter, which takes no events";

/// Adds to `errors` why `event` may only be a duplicate (in an invoiced period or a pause, of an
/// archived meter), if it is one of those.
fn refuse_new(event: &Checked, errors: &mut FieldErrors) {
    if let Some(refusal) = event.late {
        errors.add(format!("events[{}].timestamp", event.index), refusal);
    }
    if event.archived {
        errors.add(format!("events[{}].code", event.index), ARCHIVED);
    }
}

/// Writes `events` (distinct transaction ids, sorted) in one transaction: how many were new.
async fn write(
    state: &AppState,
    merchant_id: i64,
    events: &[Checked],
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let rows: Vec<NewEvent<'_>> = events
        .iter()
        .map(|e| NewEvent {
            transaction_id: &e.transaction_id,
            key: e.key,
            occurred_at: e.at,
            value: e.value.map(|v| v.to_string()).or_else(|| e.unique.clone()),
        })
        .collect();
    let mut tx = state.store.begin().await?;
    let new = usage::insert_events(&mut tx, merchant_id, &rows, now).await?;
    let fresh: Vec<&Checked> = events
        .iter()
        .filter(|e| new.contains(&e.transaction_id))
        .collect();
    let mut refused = FieldErrors::new();
    for event in &fresh {
        refuse_new(event, &mut refused);
    }
    if !refused.is_empty() {
        return Err(ServiceError::Validation(refused));
    }
    let mut deltas: BTreeMap<PeriodKey, Totals> = BTreeMap::new();
    let mut uniques: Vec<(PeriodKey, String)> = Vec::new();
    let mut in_request: HashSet<(PeriodKey, &str)> = HashSet::new();
    let mut by_index: Vec<&Checked> = fresh.clone();
    // Totals add events in the order the merchant sent them (ties of `latest` go to the later).
    by_index.sort_by_key(|e| e.index);
    for event in by_index {
        let delta = deltas.entry(event.key).or_default();
        delta.add(event.value, event.at.timestamp());
        if let (Aggregation::UniqueCount, Some(value)) = (event.aggregation, &event.unique) {
            if in_request.insert((event.key, value.as_str())) {
                uniques.push((event.key, value.clone()));
            }
        }
    }
    uniques.sort();
    let distinct = usage::insert_unique_values(&mut tx, &uniques).await?;
    let keys: Vec<PeriodKey> = deltas.keys().copied().collect();
    let locked = usage::lock_totals(&mut tx, &keys, false).await?;
    let billed: HashSet<PeriodKey> = locked.iter().filter(|t| t.billed).map(|t| t.key).collect();
    for event in fresh.iter().filter(|e| billed.contains(&e.key)) {
        refused.add(format!("events[{}].timestamp", event.index), INVOICED);
    }
    if !refused.is_empty() {
        return Err(ServiceError::Validation(refused));
    }
    let merged: Vec<(PeriodKey, Totals)> = locked
        .into_iter()
        .map(|stored| {
            let mut totals = stored.totals;
            if let Some(delta) = deltas.get(&stored.key) {
                totals.merge(delta);
            }
            totals.add_unique(distinct.get(&stored.key).copied().unwrap_or(0));
            (stored.key, totals)
        })
        .collect();
    usage::write_totals(&mut tx, &merged).await?;
    tx.commit().await?;
    Ok(fresh.len())
}
