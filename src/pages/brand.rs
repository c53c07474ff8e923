//! A merchant's look on its hosted pages, from its settings (DESIGN §13): the name customers
//! see, the logo, the accent colour, and the seller's details invoices carry. The colour
//! arrives as a stylesheet of its own (`/assets/accent/RRGGBB.css`), so the pages keep a policy
//! of same-origin styles with no inline style; the logo's origin is added to the page's
//! `img-src` by [`super::render::page`].

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use recur_domain::settings::{accent_ink, brand_color, readable_on_white};
use serde::Serialize;

use crate::pages::failure::PageError;
use crate::state::AppState;
use crate::store::merchant_settings::{self, Settings};
use crate::store::merchants::Merchant;

/// What a merchant's pages show of it.
#[derive(Debug, Clone, Serialize)]
pub struct Brand {
    /// The name customers see: the display name, or the merchant's name.
    pub name: String,
    /// The logo, an absolute `https://` URL.
    pub logo_url: Option<String>,
    /// The path of the accent stylesheet, when the merchant set a brand colour.
    pub stylesheet: Option<String>,
    /// Who sells, as invoices name it.
    pub seller: Seller,
}

/// The seller's details on invoices (DESIGN §14), from the merchant's settings.
#[derive(Debug, Clone, Serialize)]
pub struct Seller {
    /// The legal name, or the name customers see when none is set.
    pub legal_name: String,
    /// The postal address's lines, then the country.
    pub address: Vec<String>,
    /// The merchant's tax id (VAT number and the like), when set.
    pub tax_id: Option<String>,
}

impl Brand {
    /// The brand of `merchant` with `settings`.
    pub fn new(merchant: &Merchant, settings: Settings) -> Self {
        Self::named(&merchant.name, settings)
    }

    /// The brand of the merchant named `merchant_name` with `settings`.
    pub fn named(merchant_name: &str, settings: Settings) -> Self {
        Self {
            name: settings.display_name_or(merchant_name).to_string(),
            seller: Seller {
                legal_name: settings.legal_name_or(merchant_name).to_string(),
                address: settings.address_lines(),
                tax_id: settings.tax_id.clone(),
            },
            stylesheet: settings
                .brand_color
                .as_deref()
                .map(|color| format!("/assets/accent/{}.css", color.trim_start_matches('#'))),
            logo_url: settings.logo_url,
        }
    }

    /// The brand of `merchant`, its settings read.
    pub async fn load(state: &AppState, merchant: &Merchant) -> Result<Self, PageError> {
        let settings = merchant_settings::get(state.store.pool(), merchant.id).await?;
        Ok(Self::new(merchant, settings))
    }

    /// The origin the logo loads from (`https://cdn.example`), for the page's `img-src`.
    pub fn image_origin(&self) -> Option<String> {
        let url = url::Url::parse(self.logo_url.as_deref()?).ok()?;
        let origin = url.origin();
        origin.is_tuple().then(|| origin.ascii_serialization())
    }
}

/// `GET /assets/accent/{RRGGBB}.css`: the stylesheet variables of a brand colour (the accent,
/// the text on it, and links when the colour is readable on white). It depends on the colour
/// alone, not on a merchant: no lookup, nothing revealed, and cacheable for good. Anything but
/// six hexadecimal digits and `.css` is a 404.
pub async fn accent_stylesheet(Path(file): Path<String>) -> Result<Response, PageError> {
    let color = file
        .strip_suffix(".css")
        .and_then(|hex| brand_color(&format!("#{hex}")).ok())
        .ok_or(PageError::NotFound)?;
    let link = if readable_on_white(&color) {
        format!(" --link: {color};")
    } else {
        String::new()
    };
    let css = format!(
        ":root {{ --accent: {color}; --accent-ink: {};{link} }}\n",
        accent_ink(&color)
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        css,
    )
        .into_response())
}
