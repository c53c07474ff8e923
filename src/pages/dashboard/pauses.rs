//! Pausing, resuming and the change scheduled for the next period, from a membership's page
//! (DESIGN §15), each as the JSON API does it and through the same service: pause now with an
//! optional resume date (`POST /membership/{key}/pause`, [`memberships::pause`]; a Paused
//! membership takes a new date), resume now (`POST /membership/{key}/resume`,
//! [`memberships::resume`]) and drop the pending change (`DELETE
//! /membership/{key}/pending-update`, [`memberships::drop_scheduled_change`]). Like the other actions ([`super::actions`]) each is a
//! confirmation page whose form posts with the session's form token, answered by an outcome
//! page: done, or refused with the reason (409); a resume date the rules refuse shows the form
//! again with the reason beside the field (400).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Utc};
use recur_domain::membership::{self as rules, PauseRequest};

use super::actions::{
    confirm_action, confirm_page, membership_of, membership_url, outcome_page,
    posted_to_membership, refused, ActionForm,
};
use super::confirm::{Confirm, Field};
use super::fields::{self, beside};
use super::staff::Staff;
use crate::http::input::Field as Input;
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::format::display_time;
use crate::pages::render::with_status;
use crate::pages::session;
use crate::services::{memberships, ServiceError};
use crate::state::AppState;
use crate::store::memberships::Membership;

/// The text of string `key`.
fn text(t: &BTreeMap<String, String>, key: &str) -> String {
    t.get(key).cloned().unwrap_or_default()
}

/// The resume date typed in the pause form, read as UTC: blank is none (paused until resumed);
/// otherwise a date and time as [`fields::utc_time`] reads it, checked by the rule of
/// `resumeAt` ([`rules::resume_at`]): after `now` and at most 100 years ahead. `Err` holds why
/// not, `form_error` when it is no date and time at all.
fn resume_date(
    typed: &str,
    now: DateTime<Utc>,
    form_error: &str,
) -> Result<Option<DateTime<Utc>>, String> {
    if typed.trim().is_empty() {
        return Ok(None);
    }
    let input = fields::utc_time(typed).ok_or_else(|| form_error.to_string())?;
    rules::resume_at(&input, now).map(Some)
}

/// The value a `datetime-local` input shows for `at`.
fn input_value(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M").to_string()
}

/// The pause's confirmation page for `m`, its resume date `typed` and `error` beside it: a
/// Paused membership's asks for a new date.
fn pause_form(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    m: &Membership,
    typed: String,
    error: Option<String>,
) -> Result<Response, PageError> {
    let paused = rules::can_pause(m.state.status) == Ok(PauseRequest::NewResumeDate);
    let key = &m.membership_key;
    let confirm = Confirm {
        nav: "customers",
        title: if paused {
            "dash_pause_change_title"
        } else {
            "dash_pause_title"
        },
        text: if paused {
            "dash_pause_change_text"
        } else {
            "dash_pause_text"
        },
        button: if paused {
            "dash_pause_change_button"
        } else {
            "dash_pause_button"
        },
        action: format!("{}/pause", membership_url(key)),
        field: Some(Field::ResumeAt { typed, error }),
    };
    confirm_page(state, staff, t, key, confirm)
}

/// `GET /dashboard/memberships/{key}/pause`: asks to confirm the pause, with its resume date
/// (a Paused membership's current one filled in).
pub async fn confirm_pause(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
) -> Result<Response, PageError> {
    let (staff, m) = match membership_of(&state, &headers, &key).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    let typed = m.state.resume_at.map(input_value).unwrap_or_default();
    pause_form(&state, &staff, t, &m, typed, None)
}

/// `POST /dashboard/memberships/{key}/pause`: pauses the membership now, until the date typed
/// (blank: until resumed); a Paused one takes the new date. Any other status is refused (409).
pub async fn pause(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, m) = match posted_to_membership(&state, &headers, &key, &form).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    let typed = form.resume_at.trim().to_string();
    let invalid = |why: String| {
        pause_form(&state, &staff, t, &m, typed.clone(), Some(why))
            .map(|page| with_status(page, StatusCode::BAD_REQUEST))
    };
    let resume_at = match resume_date(&typed, staff.now, &text(t, "dash_utc_time_form")) {
        Ok(resume_at) => resume_at,
        Err(why) => return invalid(why),
    };
    let resume_at = match resume_at {
        Some(at) => Input::Present(at.format("%Y-%m-%dT%H:%M:%S").to_string()),
        None => Input::Absent,
    };
    match memberships::pause(&state, staff.merchant.id, &key, resume_at).await {
        Ok(paused) => {
            let told = match paused.state.resume_at {
                Some(at) => {
                    text(t, "dash_paused_until").replace("{date}", &display_time(at, i18n::lang(t)))
                }
                None => text(t, "dash_paused"),
            };
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", told.into())
        }
        // The merchant's clock passed the date meanwhile.
        Err(ServiceError::Validation(errors)) => invalid(beside(errors).into_values().collect()),
        Err(error) => refused(&state, &staff, t, &key, error),
    }
}

/// `GET /dashboard/memberships/{key}/resume`: asks to confirm the resume.
pub async fn confirm_resume(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
) -> Result<Response, PageError> {
    confirm_action(&state, &headers, &key, "resume", "resume").await
}

/// `POST /dashboard/memberships/{key}/resume`: resumes a Paused membership now; its new period
/// is charged at once (a decline makes it PastDue, which the outcome names). Any other status is
/// refused (409).
pub async fn resume(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, _) = match posted_to_membership(&state, &headers, &key, &form).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    match memberships::resume(&state, staff.merchant.id, &key).await {
        Ok(resumed) => {
            let status = text(t, &format!("status_{}", resumed.state.status.as_str()));
            let told = text(t, "dash_resumed").replace("{status}", &status);
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", told.into())
        }
        Err(error) => refused(&state, &staff, t, &key, error),
    }
}

/// `GET /dashboard/memberships/{key}/pending-update`: asks to confirm dropping the change
/// scheduled for the next period.
pub async fn confirm_drop_change(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
) -> Result<Response, PageError> {
    confirm_action(&state, &headers, &key, "drop_change", "pending-update").await
}

/// `POST /dashboard/memberships/{key}/pending-update`: drops the scheduled change; the current
/// terms stay. A membership with none (dropped meanwhile, or applied by its renewal) is refused
/// with that reason (409), where the API answers the membership unchanged.
pub async fn drop_change(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    PageForm(form): PageForm<ActionForm>,
) -> Result<Response, PageError> {
    let (staff, m) = match posted_to_membership(&state, &headers, &key, &form).await? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let t = session::strings(&state, &headers);
    if m.state.scheduled.is_none() {
        let why = text(t, "dash_no_scheduled_change");
        let conflict = StatusCode::CONFLICT;
        return outcome_page(&state, &staff, t, &key, conflict, "refused", why.into());
    }
    match memberships::drop_scheduled_change(&state, staff.merchant.id, &key).await {
        Ok(_) => {
            let told = text(t, "dash_change_dropped");
            outcome_page(&state, &staff, t, &key, StatusCode::OK, "done", told.into())
        }
        Err(error) => refused(&state, &staff, t, &key, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn a_resume_date_is_typed_in_utc_with_or_without_seconds() {
        let now = at("2027-04-11T00:00:00Z");
        let form = "the form";
        let read = |typed: &str| resume_date(typed, now, form);
        assert_eq!(read("  "), Ok(None));
        for typed in [
            "2027-06-15 08:30",
            "2027-06-15T08:30",
            "2027-06-15T08:30:00",
            " 2027-06-15 08:30:00 ",
        ] {
            assert_eq!(read(typed), Ok(Some(at("2027-06-15T08:30:00Z"))), "{typed}");
        }
        for typed in ["2027-6-15 08:30", "15.06.2027 08:30", "2027-06-15", "soon"] {
            assert_eq!(read(typed), Err(form.to_string()), "{typed}");
        }
        assert_eq!(
            read("2027-04-10 23:59"),
            Err("must be in the future".into())
        );
        assert_eq!(
            read("2027-04-11 00:00"),
            Err("must be in the future".into())
        );
        assert!(
            read("2127-04-11 00:01").is_err(),
            "more than 100 years ahead"
        );
        assert_eq!(input_value(at("2027-06-15T08:30:59Z")), "2027-06-15T08:30");
    }
}
