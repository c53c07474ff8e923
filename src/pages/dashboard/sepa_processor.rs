//! The processors page's SEPA form (DESIGN §18): connecting the merchant's own collection
//! account as a SEPA processor (name, creditor identifier, creditor name, IBAN, BIC,
//! pre-notification lead) through the service of `POST /processors` with kind `sepa_debit`
//! ([`processors::connect`]): the same checks (the creditor identifier's and the IBAN's check
//! digits, the lead 1–14), the same limit. A success goes back to the page saying so; a
//! refused field shows the form again with the reason beside it (400), the limit above the
//! list (409). Its removal is the page's ([`super::processors::remove`]).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::fields::{self, beside};
use super::processors::{done, list_page, Shown};
use super::staff;
use crate::http::input::Field;
use crate::pages::failure::PageError;
use crate::pages::form::PageForm;
use crate::pages::session;
use crate::services::processors::{self, NewProcessor};
use crate::services::sepa::creditors::NewSepa;
use crate::services::ServiceError;
use crate::state::AppState;

/// The SEPA connection form as posted.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SepaForm {
    /// The session's form token.
    #[serde(default)]
    csrf_token: String,
    /// The processor's name.
    #[serde(default)]
    name: String,
    /// The SEPA creditor identifier.
    #[serde(default)]
    creditor_id: String,
    /// The creditor name on mandates and collection files; blank: the name.
    #[serde(default)]
    creditor_name: String,
    /// The collection account's IBAN.
    #[serde(default)]
    iban: String,
    /// The collection account's BIC; blank: none.
    #[serde(default)]
    bic: String,
    /// Days of pre-notification, 1–14; blank: 5.
    #[serde(default)]
    lead_days: String,
}

impl SepaForm {
    /// The connection it asks for, each field as the API's body would give it.
    fn new_sepa(&self) -> NewProcessor {
        NewProcessor {
            kind: Field::Present("sepa_debit".to_string()),
            name: fields::text(&self.name),
            sepa: NewSepa {
                creditor_id: fields::text(&self.creditor_id),
                creditor_name: fields::text(&self.creditor_name),
                iban: fields::text(&self.iban),
                bic: fields::text(&self.bic),
                lead_days: fields::number(&self.lead_days),
            },
            ..NewProcessor::default()
        }
    }

    /// What was typed, by the field's name, to show the form again.
    fn typed(&self) -> BTreeMap<String, String> {
        [
            ("name", &self.name),
            ("creditorId", &self.creditor_id),
            ("creditorName", &self.creditor_name),
            ("iban", &self.iban),
            ("bic", &self.bic),
            ("leadDays", &self.lead_days),
        ]
        .into_iter()
        .map(|(field, value)| (field.to_string(), value.clone()))
        .collect()
    }
}

/// `POST /dashboard/processors/sepa` (`name`, `creditorId`, `creditorName`, `iban`, `bic`,
/// `leadDays`): connects the SEPA processor and goes back to the page (303); else the form
/// again with each field's error (400) or why nothing was stored (409 the limit).
pub async fn connect(
    State(state): State<AppState>,
    headers: HeaderMap,
    PageForm(form): PageForm<SepaForm>,
) -> Result<Response, PageError> {
    let staff = match staff::posting(&state, &headers, &form.csrf_token).await? {
        Ok(staff) => staff,
        Err(answer) => return Ok(answer),
    };
    let t = session::strings(&state, &headers);
    let (status, error, errors) =
        match processors::connect(&state, staff.merchant.id, form.new_sepa()).await {
            Ok(_) => return Ok(done("connected_sepa")),
            Err(ServiceError::Validation(errors)) => {
                (StatusCode::BAD_REQUEST, None, beside(errors))
            }
            Err(ServiceError::Conflict(why)) => (StatusCode::CONFLICT, Some(why), BTreeMap::new()),
            Err(other) => return Err(other.into()),
        };
    let shown = Shown {
        error,
        sepa_form: form.typed(),
        sepa_errors: errors,
        ..Shown::default()
    };
    list_page(&state, &staff, t, status, shown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_apis_body() {
        let form = SepaForm {
            name: " Club ".into(),
            creditor_id: "DE98ZZZ09999999999".into(),
            iban: " DE89370400440532013000 ".into(),
            lead_days: "three".into(),
            ..SepaForm::default()
        };
        let new = form.new_sepa();
        assert!(matches!(new.kind, Field::Present(k) if k == "sepa_debit"));
        assert!(matches!(new.name, Field::Present(n) if n == "Club"));
        assert!(matches!(new.sepa.iban, Field::Present(i) if i == "DE89370400440532013000"));
        assert!(matches!(new.sepa.creditor_name, Field::Absent));
        assert!(matches!(new.sepa.bic, Field::Absent));
        assert!(matches!(new.sepa.lead_days, Field::Invalid(_)));
        assert!(matches!(new.secret_key, Field::Absent));
        assert_eq!(form.typed()["leadDays"], "three");
        assert_eq!(form.typed()["creditorName"], "");
    }
}
