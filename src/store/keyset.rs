//! Keyset pages (DESIGN §10): a list's rows newest first, `id DESC` within one merchant, read
//! from where the previous page ended rather than counted off from the start. Every list
//! statement is built here, so each one is tenant-scoped and ordered alike, and a page with an
//! index on `(merchant_id, [filter columns,] id)` reads its own rows off that index and no
//! others: its cost does not grow with the table.

use sqlx::any::AnyRow;
use sqlx::{Any, Executor};

/// Which rows a page reads: those older than `before` (from the newest when `None`), at most
/// `rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The id of the previous page's last row.
    pub before: Option<i64>,
    /// How many rows to read.
    pub rows: i64,
}

/// A value a filter binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A text.
    Text(String),
}

/// The placeholder of the first filter value: `$1` is the merchant id, `$2` the window's bound
/// and `$3` its size, which filters may use too.
const FIRST_VALUE: usize = 4;

/// A list statement's conditions beyond its merchant and window, with the values they bind.
#[derive(Debug, Default)]
pub struct Filters {
    sql: String,
    values: Vec<Value>,
    narrowed: bool,
}

impl Filters {
    /// Adds the condition `condition(placeholders)`, whose placeholders bind `values` in order.
    pub fn and(&mut self, values: Vec<Value>, condition: impl FnOnce(&[String]) -> String) {
        let first = FIRST_VALUE + self.values.len();
        let placeholders: Vec<String> = (first..first + values.len())
            .map(|n| format!("${n}"))
            .collect();
        self.sql.push_str(" AND ");
        self.sql.push_str(&condition(&placeholders));
        self.values.extend(values);
    }

    /// Keeps the rows whose `column` is `value`, when there is one.
    pub fn equal(&mut self, column: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.and(vec![Value::Text(value.into())], |p| {
                format!("{column} = {}", p[0])
            });
        }
    }

    /// Keeps, when there is a `key`, the rows whose `column` holds the id of the merchant's row
    /// of `table` whose `key_column` is `key`: the rows of one customer or membership
    /// ([`Filters::and_within`]), none for a key the merchant does not have.
    pub fn owned_by(&mut self, column: &str, table: &str, key_column: &str, key: Option<&str>) {
        if let Some(key) = key {
            self.and_within(vec![Value::Text(key.into())], |p| {
                format!(
                    "{column} = (SELECT k.id FROM {table} k \
                     WHERE k.merchant_id = $1 AND k.{key_column} = {})",
                    p[0]
                )
            });
        }
    }

    /// [`Filters::and`] for a condition that keeps the rows of one customer or membership, which
    /// an index of their own holds in id order: the page is read from that index, not from one
    /// of the merchant's. A planner without statistics (recur never analyses SQLite) would
    /// otherwise walk the merchant's rows newest first and test each, and a customer with few
    /// rows would cost a scan of the merchant's.
    pub fn and_within(&mut self, values: Vec<Value>, condition: impl FnOnce(&[String]) -> String) {
        self.narrowed = true;
        self.and(values, condition);
    }
}

/// The rows of one page: `select` (a statement up to its `WHERE`, in which the listed table is
/// `alias`) restricted to `merchant_id`, the window and `filters`, newest first.
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    select: &str,
    alias: &str,
    merchant_id: i64,
    filters: &Filters,
    window: Window,
) -> Result<Vec<AnyRow>, sqlx::Error> {
    // `+` (unary plus) keeps the tenant condition but makes it no index's key, on both engines.
    let merchant = if filters.narrowed { "+" } else { "" };
    let sql = format!(
        "{select} WHERE {merchant}{alias}.merchant_id = $1 AND {alias}.id < $2{} \
         ORDER BY {alias}.id DESC LIMIT $3",
        filters.sql
    );
    // Not kept prepared: PostgreSQL then plans each page with its values (a custom plan), and
    // reads a small merchant's page off its `(merchant_id, …)` index. A generic plan guesses
    // every merchant's share as the average and may walk the primary key newest first instead,
    // which for a merchant with few rows beside one with millions is a scan of the table.
    let mut query = sqlx::query(&sql)
        .persistent(false)
        .bind(merchant_id)
        .bind(window.before.unwrap_or(i64::MAX))
        .bind(window.rows);
    for value in &filters.values {
        query = match value {
            Value::Int(int) => query.bind(*int),
            Value::Text(text) => query.bind(text.as_str()),
        };
    }
    query.fetch_all(executor).await
}

/// The range of every text that starts with `prefix`, in code-point order (SQLite's BINARY
/// collation, PostgreSQL's "C"): from `prefix` itself up to, not including, the bound returned,
/// `None` when no text lies above them all (a prefix of U+10FFFF alone).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            other => char::from_u32(u32::from(other) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_at_its_successor() {
        assert_eq!(prefix_end("ab").as_deref(), Some("ac"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{D7FF}").as_deref(), Some("\u{E000}"));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
        // Every text starting with the prefix lies below the end, and the end does not.
        let end = prefix_end("zoë").unwrap();
        for text in ["zoë", "zoëy", "zoë\u{10FFFF}"] {
            assert!(text >= "zoë" && text < end.as_str(), "{text}");
        }
        assert!(!end.starts_with("zoë"));
    }

    #[test]
    fn filters_number_their_placeholders_after_the_window() {
        let mut filters = Filters::default();
        filters.and(vec![Value::Text("Active".into())], |p| {
            format!("m.status = {}", p[0])
        });
        filters.and(vec![Value::Int(1), Value::Int(2)], |p| {
            format!("m.id BETWEEN {} AND {}", p[0], p[1])
        });
        assert_eq!(filters.sql, " AND m.status = $4 AND m.id BETWEEN $5 AND $6");
        assert_eq!(filters.values.len(), 3);
    }
}
