//! The page shown for an unknown, expired or used payment link.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;

use super::render::{page, Framing};
use crate::pages::failure::PageError;
use crate::state::AppState;

/// 410 Gone with an explanation in the visitor's language.
pub fn page_for(
    state: &AppState,
    strings: &BTreeMap<String, String>,
) -> Result<Response, PageError> {
    page(
        state,
        StatusCode::GONE,
        "expired.html",
        context! { t => strings },
        None,
        Framing::Embeddable,
    )
}
