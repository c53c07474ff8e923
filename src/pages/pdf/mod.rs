//! Writing PDF documents: a page to draw text and rules on ([`Document`]), set in DejaVu Sans
//! (Latin, Greek, Cyrillic), of which each PDF embeds the subset of glyphs it uses. Layouts
//! (`invoice_pdf`) place their text through it and know nothing of fonts or PDF objects.

mod document;
mod font;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

pub use document::{Document, Style, A4_HEIGHT, A4_WIDTH};

use crate::pages::failure::PageError;

/// `pdf` as a download named `file_name` (`invoice-in_….pdf`): `application/pdf`, an attachment,
/// never cached.
pub fn download(pdf: Vec<u8>, file_name: &str) -> Result<Response, PageError> {
    let disposition = format!("attachment; filename=\"{file_name}\"");
    let mut response = (StatusCode::OK, pdf).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/pdf"),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition).map_err(anyhow::Error::from)?,
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `data` compressed for a `FlateDecode` stream.
fn deflate(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(data, 9)
}

/// Every stream of `pdf`, inflated, as text (font files come out as noise): what a test reads
/// of the content and the CMaps.
#[cfg(test)]
pub(crate) fn inflated_streams(pdf: &[u8]) -> String {
    const START: &[u8] = b">>\nstream\n";
    let find =
        |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).position(|w| w == needle);
    let mut out = String::new();
    let mut rest = pdf;
    while let Some(start) = find(rest, START) {
        let body = &rest[start + START.len()..];
        let end = find(body, b"\nendstream").expect("endstream");
        let data = miniz_oxide::inflate::decompress_to_vec_zlib(&body[..end]).expect("zlib");
        out.push_str(&String::from_utf8_lossy(&data));
        out.push('\n');
        rest = &body[end..];
    }
    out
}
