//! Lists a page at a time (DESIGN §10): the query string of a list request, the parameters every
//! list takes (`limit`, `cursor`) and the cursor, for the API and the dashboard alike.
//!
//! A list is read newest first, from where the previous page ended ([`crate::store::keyset`]).
//! The cursor that says where is opaque and tamper-proof: it is the last row's id, masked, and an
//! HMAC-SHA256 tag (keyed from the server key, [`ServerKeys::cursor_key`]) over that id, the list,
//! the merchant and the list's filters. A cursor recur did not make, one altered in any bit, or
//! one of another merchant, another list or other filters fails the tag (compared in constant
//! time) and is a 400 on `cursor`; the id inside cannot be read.

use std::collections::BTreeMap;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::Response;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use recur_domain::validation::FieldErrors;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;
use sha2::Sha256;
use utoipa::IntoParams;

use super::input::Field;
use super::problem;
use crate::keys::ServerKeys;
use crate::store::keyset::Window;

/// Records on a page when `limit` is absent.
pub const DEFAULT_LIMIT: i64 = 20;

/// The largest `limit`.
pub const MAX_LIMIT: i64 = 100;

/// The query parameters of a list request read into `T`, whose fields are [`Field<Given>`]:
/// parameters `T` does not name are ignored; one given twice is [`Field::Invalid`].
#[derive(Debug)]
pub struct ListQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ListQuery<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Self::parse(parts.uri.query().unwrap_or_default()).map_err(|e| problem::internal(&e))
    }
}

impl<T: DeserializeOwned> ListQuery<T> {
    /// `query`, a URL's query string, read as the extractor reads a request's.
    pub fn parse(query: &str) -> anyhow::Result<Self> {
        let mut params = serde_json::Map::new();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = match params.remove(name.as_ref()) {
                None => Value::String(value.into_owned()),
                Some(_) => Value::Array(Vec::new()),
            };
            params.insert(name.into_owned(), value);
        }
        T::deserialize(Value::Object(params))
            .map(ListQuery)
            .map_err(|e| anyhow::anyhow!("reading a list query: {e}"))
    }
}

/// A query parameter's text, when it was given once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given(pub String);

impl<'de> Deserialize<'de> for Given {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Given(text)),
            _ => Err(D::Error::custom("must be given once")),
        }
    }
}

/// The text of an optional parameter: `None` when absent; a 400 on `name` when given empty or
/// more than once.
pub fn text(param: Field<Given>, name: &str, errors: &mut FieldErrors) -> Option<String> {
    let Given(text) = param.optional(name, errors)?;
    if text.is_empty() {
        errors.add(name, "must not be empty when given");
        return None;
    }
    Some(text)
}

/// The value of an optional `true|false` parameter (`active`): `None` when absent; a 400 on
/// `name` when it is anything else.
pub fn flag(param: Field<Given>, name: &str, errors: &mut FieldErrors) -> Option<bool> {
    match text(param, name, errors)?.as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => {
            errors.add(name, "must be true or false");
            None
        }
    }
}

/// The parameters every list takes.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// How many records the page holds: an integer from 1 to 100; 20 when absent.
    #[serde(default)]
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    limit: Field<Given>,
    /// The `nextCursor` of the previous page, for the page after it (same list, same filters);
    /// the newest records when absent.
    #[serde(default)]
    #[param(value_type = Option<String>, min_length = 1)]
    cursor: Field<Given>,
}

impl PageParams {
    /// The page asked for, in `scope`. The errors found so far (the list's filters) come in;
    /// with any, or any here, the answer is the 400 listing them all. A cursor is judged only
    /// against valid filters, so a bad filter is not also reported as a foreign cursor.
    pub fn read(
        self,
        keys: &ServerKeys,
        scope: ListScope,
        mut errors: FieldErrors,
    ) -> Result<PageAsk<'_>, FieldErrors> {
        let limit = match text(self.limit, "limit", &mut errors) {
            None => Some(DEFAULT_LIMIT),
            Some(text) => errors.check("limit", parse_limit(&text)),
        };
        let cursor = text(self.cursor, "cursor", &mut errors);
        let before = match cursor {
            Some(cursor) if errors.is_empty() => errors.check(
                "cursor",
                open(keys, &scope, &cursor).map(Some).ok_or_else(|| {
                    "is not a cursor of this list: pass the nextCursor of the previous page, \
                     with the same filters"
                        .to_string()
                }),
            ),
            _ => Some(None),
        };
        match (limit, before) {
            (Some(limit), Some(before)) if errors.is_empty() => Ok(PageAsk {
                keys,
                scope,
                limit,
                before,
            }),
            _ => Err(errors),
        }
    }
}

/// `limit`: a decimal integer from 1 to [`MAX_LIMIT`], written plainly (no sign, no leading zero).
fn parse_limit(text: &str) -> Result<i64, String> {
    let plain = !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
    text.parse::<i64>()
        .ok()
        .filter(|n| plain && (1..=MAX_LIMIT).contains(n))
        .ok_or_else(|| format!("must be an integer from 1 to {MAX_LIMIT}"))
}

/// What a cursor is good for: one list of one merchant, with one set of filters (in the form
/// the list compares them: an e-mail's identity, a prefix's key).
#[derive(Debug, Clone)]
pub struct ListScope(String);

impl ListScope {
    /// The list `list` of `merchant_id` with the filters given (`None`: not filtered by it).
    pub fn new(list: &str, merchant_id: i64, filters: &[(&str, Option<&str>)]) -> Self {
        let filters: BTreeMap<&str, &str> = filters
            .iter()
            .filter_map(|(name, value)| value.map(|v| (*name, v)))
            .collect();
        let mut text = url::form_urlencoded::Serializer::new(String::new());
        text.append_pair("list", list)
            .append_pair("merchant", &merchant_id.to_string())
            .extend_pairs(filters);
        Self(text.finish())
    }
}

/// A valid page request: its scope, size and starting point.
#[derive(Debug)]
pub struct PageAsk<'k> {
    keys: &'k ServerKeys,
    scope: ListScope,
    limit: i64,
    before: Option<i64>,
}

impl PageAsk<'_> {
    /// The rows to read: one more than the page holds, which tells whether another page follows.
    pub fn window(&self) -> Window {
        Window {
            before: self.before,
            rows: self.limit + 1,
        }
    }

    /// The page's rows out of those read with [`PageAsk::window`] (`id` giving each row's id),
    /// and the cursor of the next page when there is one.
    pub fn cut<R>(&self, mut rows: Vec<R>, id: impl Fn(&R) -> i64) -> (Vec<R>, Option<String>) {
        let page = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let more = rows.len() > page;
        rows.truncate(page);
        let next = rows
            .last()
            .filter(|_| more)
            .map(|last| seal(self.keys, &self.scope, id(last)));
        (rows, next)
    }
}

/// Bytes of the tag a cursor carries (HMAC-SHA256 cut to 128 bits).
const TAG_BYTES: usize = 16;

/// The cursor after the row `id` of `scope`: base64url of the masked id and the tag.
pub fn seal(keys: &ServerKeys, scope: &ListScope, id: i64) -> String {
    let tag = tag(keys, scope, id).finalize().into_bytes();
    let tag = &tag[..TAG_BYTES];
    let mut bytes = masked(keys, tag, id).to_vec();
    bytes.extend_from_slice(tag);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The row id a cursor of `scope` carries, or `None` when recur did not make it for `scope`.
fn open(keys: &ServerKeys, scope: &ListScope, cursor: &str) -> Option<i64> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    if bytes.len() != 8 + TAG_BYTES {
        return None;
    }
    let (masked_id, given_tag) = bytes.split_at(8);
    let mask = masked(keys, given_tag, 0);
    let id = i64::from_be_bytes(std::array::from_fn(|i| masked_id[i] ^ mask[i]));
    tag(keys, scope, id).verify_truncated_left(given_tag).ok()?;
    Some(id)
}

/// The MAC over a cursor's meaning: its scope and row id.
fn tag(keys: &ServerKeys, scope: &ListScope, id: i64) -> Hmac<Sha256> {
    let mut mac = mac(keys, b"recur list cursor tag\0");
    mac.update(scope.0.as_bytes());
    mac.update(&id.to_be_bytes());
    mac
}

/// `id` masked with a key stream drawn from the tag (a deterministic, SIV-like encryption: the
/// tag authenticates the id, the mask hides it). Masking twice unmasks: with `id` 0 it is the
/// mask itself.
fn masked(keys: &ServerKeys, tag: &[u8], id: i64) -> [u8; 8] {
    let mut mac = mac(keys, b"recur list cursor mask\0");
    mac.update(tag);
    let stream = mac.finalize().into_bytes();
    let id = id.to_be_bytes();
    std::array::from_fn(|i| id[i] ^ stream[i])
}

/// HMAC-SHA256 under the cursor key, started with `label`.
fn mac(keys: &ServerKeys, label: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(keys.cursor_key())
        .expect("HMAC accepts keys of any length");
    mac.update(label);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(list: &str, merchant: i64, status: Option<&str>) -> ListScope {
        ListScope::new(list, merchant, &[("status", status)])
    }

    #[test]
    fn a_cursor_opens_only_in_its_own_scope() {
        let keys = ServerKeys::from_master(&[5; 32]);
        let mine = scope("memberships", 1, Some("Active"));
        let cursor = seal(&keys, &mine, 4711);
        assert_eq!(open(&keys, &mine, &cursor), Some(4711));
        assert!(!cursor.contains("4711"));
        assert_eq!(cursor.len(), 32);
        for other in [
            scope("memberships", 2, Some("Active")),
            scope("invoices", 1, Some("Active")),
            scope("memberships", 1, Some("Canceled")),
            scope("memberships", 1, None),
        ] {
            assert_eq!(open(&keys, &other, &cursor), None, "{other:?}");
        }
        let other_server = ServerKeys::from_master(&[6; 32]);
        assert_eq!(open(&other_server, &mine, &cursor), None);
    }

    #[test]
    fn an_altered_or_made_up_cursor_does_not_open() {
        let keys = ServerKeys::from_master(&[5; 32]);
        let mine = scope("customers", 1, None);
        let cursor = seal(&keys, &mine, 42);
        let bytes = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        for bit in 0..bytes.len() * 8 {
            let mut altered = bytes.clone();
            altered[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(open(&keys, &mine, &URL_SAFE_NO_PAD.encode(altered)), None);
        }
        for made_up in [
            "",
            "x",
            "42",
            &cursor[..31],
            &format!("{cursor}A"),
            &format!("{cursor}="),
        ] {
            assert_eq!(open(&keys, &mine, made_up), None, "{made_up}");
        }
    }

    #[test]
    fn limits_are_plain_integers_from_1_to_100() {
        assert_eq!(parse_limit("1"), Ok(1));
        assert_eq!(parse_limit("100"), Ok(100));
        for bad in [
            "0",
            "101",
            "x",
            "-1",
            "+5",
            "05",
            "1.0",
            " 5",
            "99999999999999999999",
        ] {
            assert!(parse_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scopes_name_their_filters_in_one_order() {
        let a = ListScope::new(
            "invoices",
            3,
            &[("status", Some("Paid")), ("customerKey", Some("c"))],
        );
        let b = ListScope::new(
            "invoices",
            3,
            &[("customerKey", Some("c")), ("status", Some("Paid"))],
        );
        assert_eq!(a.0, b.0);
        assert_ne!(
            ListScope::new("invoices", 3, &[("status", Some("a&b"))]).0,
            ListScope::new("invoices", 3, &[("status", Some("a")), ("b", Some(""))]).0
        );
    }
}
