//! Placeholders of set-based statements, and their spelling per engine.
//!
//! recur writes every statement with PostgreSQL's numbered placeholders (`$1`, `$2`, …), which
//! SQLite also accepts, as *named* parameters. SQLite finds a named parameter's name by walking
//! the statement's list of names from the start, and the driver asks for every parameter's name
//! each time it binds: a statement with n named parameters costs O(n²) to bind. For a set-based
//! statement of a few thousand values (a batch of renewals) that walk was most of the engine's
//! time. Anonymous `?` placeholders are not in that list, so [`for_backend`] spells a SQLite
//! statement with them whenever that binds the same values.

use super::Backend;

/// The `VALUES` list of a set-based statement: `rows` tuples of `columns` placeholders, numbered
/// from `$first` (`placeholders(2, 2, 1)` is `($1, $2), ($3, $4)`). Both engines name the
/// columns of `(VALUES …) AS v` `column1`, `column2`, …, so one statement serves both.
pub fn placeholders(rows: usize, columns: usize, first: usize) -> String {
    let mut sql = String::with_capacity(rows * columns * 5);
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for column in 0..columns {
            if column > 0 {
                sql.push_str(", ");
            }
            sql.push('$');
            sql.push_str(&(first + row * columns + column).to_string());
        }
        sql.push(')');
    }
    sql
}

/// `sql` as `backend` binds it fastest. On SQLite, when the statement's placeholders appear in
/// its text as `$1`, `$2`, … `$n`, in that order and each once, they become anonymous `?`:
/// SQLite numbers those in the order they appear, so each still binds the same value, and
/// binding them costs O(n) instead of O(n²) (see the module's comment). Any other statement,
/// and every statement on PostgreSQL, is returned as written.
pub fn for_backend(sql: String, backend: Backend) -> String {
    match backend {
        Backend::Postgres => sql,
        Backend::Sqlite => anonymous(&sql).unwrap_or(sql),
    }
}

/// `sql` with `$1 … $n` written `?`, if they appear in that order, each once, outside quoted
/// strings and identifiers; `None` otherwise.
fn anonymous(sql: &str) -> Option<String> {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let (mut next, mut copied, mut i) = (1usize, 0usize, 0usize);
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let byte = bytes[i];
        match quote {
            Some(q) if byte == q => quote = None,
            Some(_) => {}
            None if byte == b'\'' || byte == b'"' => quote = Some(byte),
            None if byte == b'$' => {
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if digits > 0 {
                    let number: usize = sql[i + 1..i + 1 + digits].parse().ok()?;
                    if number != next {
                        return None;
                    }
                    next += 1;
                    out.push_str(&sql[copied..i]);
                    out.push('?');
                    i += 1 + digits;
                    copied = i;
                    continue;
                }
            }
            None => {}
        }
        i += 1;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_rows_then_columns() {
        assert_eq!(placeholders(2, 2, 1), "($1, $2), ($3, $4)");
        assert_eq!(placeholders(1, 3, 4), "($4, $5, $6)");
    }

    #[test]
    fn sqlite_gets_anonymous_placeholders_when_they_are_in_order() {
        let sql = format!(
            "UPDATE t SET a = $1 FROM (VALUES {}) AS v",
            placeholders(2, 2, 2)
        );
        assert_eq!(
            for_backend(sql.clone(), Backend::Sqlite),
            "UPDATE t SET a = ? FROM (VALUES (?, ?), (?, ?)) AS v"
        );
        assert_eq!(for_backend(sql.clone(), Backend::Postgres), sql);
    }

    #[test]
    fn placeholders_out_of_order_or_repeated_stay_numbered() {
        for sql in [
            "SELECT $2, $1",
            "SELECT $1 WHERE a = $1",
            "INSERT INTO t VALUES ($1, $2) RETURNING $4",
        ] {
            assert_eq!(for_backend(sql.to_owned(), Backend::Sqlite), sql);
        }
    }

    #[test]
    fn dollars_in_quotes_are_not_placeholders() {
        assert_eq!(
            for_backend("SELECT '$1', \"$2\", $1".to_owned(), Backend::Sqlite),
            "SELECT '$1', \"$2\", ?"
        );
        assert_eq!(
            for_backend("SELECT 'a''$1', $1".to_owned(), Backend::Sqlite),
            "SELECT 'a''$1', ?"
        );
    }
}
