//! The two pages every dashboard action shares: the confirmation page, whose form posts the
//! action with the session's form token (no script: the confirmation is a page of its own),
//! and the outcome page that tells what happened.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use minijinja::{context, Value};

use super::{framed, staff::Staff};
use crate::api::problem::ApiError;
use crate::pages::render::with_status;
use crate::state::AppState;

/// What a confirmation page shows.
pub struct Confirm<'a> {
    /// The navigation section it belongs to.
    pub nav: &'a str,
    /// The page's title (a string's name).
    pub title: &'a str,
    /// What the action does (a string's name).
    pub text: &'a str,
    /// The form's button (a string's name).
    pub button: &'a str,
    /// Where the form posts.
    pub action: String,
    /// The amount field of a refund: `(what is left, the amount typed, its error)`.
    pub amount: Option<(String, String, Option<String>)>,
}

/// The confirmation page `confirm`, with a link back to `back`.
pub fn page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    back: &str,
    confirm: Confirm<'_>,
) -> Result<Response, ApiError> {
    framed(
        state,
        staff,
        t,
        "dashboard/confirm.html",
        confirm.nav,
        context! {
            title => t.get(confirm.title),
            text => t.get(confirm.text),
            button => t.get(confirm.button),
            action => confirm.action,
            back => back,
            amount => confirm.amount.map(|(left, typed, error)| context! {
                left => left, value => typed, error => error,
            }),
        },
    )
}

/// What an outcome page tells.
pub struct Outcome<'a> {
    /// The navigation section it belongs to.
    pub nav: &'a str,
    /// Where its link leads.
    pub back: &'a str,
    /// The link's text (a string's name).
    pub back_label: &'a str,
    /// `done`, `declined` or `refused`.
    pub outcome: &'a str,
    /// What happened, or why not.
    pub text: Value,
    /// A secret to show this once (a rotated signing secret), in a read-only field.
    pub secret: Option<String>,
}

/// The outcome page `told`, answered with `status`.
pub fn outcome(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    status: StatusCode,
    told: Outcome<'_>,
) -> Result<Response, ApiError> {
    let page = framed(
        state,
        staff,
        t,
        "dashboard/outcome.html",
        told.nav,
        context! {
            outcome => told.outcome,
            title => t.get(&format!("dash_outcome_{}", told.outcome)),
            text => told.text,
            back => told.back,
            back_label => t.get(told.back_label),
            secret => told.secret,
        },
    )?;
    Ok(with_status(page, status))
}
