//! The page every list of the API answers with (DESIGN §10); which rows it holds and its cursor
//! are read as [`crate::http::pagination`] says.

use serde::Serialize;
use utoipa::ToSchema;

/// A page of a list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    /// The records, newest first.
    pub data: Vec<T>,
    /// Whether another page follows.
    pub has_more: bool,
    /// The `cursor` of the next page; null on the last.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// A page of `data`, followed by the page `next_cursor` leads to, if any.
    pub fn new(data: Vec<T>, next_cursor: Option<String>) -> Self {
        Self {
            data,
            has_more: next_cursor.is_some(),
            next_cursor,
        }
    }
}
