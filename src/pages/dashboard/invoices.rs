//! An invoice in the dashboard, as the customer's portal shows it: the printable page,
//! `GET /dashboard/invoices/{invoiceKey}` with its credit notes, and the PDF, `…/pdf` (the same
//! view and renderer as the portal's); a credit note's PDF, `GET /dashboard/credit-notes/{key}/pdf`.
//! Another merchant's invoice or credit note is the 404 page.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use minijinja::context;

use super::staff::Staff;
use crate::pages::credit_note_view::credit_note_view;
use crate::pages::failure::PageError;
use crate::pages::invoice_view::{invoice_view, InvoiceView};
use crate::pages::render::{page, Framing};
use crate::pages::{documents, invoice_pdf, notice, session};
use crate::state::AppState;
use crate::store::{credit_notes, customers, invoices, memberships};

/// The view of the staff's merchant's invoice `invoice_key`, with its membership's key and its
/// id; `None` when the merchant has no such invoice.
async fn view_of(
    state: &AppState,
    headers: &HeaderMap,
    staff: &Staff,
    invoice_key: &str,
) -> Result<Option<(InvoiceView, String, i64)>, PageError> {
    let pool = state.store.pool();
    let merchant_id = staff.merchant.id;
    let Some(invoice) = invoices::by_key(pool, merchant_id, invoice_key).await? else {
        return Ok(None);
    };
    let Some(m) = memberships::by_id(pool, merchant_id, invoice.membership_id).await? else {
        return Ok(None);
    };
    let Some(customer) = customers::by_id(pool, merchant_id, m.customer_id).await? else {
        return Ok(None);
    };
    let t = session::strings(state, headers);
    let view = invoice_view(t, &staff.brand, &customer, &m, &invoice);
    Ok(Some((view, m.membership_key, invoice.id)))
}

/// `GET /dashboard/invoices/{invoiceKey}`: the invoice as a printable page.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(invoice_key): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some((view, membership_key, id)) = view_of(&state, &headers, &staff, &invoice_key).await?
    else {
        return notice::not_found(&state, t);
    };
    let notes = credit_notes::of_invoice(state.store.pool(), staff.merchant.id, id).await?;
    let notes: Vec<_> = notes
        .iter()
        .map(|note| {
            let url = format!("/dashboard/credit-notes/{}/pdf", note.credit_note_key);
            credit_note_view(t, &view, note, url)
        })
        .collect();
    page(
        &state,
        StatusCode::OK,
        "invoice.html",
        context! {
            t => t,
            invoice => view,
            credit_notes => notes,
            pdf_url => format!("/dashboard/invoices/{invoice_key}/pdf"),
            back_url => format!("/dashboard/memberships/{membership_key}"),
            back_label => t.get("dash_back_to_membership"),
        },
        Some(&staff.brand),
        Framing::Deny,
    )
}

/// `GET /dashboard/invoices/{invoiceKey}/pdf`: the invoice as a PDF download.
pub async fn pdf(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(invoice_key): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    let Some((view, ..)) = view_of(&state, &headers, &staff, &invoice_key).await? else {
        return notice::not_found(&state, t);
    };
    invoice_pdf::download(&view, t, &invoice_key)
}

/// `GET /dashboard/credit-notes/{creditNoteKey}/pdf`: the credit note as a PDF download.
pub async fn credit_note_pdf(
    State(state): State<AppState>,
    headers: HeaderMap,
    staff: Staff,
    Path(key): Path<String>,
) -> Result<Response, PageError> {
    let t = session::strings(&state, &headers);
    documents::credit_note_pdf_of(&state, t, staff.merchant.id, &key).await
}
