//! The forwarding headers proxies append the client address to: `X-Forwarded-For` and RFC 7239
//! `Forwarded` (its `for=` parameter).

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, HeaderName};

/// `X-Forwarded-For`.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
/// `Forwarded` (RFC 7239).
const FORWARDED: HeaderName = HeaderName::from_static("forwarded");

/// The hops a request's forwarding header lists, left to right (`None` for an entry that names
/// no address: `unknown`, an obfuscated identifier, an element without `for=`, garbage).
///
/// `X-Forwarded-For` is read when present, since nearly every proxy writes it; `Forwarded`
/// otherwise. Several lines of one header are one list, in order.
pub fn hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    if headers.contains_key(X_FORWARDED_FOR) {
        return entries(headers, &X_FORWARDED_FOR, ',')
            .map(|entry| entry.and_then(node))
            .collect();
    }
    entries(headers, &FORWARDED, ',')
        .map(|element| element.and_then(forwarded_for))
        .collect()
}

/// The non-empty items of every line of `name`, split at `separator` outside quoted strings; a
/// line that is not visible ASCII is one item naming nothing.
fn entries<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
    separator: char,
) -> impl Iterator<Item = Option<&'a str>> {
    headers
        .get_all(name)
        .iter()
        .flat_map(move |line| match line.to_str() {
            Ok(text) => split_unquoted(text, separator)
                .into_iter()
                .filter(|item| !item.is_empty())
                .map(Some)
                .collect(),
            Err(_) => vec![None],
        })
}

/// `text` split at `separator` where it is not inside a quoted string, each part trimmed.
fn split_unquoted(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if c == separator && !quoted => {
                parts.push(text[start..at].trim());
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// The address of one `Forwarded` element's `for=` parameter.
fn forwarded_for(element: &str) -> Option<IpAddr> {
    let value = split_unquoted(element, ';').into_iter().find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("for")
            .then(|| value.trim())
    })?;
    node(&unquote(value)?)
}

/// A token, or a quoted string with its quoted pairs resolved (`None` when a quote is open).
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return Some(value.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut text = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        text.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(text)
}

/// A node as proxies write it: an IPv4 or IPv6 address, IPv6 optionally in brackets, either
/// optionally with a port.
fn node(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    if let Ok(address) = text.parse::<IpAddr>() {
        return Some(address);
    }
    if let Ok(socket) = text.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    // RFC 7239 allows obfuscated ports (`[2001:db8::1]:_abc`); only the address counts.
    let host = match text.strip_prefix('[') {
        Some(rest) => rest.split_once(']')?.0,
        None => text.split_once(':')?.0,
    };
    host.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(lines: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in lines {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    fn listed(lines: &[(&str, &str)]) -> Vec<Option<String>> {
        hops(&headers(lines))
            .into_iter()
            .map(|hop| hop.map(|a| a.to_string()))
            .collect()
    }

    fn some(list: &[&str]) -> Vec<Option<String>> {
        list.iter().map(|a| Some(a.to_string())).collect()
    }

    #[test]
    fn x_forwarded_for_lists_addresses_in_order() {
        assert_eq!(
            listed(&[("x-forwarded-for", "203.0.113.7, 10.0.0.1")]),
            some(&["203.0.113.7", "10.0.0.1"])
        );
        // Several lines are one list; ports and brackets are tolerated.
        assert_eq!(
            listed(&[
                ("x-forwarded-for", "203.0.113.7:5123,[2001:db8::1]:443"),
                ("x-forwarded-for", " 2001:db8::2 ,[2001:db8::3]"),
            ]),
            some(&["203.0.113.7", "2001:db8::1", "2001:db8::2", "2001:db8::3"])
        );
        assert_eq!(
            listed(&[("x-forwarded-for", "unknown, 203.0.113.7,,")]),
            vec![None, Some("203.0.113.7".into())]
        );
        assert!(listed(&[]).is_empty());
    }

    #[test]
    fn forwarded_for_parameters_are_read() {
        assert_eq!(
            listed(&[(
                "forwarded",
                r#"for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711""#
            )]),
            some(&["192.0.2.60", "2001:db8:cafe::17"])
        );
        assert_eq!(
            listed(&[
                ("forwarded", r#"proto=https;for="198.51.100.9:8080""#),
                ("forwarded", "for=unknown, for=_hidden, by=10.0.0.1"),
            ]),
            vec![Some("198.51.100.9".into()), None, None, None]
        );
        // A comma or semicolon inside quotes does not split; escapes are resolved.
        assert_eq!(
            listed(&[("forwarded", r#"by="a,b;c";for="\[2001:db8::9\]""#)]),
            some(&["2001:db8::9"])
        );
        // An unterminated quote names nothing.
        assert_eq!(listed(&[("forwarded", r#"for="192.0.2.1"#)]), vec![None]);
    }

    #[test]
    fn x_forwarded_for_wins_over_forwarded() {
        assert_eq!(
            listed(&[
                ("forwarded", "for=198.51.100.9"),
                ("x-forwarded-for", "203.0.113.7"),
            ]),
            some(&["203.0.113.7"])
        );
    }

    #[test]
    fn nodes_parse_with_and_without_ports() {
        let cases = [
            ("192.0.2.1", Some("192.0.2.1")),
            ("192.0.2.1:80", Some("192.0.2.1")),
            ("2001:db8::1", Some("2001:db8::1")),
            ("[2001:db8::1]", Some("2001:db8::1")),
            ("[2001:db8::1]:_port", Some("2001:db8::1")),
            ("192.0.2.1:_port", Some("192.0.2.1")),
            ("unknown", None),
            ("_obfuscated", None),
            ("[not-an-address]", None),
            ("", None),
        ];
        for (text, expected) in cases {
            assert_eq!(
                node(text).map(|a| a.to_string()).as_deref(),
                expected,
                "{text}"
            );
        }
    }
}
