//! U+0000 (NUL) is refused in every piece of request text: path, query, JSON body and form body.
//!
//! PostgreSQL's `text` cannot hold it (binding it fails the statement) while SQLite stores it, so
//! without this rule the same request would be a 500 on one database and accepted on the other.
//! No field of a billing system has a use for it, and a browser cannot type it. The rule is
//! applied where the text enters, so that the answer names the field:
//!
//! - a path segment holding it cannot name any resource: 404;
//! - a query parameter, JSON field or form field holding it: 400 with the field's path.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use recur_domain::validation::FieldErrors;
use serde_json::Value;

use super::problem;

/// The validation message for a field holding U+0000.
const MESSAGE: &str = "must not contain the character U+0000";

/// How U+0000 looks percent-encoded, the only way it can reach a URI or a form body (the HTTP
/// parser refuses the raw byte in a request line).
const ENCODED_NUL: &str = "%00";

/// Middleware: a path holding U+0000 is a 404, a query parameter holding it a 400 naming it.
pub async fn refuse_in_uri(request: Request, next: Next) -> Response {
    let uri = request.uri();
    if uri.path().contains(ENCODED_NUL) {
        return problem::not_found();
    }
    if let Err(refused) = uri.query().map_or(Ok(()), check_form) {
        return problem::validation(refused);
    }
    next.run(request).await
}

/// The error (a 400) naming the first field of a JSON body that holds U+0000.
pub fn check_json(body: &Value) -> Result<(), FieldErrors> {
    json_path_with_nul(body).map_or(Ok(()), |path| Err(refused(path)))
}

/// The error (a 400) naming the first field of an `application/x-www-form-urlencoded` text (a form body or
/// a query) that holds U+0000.
pub fn check_form(encoded: &str) -> Result<(), FieldErrors> {
    form_field_with_nul(encoded).map_or(Ok(()), |name| Err(refused(name)))
}

/// The name of the first `application/x-www-form-urlencoded` pair whose name or value holds
/// U+0000 once decoded, if any.
fn form_field_with_nul(encoded: &str) -> Option<String> {
    if !encoded.contains(ENCODED_NUL) {
        return None;
    }
    url::form_urlencoded::parse(encoded.as_bytes())
        .find(|(name, value)| name.contains('\0') || value.contains('\0'))
        .map(|(name, _)| shown(&name))
}

/// A field name as an error names it: a U+0000 in the name itself shown as U+FFFD.
fn shown(name: &str) -> String {
    name.replace('\0', "\u{FFFD}")
}

/// The path (`productInfo.orderId`, `taxIds[0].value`) of the first string in `value` that holds
/// U+0000, if any. An object key holding it is reported at the key's own path.
fn json_path_with_nul(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => text.contains('\0').then(String::new),
        Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            json_path_with_nul(item).map(|rest| join(&format!("[{index}]"), &rest))
        }),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            if key.contains('\0') {
                return Some(shown(key));
            }
            json_path_with_nul(item).map(|rest| join(&shown(key), &rest))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// `head` followed by `rest`, with a dot unless `rest` is empty or an index.
fn join(head: &str, rest: &str) -> String {
    if rest.is_empty() || rest.starts_with('[') {
        format!("{head}{rest}")
    } else {
        format!("{head}.{rest}")
    }
}

/// The validation error for one field holding U+0000.
fn refused(path: String) -> FieldErrors {
    let mut errors = FieldErrors::new();
    errors.add(path, MESSAGE);
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_paths_name_the_field() {
        assert_eq!(json_path_with_nul(&json!({"a": "ok", "b": 1})), None);
        assert_eq!(
            json_path_with_nul(&json!({"a": "x\u{0}y"})).as_deref(),
            Some("a")
        );
        assert_eq!(
            json_path_with_nul(&json!({"productInfo": {"orderId": "\u{0}"}})).as_deref(),
            Some("productInfo.orderId")
        );
        assert_eq!(
            json_path_with_nul(&json!({"taxIds": [{"value": "ok"}, {"value": "\u{0}"}]}))
                .as_deref(),
            Some("taxIds[1].value")
        );
        assert_eq!(
            json_path_with_nul(&json!({"list": [["ok", "\u{0}"]]})).as_deref(),
            Some("list[0][1]")
        );
        assert_eq!(
            json_path_with_nul(&json!({"a\u{0}b": true})).as_deref(),
            Some("a\u{FFFD}b")
        );
    }

    #[test]
    fn form_fields_are_named_once_decoded() {
        assert_eq!(form_field_with_nul("a=1&b=two"), None);
        assert_eq!(
            form_field_with_nul("a=1&holder=x%00y").as_deref(),
            Some("holder")
        );
        assert_eq!(
            form_field_with_nul("na%00me=1").as_deref(),
            Some("na\u{FFFD}me")
        );
        // "%2500" is the text "%00", not U+0000.
        assert_eq!(form_field_with_nul("a=%2500"), None);
    }
}
