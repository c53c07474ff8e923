//! The two pages every dashboard action shares: the confirmation page, whose form posts the
//! action with the session's form token (no script: the confirmation is a page of its own),
//! and the outcome page that tells what happened.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use minijinja::{context, Value};

use super::{framed, staff::Staff};
use crate::pages::failure::PageError;
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
    /// The form's field, when it has one.
    pub field: Option<Field>,
}

/// The one field a confirmation form may carry, with what was typed in it and why that was
/// refused.
pub enum Field {
    /// A refund's amount (`amount`; blank: all that is left).
    Amount {
        /// What is left to refund.
        left: String,
        /// The amount typed.
        typed: String,
        /// Why it was refused.
        error: Option<String>,
    },
    /// A pause's resume date (`resumeAt`, UTC; blank: until resumed).
    ResumeAt {
        /// The date typed (or the current one).
        typed: String,
        /// Why it was refused.
        error: Option<String>,
    },
}

/// The confirmation page `confirm`, with a link back to `back`.
pub fn page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    back: &str,
    confirm: Confirm<'_>,
) -> Result<Response, PageError> {
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
            amount => match &confirm.field {
                Some(Field::Amount { left, typed, error }) => Some(context! {
                    left => left, value => typed, error => error,
                }),
                _ => None,
            },
            resume_at => match &confirm.field {
                Some(Field::ResumeAt { typed, error }) => Some(context! {
                    value => typed, error => error,
                }),
                _ => None,
            },
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
) -> Result<Response, PageError> {
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
