//! The cashier's outcome page. Inside an iframe its script (`assets/cashier-page.js`) posts the
//! outcome to the parent page, whose `cashier.js` then sends the top window on: only to the
//! merchant's origin, the origin of the session's redirect URL for that outcome, never to `*`.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::Response;
use minijinja::context;
use recur_domain::money::display_amount;

use super::Cashier;
use crate::i18n;
use crate::pages::failure::PageError;
use crate::pages::form::decline_message;
use crate::pages::render::{page as render, Framing};
use crate::state::AppState;
use crate::store::cashier_sessions::NewCashierSession;
use crate::store::cashier_transactions::{self, CashierTransaction, TransactionStatus};

/// The order's outcome: after a payment inside an iframe (with the redirect the parent page
/// performs), or when a completed session's link is opened again.
pub(super) async fn page(
    state: &AppState,
    t: &BTreeMap<String, String>,
    cashier: &Cashier,
    transaction: Option<&CashierTransaction>,
) -> Result<Response, PageError> {
    let latest = match transaction {
        Some(t) => Some(t.clone()),
        None => {
            cashier_transactions::latest(
                state.store.pool(),
                cashier.merchant.id,
                &cashier.session.fields.order_id,
                None,
            )
            .await?
        }
    };
    let lang = i18n::lang(t);
    let fields = &cashier.session.fields;
    let success = latest
        .as_ref()
        .is_some_and(|t| t.status == TransactionStatus::Success);
    let redirect = transaction.and_then(|_| {
        if success {
            fields.success_redirect_url.clone()
        } else {
            fields.failed_redirect_url.clone()
        }
    });
    let reason = latest
        .as_ref()
        .filter(|_| !success)
        .map(|tr| decline_message(t, tr.decline_code.as_deref().unwrap_or_default()));
    render(
        state,
        StatusCode::OK,
        "cashier_done.html",
        context! {
            t => t,
            order_id => fields.order_id,
            success => success,
            payout => fields.is_payout,
            amount => latest.as_ref().map(|tr| display_amount(tr.amount, cashier.currency, lang)),
            card => latest.as_ref().and_then(|tr| tr.card.as_ref()).map(|c| context! { brand => c.brand, last4 => c.last4 }),
            reason => reason,
            transaction_id => latest.as_ref().map(|tr| tr.id),
            redirect => redirect,
            parent_origin => parent_origin(fields, success),
            outcome => if success { "success" } else { "failed" },
        },
        Some(&cashier.brand),
        Framing::Embeddable,
    )
}

/// The origin the outcome is posted to: that of the session's `successRedirectUrl` (after a
/// success) or `failedRedirectUrl`, the merchant's site that embeds the cashier. `None` without
/// one: then nothing is posted.
fn parent_origin(fields: &NewCashierSession, success: bool) -> Option<String> {
    let target = if success {
        fields.success_redirect_url.as_deref()
    } else {
        fields.failed_redirect_url.as_deref()
    }?;
    let origin = url::Url::parse(target).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}
