//! The interface documents (vendored in `docs/spec/`) read as data, for the payload tests: the
//! transaction notification table of the hosted-payment-page document with each field's
//! documented type, and the membership webhook fields of the subscription document. A field the
//! documents add, drop or retype shows up as a failing test.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

const HOSTED_PAGE: &str = include_str!("../../docs/spec/hosted-payment-page.md");
const SUBSCRIPTIONS: &str = include_str!("../../docs/spec/subscription-api.md");

/// The keys of a JSON object.
pub fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

/// The part of `doc` from the line after `heading` to the next `## ` heading.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    doc.split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("{heading} in the spec"))
        .split("\n## ")
        .next()
        .unwrap()
}

/// The rows of the notification table: name, type and notes cells.
fn notification_rows() -> Vec<(String, String, String)> {
    section(HOSTED_PAGE, "### Transaction notification payload")
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Field"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (cells[1].into(), cells[2].into(), cells[3].into())
        })
        .collect()
}

/// A table row's "Notes" list as names with their hint in parentheses, if any:
/// `MerchantId (integer), CreatedDate (ISO timestamp), FirstName`.
fn listed(notes: &str) -> BTreeMap<String, String> {
    let notes = notes.split_once(": ").map_or(notes, |(_, list)| list);
    let mut items = BTreeMap::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in notes.trim_end_matches('.').chars().chain([',']) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if (c == ',' || (c == ' ' && item.ends_with(" and"))) && depth == 0 {
            let text = item.trim().trim_end_matches(" and");
            if let Some((name, rest)) = text.split_once(' ') {
                items.insert(name.into(), rest.trim_matches(['(', ')']).into());
            } else if !text.is_empty() {
                items.insert(text.into(), String::new());
            }
            item.clear();
        } else {
            item.push(c);
        }
    }
    items
}

/// The notification table of the spec: top-level field names, the `AccountDetails` names and
/// the `AttemptsVector` item names.
pub fn notification_fields() -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let (mut top, mut account, mut attempt) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (name, _, notes) in notification_rows() {
        match name.as_str() {
            "CascadingInfo.AttemptsVector[]" => attempt = listed(&notes).into_keys().collect(),
            "AccountDetails" => {
                account = listed(&notes).into_keys().collect();
                top.insert(name);
            }
            _ => {
                top.insert(name);
            }
        }
    }
    (top, account, attempt)
}

/// Whether `value` has the documented `kind`: a type cell (`string (UUID)`, `integer`, `string,
/// nullable`) or a notes hint (`UUID`, `ISO timestamp`, `month/day/year text`, `nullable`).
fn has_kind(value: &Value, kind: &str) -> bool {
    if kind.contains("nullable") && value.is_null() {
        return true;
    }
    let text = value.as_str();
    match kind.trim_end_matches(", nullable") {
        "integer" => value.is_i64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        k if k.starts_with("array") => value.is_array(),
        "string (UUID)" | "UUID" => text.is_some_and(|t| uuid::Uuid::parse_str(t).is_ok()),
        "ISO timestamp" => text.is_some_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()),
        "ISO code" => text.is_some_and(|t| {
            (2..=3).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_uppercase())
        }),
        "month/day/year text" => {
            text.is_some_and(|t| chrono::NaiveDate::parse_from_str(t, "%m/%d/%Y").is_ok())
        }
        _ => value.is_string(),
    }
}

/// Asserts that every field of the notification `body` named in the spec's table has its
/// documented type, nested objects included. `nulls` are the paths (`ClientIP`,
/// `AccountDetails.Dob`, `CascadingInfo.SessionId`) the caller expects null: recur does not know
/// them for this payment. Every other field must be of its type, and null only where the
/// spec marks it nullable.
pub fn assert_documented_types(body: &Value, nulls: &[&str]) {
    let check = |path: &str, value: &Value, kind: &str| {
        if nulls.contains(&path) {
            assert!(value.is_null(), "{path} is null here, got {value}");
        } else {
            assert!(
                has_kind(value, kind),
                "{path} should be {kind}, got {value}"
            );
        }
    };
    for (name, kind, notes) in notification_rows() {
        if name == "CascadingInfo.AttemptsVector[]" {
            let attempts = body["CascadingInfo"]["AttemptsVector"].as_array().unwrap();
            assert!(!attempts.is_empty(), "at least the one attempt");
            for attempt in attempts {
                for (field, hint) in listed(&notes) {
                    let path = format!("CascadingInfo.AttemptsVector[].{field}");
                    check(&path, &attempt[&field], &hint);
                }
            }
            continue;
        }
        check(&name, &body[&name], &kind);
        if kind == "object" {
            for (field, hint) in listed(&notes) {
                check(&format!("{name}.{field}"), &body[&name][&field], &hint);
            }
        }
    }
}

/// Backticked names in `text`, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The subscription document's webhook fields: the common payload fields, the `Membership`
/// fields (of every payload; `Updates` only in updates), the membership statuses and the keys of
/// the `Updates` table.
pub struct MembershipSpec {
    pub common: Vec<String>,
    pub membership: Vec<String>,
    pub statuses: Vec<String>,
    pub updates: BTreeSet<String>,
}

/// Reads [`MembershipSpec`] from the subscription document.
pub fn membership_fields() -> MembershipSpec {
    let events = section(SUBSCRIPTIONS, "## Events");
    let line = |start: &str| {
        events
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{start} in the spec"))
    };
    let common = backticked(line("Common payload fields:"));
    let named = line("`Membership` fields named:");
    let (all, updates_only) = named.split_once("; for updates also").unwrap();
    assert_eq!(backticked(updates_only), ["Updates"]);
    let membership = backticked(all.split_once(':').unwrap().1);
    let table_rows = |text: &str, header: &str| -> Vec<String> {
        text.split(header)
            .nth(1)
            .unwrap()
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with("| "))
            .map(|l| l.split('|').nth(1).unwrap().trim().to_string())
            .collect()
    };
    let statuses = table_rows(
        section(SUBSCRIPTIONS, "## States and transitions"),
        "| Status |",
    );
    let updates = table_rows(events, "| Key | Meaning |")
        .into_iter()
        .collect();
    MembershipSpec {
        common,
        membership,
        statuses,
        updates,
    }
}

/// Whether `text` is a UTC time as recur writes it: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn is_utc_time(text: &str) -> bool {
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%SZ").is_ok()
}

/// Asserts the common fields of a delivered membership webhook `body` (any `Action`) and their
/// types as docs/webhooks.md "Events" states them, and returns its `Membership`.
pub fn assert_common_fields<'a>(spec: &MembershipSpec, body: &'a Value) -> &'a Value {
    for field in &spec.common {
        assert!(body.get(field).is_some(), "{field} in {body}");
    }
    let action = body["Action"].as_str().unwrap();
    assert!(
        [
            "SUBSCRIPTION_STATUS_CHANGED",
            "SUBSCRIPTION_UPDATED",
            "TRANSACTION_DATA_UPDATE"
        ]
        .contains(&action),
        "{action}"
    );
    assert!(uuid::Uuid::parse_str(body["ActionId"].as_str().unwrap()).is_ok());
    assert!(body["OrderId"].is_string());
    assert!(is_utc_time(body["IssuedAt"].as_str().unwrap()), "{body}");
    let signature = body["Signature"].as_str().unwrap();
    assert!(
        signature.len() == 64
            && signature
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{signature}"
    );
    let membership = &body["Membership"];
    for field in &spec.membership {
        assert!(
            membership.get(field).is_some(),
            "Membership.{field} in {action}"
        );
    }
    let id = membership["Id"].as_str().unwrap();
    let key = membership["Key"].as_str().unwrap();
    assert!(
        uuid::Uuid::parse_str(id).is_ok(),
        "Membership.Id is a UUID: {id}"
    );
    assert!(key.starts_with("mmbrshp_"), "{key}");
    assert_ne!(id, key, "Id and Key name the membership apart");
    assert!(membership["CustomerKey"]
        .as_str()
        .unwrap()
        .starts_with("cstmr_"));
    assert!(membership["Metadata"].is_string() || membership["Metadata"].is_null());
    let status = membership["Status"].as_str().unwrap();
    assert!(spec.statuses.iter().any(|s| s == status), "{status}");
    assert_eq!(
        membership.get("Updates").is_some(),
        action == "SUBSCRIPTION_UPDATED",
        "Updates only in updates"
    );
    membership
}
