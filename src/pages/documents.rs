//! The PDFs behind the `pdfUrl` of invoices and credit notes (DESIGN §9): signed links that work
//! without a token until they expire ([`links::document_url`]),
//! `GET /documents/invoices/{invoiceKey}/pdf` and `GET /documents/credit-notes/{key}/pdf`, each
//! with `merchant`, `expires` and `signature`. A link that is not signed, was signed for another
//! document or has expired is the 404 page, as an unknown key is.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;

use super::brand::Brand;
use super::credit_note_view::credit_note_view;
use super::invoice_view::{invoice_view, InvoiceView};
use super::{credit_note_pdf, invoice_pdf, notice, session};
use crate::links::{self, Document};
use crate::pages::failure::PageError;
use crate::state::AppState;
use crate::store::invoices::Invoice;
use crate::store::{credit_notes, customers, invoices, memberships, merchant_settings};

/// The merchant a link is signed for, when its signature holds for `document` `key` now.
fn signed_merchant(
    state: &AppState,
    query: &HashMap<String, String>,
    document: Document,
    key: &str,
) -> Option<i64> {
    let merchant_id = query.get("merchant")?.parse().ok()?;
    let expires = query.get("expires")?.parse().ok()?;
    let signature = query.get("signature")?;
    let now = state.clock.now();
    links::document_link_valid(state, merchant_id, document, key, expires, signature, now)
        .then_some(merchant_id)
}

/// The view of the merchant's `invoice`, as its customer's portal shows it.
pub async fn view_of(
    state: &AppState,
    t: &BTreeMap<String, String>,
    invoice: &Invoice,
) -> Result<Option<InvoiceView>, PageError> {
    let pool = state.store.pool();
    let merchant_id = invoice.merchant_id;
    let Some(m) = memberships::by_id(pool, merchant_id, invoice.membership_id).await? else {
        return Ok(None);
    };
    let Some(customer) = customers::by_id(pool, merchant_id, m.customer_id).await? else {
        return Ok(None);
    };
    let Some(named) = merchant_settings::with_name(pool, merchant_id).await? else {
        return Ok(None);
    };
    let brand = Brand::named(&named.merchant_name, named.settings);
    Ok(Some(invoice_view(t, &brand, &customer, &m, invoice)))
}

/// `GET /documents/invoices/{invoiceKey}/pdf?merchant=&expires=&signature=`.
pub async fn invoice(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(merchant_id) = signed_merchant(&state, &query, Document::Invoice, &key) else {
        return notice::not_found(&state, t);
    };
    let Some(invoice) = invoices::by_key(state.store.pool(), merchant_id, &key).await? else {
        return notice::not_found(&state, t);
    };
    match view_of(&state, t, &invoice).await? {
        Some(view) => invoice_pdf::download(&view, t, &invoice.invoice_key),
        None => notice::not_found(&state, t),
    }
}

/// `GET /documents/credit-notes/{creditNoteKey}/pdf?merchant=&expires=&signature=`.
pub async fn credit_note(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(key): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some(merchant_id) = signed_merchant(&state, &query, Document::CreditNote, &key) else {
        return notice::not_found(&state, t);
    };
    credit_note_pdf_of(&state, t, merchant_id, &key).await
}

/// The PDF of the merchant's credit note `key`; the 404 page when it has none.
pub async fn credit_note_pdf_of(
    state: &AppState,
    t: &BTreeMap<String, String>,
    merchant_id: i64,
    key: &str,
) -> Result<Response, PageError> {
    let pool = state.store.pool();
    let Some(note) = credit_notes::by_key(pool, merchant_id, key).await? else {
        return notice::not_found(state, t);
    };
    let Some(invoice) = invoices::get(pool, merchant_id, note.invoice_id).await? else {
        return notice::not_found(state, t);
    };
    let Some(invoice_view) = view_of(state, t, &invoice).await? else {
        return notice::not_found(state, t);
    };
    let view = credit_note_view(t, &invoice_view, &note, String::new());
    credit_note_pdf::download(&view, t)
}
