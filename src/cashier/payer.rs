//! The payer of a cashier order: the session's billing details, and the account id recur
//! derives for them.

use serde::Deserialize;

use crate::events::transaction::{account_id, AccountDetails};
use crate::keys::ServerKeys;
use crate::store::cashier_sessions::CashierSession;

/// The billing details a session was opened with.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payer {
    /// First (or full) name.
    pub first_name: String,
    /// Last name.
    pub last_name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Street.
    pub street: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// City.
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// Postal code.
    pub zip_code: Option<String>,
    /// E.164 phone.
    pub phone: String,
    /// `YYYY-MM-dd`.
    pub date_of_birth: Option<String>,
}

impl Payer {
    /// The payer of `session`.
    pub fn of(session: &CashierSession) -> anyhow::Result<Payer> {
        Ok(serde_json::from_str(&session.fields.billing_details)?)
    }

    /// `AccountId` of this payer ([`account_id`]).
    pub fn account_id(&self, keys: &ServerKeys, merchant_id: i64) -> String {
        account_id(keys, merchant_id, &self.email)
    }

    /// `AccountDetails` of a notification about `session`.
    pub fn details(&self, session: &CashierSession) -> AccountDetails {
        AccountDetails {
            merchant_id: session.merchant_id,
            created: Some(session.created_at),
            first_name: Some(self.first_name.clone()),
            last_name: self.last_name.clone(),
            email: Some(self.email.clone()),
            currency: session.fields.currency.clone(),
            country: Some(self.country.clone()),
            dob: self.date_of_birth.as_deref().and_then(dob_text),
            city: self.city.clone(),
            zip_code: self.zip_code.clone(),
            region: self.region.clone(),
            street: self.street.clone(),
            phone: Some(self.phone.clone()),
        }
    }
}

/// `YYYY-MM-dd` as the spec's month/day/year text (`03/15/1990`).
fn dob_text(date: &str) -> Option<String> {
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .ok()
        .map(|d| d.format("%m/%d/%Y").to_string())
}

#[cfg(test)]
mod tests {
    use super::dob_text;

    #[test]
    fn date_of_birth_reads_month_day_year() {
        assert_eq!(dob_text("1990-03-15").as_deref(), Some("03/15/1990"));
        assert_eq!(dob_text("15.03.1990"), None);
    }
}
