//! The one `TransactionId` sequence: charge attempts, cashier transactions and refunds take their
//! ids from it, so no two money movements share the id their notifications carry (DESIGN §9).
//!
//! PostgreSQL draws from the `transaction_ids` sequence. SQLite has no sequences; its writes are
//! serialised (one writer, `BEGIN IMMEDIATE`), so one past the largest id of the three tables,
//! read inside the writing statement, is as good.

use sqlx::AnyConnection;

/// SQL for the id of the `row`-th row (from 0) an `INSERT` writes, on `conn`'s engine.
///
/// On SQLite the largest id may be read once for the statement or again for each row; either
/// way every row gets an id larger than any before it, and different rows different ids.
pub fn next_id_sql(conn: &AnyConnection, row: usize) -> String {
    if super::Backend::of(conn) == super::Backend::Postgres {
        "nextval('transaction_ids')".to_string()
    } else {
        format!(
            "((SELECT MAX(v) FROM (SELECT MAX(id) AS v FROM charges \
             UNION ALL SELECT MAX(id) FROM cashier_transactions \
             UNION ALL SELECT MAX(id) FROM refunds UNION ALL SELECT 0)) + {})",
            row + 1
        )
    }
}

/// The `VALUES` list of an `INSERT` of `rows` money movements: each tuple starts with its new id
/// ([`next_id_sql`]) followed by `columns` placeholders numbered from `$first`, as
/// [`super::placeholders`] numbers them.
pub fn values_with_ids(conn: &AnyConnection, rows: usize, columns: usize, first: usize) -> String {
    (0..rows)
        .map(|row| {
            let tuple = super::placeholders(1, columns, first + row * columns);
            format!("({}, {}", next_id_sql(conn, row), &tuple[1..])
        })
        .collect::<Vec<_>>()
        .join(", ")
}
