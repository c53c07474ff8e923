//! The SEPA page (DESIGN §18): the form that makes a collection file of one of the merchant's
//! SEPA processors ([`batches::create`], as `POST /sepa/batches`), the collection files made,
//! newest first and a page at a time, each with its `pain.008` download, and the return file
//! upload ([`super::sepa_returns`]). A refused field is shown beside it (400); nothing due is
//! said above the form (409). Another merchant's collection file is the 404 page.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::{context, Value};
use recur_domain::money::{display_amount, Currency};
use serde::Deserialize;

use super::fields::{self, beside};
use super::staff::{self, Staff};
use super::{framed_with_status, link, or_bad_request, param, without_empty};
use crate::http::pagination::{ListQuery, PageParams};
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::format::display_time;
use crate::pages::{notice, session};
use crate::services::processors::{self, Kind};
use crate::services::sepa::batches::{self, NewBatch};
use crate::services::ServiceError;
use crate::state::AppState;
use crate::store::sepa_batches::Batch;

/// The page's address.
pub(super) const PAGE: &str = "/dashboard/sepa";

/// The collection file form as posted.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    /// The SEPA processor whose debits it collects.
    #[serde(default)]
    payment_processor_id: String,
    /// `YYYY-MM-DD`; blank: the next TARGET2 business day from today.
    #[serde(default)]
    collection_date: String,
}

impl BatchForm {
    /// The batch it asks for, each field as the API's body would give it.
    fn new_batch(&self) -> NewBatch {
        NewBatch {
            payment_processor_id: fields::number(&self.payment_processor_id),
            collection_date: fields::text(&self.collection_date),
        }
    }
}

/// What the page shows besides its lists: what was just done, why a collection file was not
/// made, the form's values and errors, and what a return file changed or why it was refused.
#[derive(Default)]
pub(super) struct Shown {
    /// What was just done.
    pub(super) done: Option<String>,
    /// Why no collection file was made (nothing due).
    pub(super) error: Option<String>,
    /// The processor chosen in the form.
    pub(super) processor_id: String,
    /// The collection date typed.
    pub(super) collection_date: String,
    /// The collection file form's errors, by field name.
    pub(super) errors: BTreeMap<String, String>,
    /// What the return file just uploaded changed.
    pub(super) returns: Option<Value>,
    /// Why the return file was refused.
    pub(super) returns_error: Option<String>,
}

/// A collection file as the page lists it.
fn batch_row(lang: &str, b: &Batch) -> Value {
    context! {
        id => b.batch_key,
        date => b.collection_date.format("%Y-%m-%d").to_string(),
        count => b.count,
        total => euros(b.total, lang),
        message_id => b.message_id,
        created => display_time(b.created_at, lang),
        download_url => format!("{PAGE}/batches/{}/pain.008", b.batch_key),
    }
}

/// `cents` as an amount in euros, as people read it.
fn euros(cents: i64, lang: &str) -> String {
    Currency::parse("EUR")
        .map(|eur| display_amount(cents, eur, lang))
        .unwrap_or_else(|_| format!("{cents} EUR"))
}

/// The page with the collection files read with `query` (its cursor) and `shown`, answered
/// with `status`.
pub(super) async fn sepa_page(
    state: &AppState,
    staff: &Staff,
    t: &BTreeMap<String, String>,
    query: &str,
    status: StatusCode,
    shown: Shown,
) -> Result<Response, PageError> {
    let lang = i18n::lang(t);
    let ListQuery(page) = ListQuery::<PageParams>::parse(query)?;
    let found = batches::page(state, staff.merchant.id, page).await;
    let (rows, next) = match or_bad_request(state, t, found)? {
        Ok(found) => found,
        Err(page) => return Ok(page),
    };
    let sepa_processors: Vec<Value> = processors::list(state, staff.merchant.id)
        .await?
        .into_iter()
        .filter(|p| p.kind == Kind::SepaDebit)
        .map(|p| {
            let id = p.processor_id.to_string();
            context! {
                selected => id == shown.processor_id.trim(),
                id => id,
                name => p.name,
            }
        })
        .collect();
    framed_with_status(
        state,
        staff,
        t,
        status,
        "dashboard/sepa.html",
        "sepa",
        context! {
            processors => sepa_processors,
            batches => rows.iter().map(|b| batch_row(lang, b)).collect::<Vec<_>>(),
            next_url => next.as_deref().map(|cursor| link(PAGE, &[("cursor", Some(cursor))])),
            done => shown.done,
            error => shown.error,
            form => context! { collection_date => shown.collection_date },
            errors => shown.errors,
            returns => shown.returns,
            returns_error => shown.returns_error,
        },
    )
}

/// `GET /dashboard/sepa?cursor=&made=`: the page; `made` names the collection file just made.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let query = without_empty(query.as_deref());
    let done = match param(&query, "made") {
        Some(key) => match batches::get(&state, staff.merchant.id, &key).await {
            Ok(batch) => Some(made_text(t, &batch)),
            Err(ServiceError::NotFound) => None,
            Err(other) => return Err(other.into()),
        },
        None => None,
    };
    let list_query = without_made(&query);
    let shown = Shown {
        done,
        ..Shown::default()
    };
    sepa_page(&state, &staff, t, &list_query, StatusCode::OK, shown).await
}

/// `query` without its `made` parameter, which is no list parameter.
fn without_made(query: &str) -> String {
    let pairs = url::form_urlencoded::parse(query.as_bytes()).filter(|(key, _)| key != "made");
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// What the page says of the collection file just made.
fn made_text(t: &BTreeMap<String, String>, batch: &Batch) -> String {
    let lang = i18n::lang(t);
    t.get("dash_sepa_batch_made")
        .cloned()
        .unwrap_or_default()
        .replace("{id}", &batch.batch_key)
        .replace("{count}", &batch.count.to_string())
        .replace("{total}", &euros(batch.total, lang))
        .replace(
            "{date}",
            &batch.collection_date.format("%Y-%m-%d").to_string(),
        )
}

/// `POST /dashboard/sepa/batches` (`paymentProcessorId`, `collectionDate`): makes the
/// collection file and goes back to the page saying so (303); else the page with each field's
/// error (400) or, when no debit is due, why nothing was made (409).
pub async fn create_batch(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<BatchForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let (status, error, errors) = match batches::create(&state, staff.merchant.id, form.new_batch())
        .await
    {
        Ok(batch) => {
            let to = link(PAGE, &[("made", Some(&batch.batch_key))]);
            return Ok(Redirect::to(&to).into_response());
        }
        Err(ServiceError::Validation(errors)) => (StatusCode::BAD_REQUEST, None, beside(errors)),
        Err(ServiceError::Conflict(why)) => (StatusCode::CONFLICT, Some(why), BTreeMap::new()),
        Err(other) => return Err(other.into()),
    };
    let shown = Shown {
        error,
        errors,
        processor_id: form.payment_processor_id,
        collection_date: form.collection_date,
        ..Shown::default()
    };
    sepa_page(&state, &staff, t, "", status, shown).await
}

/// `GET /dashboard/sepa/batches/{batchId}/pain.008`: the collection file's `pain.008.001.08`
/// document as made, as an XML download. Another merchant's batch is the 404 page.
pub async fn download(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(batch_id): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let document = match batches::document(&state, staff.merchant.id, &batch_id).await {
        Ok(document) => document,
        Err(ServiceError::NotFound) => return notice::not_found(&state, t),
        Err(other) => return Err(other.into()),
    };
    // The key is recur's (`sb_` and base62), so it needs no quoting in the header.
    let disposition = format!("attachment; filename=\"{batch_id}.pain.008.xml\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/xml".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        document,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::input::Field;

    #[test]
    fn the_form_becomes_the_apis_body_and_made_is_no_list_parameter() {
        let form = BatchForm {
            payment_processor_id: " 301 ".into(),
            collection_date: "".into(),
            ..BatchForm::default()
        };
        let new = form.new_batch();
        assert!(matches!(new.payment_processor_id, Field::Present(301)));
        assert!(matches!(new.collection_date, Field::Absent));
        let odd = BatchForm {
            payment_processor_id: "x".into(),
            collection_date: "2027-03-02".into(),
            ..BatchForm::default()
        };
        let new = odd.new_batch();
        assert!(matches!(new.payment_processor_id, Field::Invalid(_)));
        assert!(matches!(new.collection_date, Field::Present(d) if d == "2027-03-02"));
        assert_eq!(without_made("made=sb_1&cursor=abc"), "cursor=abc");
        assert_eq!(without_made("made=sb_1"), "");
    }
}
