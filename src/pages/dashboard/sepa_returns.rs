//! The SEPA page's return file upload (DESIGN §18): a bank's `pain.002` status report or
//! `camt.054` debit notification, chosen in a file input and posted as
//! `multipart/form-data` with the session's form token, is applied as `POST /sepa/returns`
//! applies it ([`returns::apply`]): the page then tells how many debits it reversed, how many
//! it had reversed before and which end-to-end ids it does not know. A file that cannot be read
//! is refused with the reason, nothing applied (400); a body over [`MAX_UPLOAD_BYTES`] is
//! refused unread (413).

use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::{context, Value};
use recur_domain::sepa::returns::FileKind;

use super::fields::beside;
use super::sepa::{sepa_page, Shown};
use super::staff;
use crate::pages::failure::PageError;
use crate::pages::{notice, session};
use crate::services::sepa::returns::{self, Applied};
use crate::services::ServiceError;
use crate::state::AppState;

/// The largest upload taken, the file and the form's token together: 1 MiB, thousands of
/// returns.
pub const MAX_UPLOAD_BYTES: usize = 1024 * 1024;

/// The upload as read: the form's token and the file, or the status of why it could not be
/// read.
#[derive(Debug, Default)]
struct Upload {
    /// The session's form token.
    csrf_token: String,
    /// The file's bytes.
    file: Vec<u8>,
    /// Why the body could not be read: 413 too large, 400 malformed.
    refused: Option<StatusCode>,
}

/// Reads the form's fields (`csrfToken`, `file`; others are skipped).
async fn read(multipart: Result<Multipart, MultipartRejection>) -> Upload {
    let mut upload = Upload::default();
    let mut multipart = match multipart {
        Ok(multipart) => multipart,
        Err(rejection) => {
            upload.refused = Some(rejection.status());
            return upload;
        }
    };
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => return upload,
            Err(error) => {
                upload.refused = Some(error.status());
                return upload;
            }
        };
        let read = match field.name() {
            Some("csrfToken") => field.text().await.map(|text| upload.csrf_token = text),
            Some("file") => field
                .bytes()
                .await
                .map(|bytes| upload.file = bytes.to_vec()),
            _ => Ok(()),
        };
        if let Err(error) = read {
            upload.refused = Some(error.status());
            return upload;
        }
    }
}

/// `POST /dashboard/sepa/returns` (`multipart/form-data`: `csrfToken`, `file`): applies the
/// return file and shows the page with what it changed (200), or why it was refused (400
/// unreadable or no file, 413 too large).
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, PageError> {
    let upload = read(multipart).await;
    let staff = match staff::posting(&state, &headers, &upload.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    let refused = |status: StatusCode, why: String| {
        let shown = Shown {
            returns_error: Some(why),
            ..Shown::default()
        };
        (status, shown)
    };
    let (status, shown) = match upload.refused {
        Some(StatusCode::PAYLOAD_TOO_LARGE) => refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            text("dash_sepa_file_too_large"),
        ),
        Some(_) => return notice::bad_request(&state, t),
        None if upload.file.is_empty() => {
            refused(StatusCode::BAD_REQUEST, text("dash_sepa_no_file"))
        }
        None => match returns::apply(&state, staff.merchant.id, &upload.file).await {
            Ok(applied) => {
                let shown = Shown {
                    returns: Some(applied_view(applied)),
                    ..Shown::default()
                };
                (StatusCode::OK, shown)
            }
            Err(ServiceError::Validation(errors)) => {
                let why: Vec<String> = beside(errors).into_values().collect();
                refused(StatusCode::BAD_REQUEST, why.join("; "))
            }
            Err(other) => return Err(other.into()),
        },
    };
    sepa_page(&state, &staff, t, "", status, shown).await
}

/// What a return file changed, as the page tells it.
fn applied_view(applied: Applied) -> Value {
    context! {
        file => match applied.kind {
            FileKind::StatusReport => "pain.002",
            FileKind::DebitNotification => "camt.054",
        },
        matched => applied.matched,
        already_applied => applied.already_applied,
        unknown => applied.unknown,
    }
}
