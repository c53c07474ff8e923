//! Rules of a merchant's settings (DESIGN §13): the shape of each field, the defaults, and the
//! colours hosted pages derive from the brand colour. Country and e-mail fields use the
//! customer rules of [`crate::validation`]; the rules here are the ones only settings have.
//!
//! Each rule returns the value in its normal form, as [`crate::validation`]'s do.

use std::sync::LazyLock;

use regex::Regex;

use crate::validation::{bounded_text, https_url};

/// `invoicePrefix` when the merchant has not set one (DESIGN §9).
pub const DEFAULT_INVOICE_PREFIX: &str = "INV";
/// Longest `displayName`.
pub const MAX_DISPLAY_NAME_CHARS: usize = 100;
/// Longest `legalName`.
pub const MAX_LEGAL_NAME_CHARS: usize = 200;
/// Longest `address`, line breaks included.
pub const MAX_ADDRESS_CHARS: usize = 500;
/// Most lines of `address`.
pub const MAX_ADDRESS_LINES: usize = 10;
/// Longest `taxId`.
pub const MAX_TAX_ID_CHARS: usize = 50;
/// Longest `logoUrl`.
pub const MAX_LOGO_URL_CHARS: usize = 2048;
/// Longest `invoicePrefix`.
pub const MAX_INVOICE_PREFIX_CHARS: usize = 12;

/// A one-line text of 1 to `max_chars` characters, not blank, without control characters
/// (`displayName`, `legalName`, `taxId`: they end up in e-mail subjects, page titles and
/// invoices, where a line break or an escape has no place).
pub fn single_line(input: &str, max_chars: usize) -> Result<String, String> {
    let text = bounded_text(input, max_chars)?;
    if text.chars().any(char::is_control) {
        return Err("must be one line, without control characters".into());
    }
    Ok(text)
}

/// `address`: a multi-line text, not blank, of at most [`MAX_ADDRESS_CHARS`] characters and
/// [`MAX_ADDRESS_LINES`] lines. Lines break at `\n` or `\r\n` (returned as `\n`); no other
/// control characters.
pub fn address(input: &str) -> Result<String, String> {
    let text = input.replace("\r\n", "\n");
    let text = bounded_text(&text, MAX_ADDRESS_CHARS)?;
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err("must hold no control characters but line breaks".into());
    }
    if text.lines().count() > MAX_ADDRESS_LINES {
        return Err(format!("must have at most {MAX_ADDRESS_LINES} lines"));
    }
    Ok(text)
}

/// The rule of `brandColor` as a regular expression (the validator runs it, the OpenAPI
/// document publishes it): `#` and six hexadecimal digits, either case.
pub const BRAND_COLOR_PATTERN: &str = "^#[0-9A-Fa-f]{6}$";

/// `brandColor`: [`BRAND_COLOR_PATTERN`] (`#RRGGBB`). Returned uppercase.
pub fn brand_color(input: &str) -> Result<String, String> {
    static COLOR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(BRAND_COLOR_PATTERN).expect("a valid expression"));
    if COLOR.is_match(input) {
        Ok(input.to_ascii_uppercase())
    } else {
        Err("must be a colour written #RRGGBB (six hexadecimal digits)".into())
    }
}

/// `logoUrl`: an absolute `https://` URL with a host and no credentials, of at most
/// [`MAX_LOGO_URL_CHARS`] characters once normalized (see [`https_url`]).
pub fn logo_url(input: &str) -> Result<String, String> {
    let url = https_url(input)?;
    if url.chars().count() > MAX_LOGO_URL_CHARS {
        return Err(format!("must be at most {MAX_LOGO_URL_CHARS} characters"));
    }
    Ok(url)
}

/// The rule of `invoicePrefix` as a regular expression (run by the validator, published in the
/// OpenAPI document): 1 to [`MAX_INVOICE_PREFIX_CHARS`] ASCII letters, digits and hyphens,
/// starting and ending with a letter or digit.
pub const INVOICE_PREFIX_PATTERN: &str = "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,10}[A-Za-z0-9])?$";

/// `invoicePrefix`: [`INVOICE_PREFIX_PATTERN`], so that `PREFIX-000001` reads as one number and
/// is safe in a file name, a URL and a PDF. Letters are returned uppercase.
pub fn invoice_prefix(input: &str) -> Result<String, String> {
    static PREFIX: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(INVOICE_PREFIX_PATTERN).expect("a valid expression"));
    if PREFIX.is_match(input) {
        Ok(input.to_ascii_uppercase())
    } else {
        Err(format!(
            "must be 1 to {MAX_INVOICE_PREFIX_CHARS} letters (A-Z), digits and hyphens, starting \
             and ending with a letter or digit"
        ))
    }
}

/// When a price switch a customer makes in the portal applies (`portalPlanChange`): at once,
/// prorated (DESIGN §4), or at the next renewal, without proration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PortalPlanChange {
    /// At once, prorated (the default).
    #[default]
    Now,
    /// At the next renewal (the change is scheduled, as `"effective": "nextPeriod"` does).
    NextPeriod,
}

impl PortalPlanChange {
    /// Every value, in the order the dashboard offers them.
    pub const ALL: [PortalPlanChange; 2] = [PortalPlanChange::Now, PortalPlanChange::NextPeriod];

    /// The name as the API answers it and the store keeps it.
    pub fn as_str(self) -> &'static str {
        match self {
            PortalPlanChange::Now => "now",
            PortalPlanChange::NextPeriod => "nextPeriod",
        }
    }

    /// `now` or `nextPeriod`, in any letter case (as `effective` on a membership update).
    pub fn parse(input: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|value| value.as_str().eq_ignore_ascii_case(input))
            .ok_or_else(|| "must be now or nextPeriod".into())
    }
}

/// `portalPlanChange`: [`PortalPlanChange::parse`], returned in its normal form.
pub fn portal_plan_change(input: &str) -> Result<String, String> {
    PortalPlanChange::parse(input).map(|value| value.as_str().to_string())
}

/// The pages' ink (`--ink` of the stylesheet): text on light backgrounds.
pub const INK: &str = "#14213d";

/// The text colour for a button of `color` (a checked `#RRGGBB`): white or the pages' ink,
/// whichever contrasts more with it.
pub fn accent_ink(color: &str) -> &'static str {
    let Some(rgb) = parse_color(color) else {
        return "#fff";
    };
    let ink = parse_color(INK).map_or(0.0, luminance);
    let background = luminance(rgb);
    if contrast(1.0, background) >= contrast(ink, background) {
        "#fff"
    } else {
        INK
    }
}

/// Whether text of `color` (a checked `#RRGGBB`) is readable on white: a contrast of at least
/// 4.5:1 (WCAG AA for body text), so the pages may use it for links too.
pub fn readable_on_white(color: &str) -> bool {
    parse_color(color).is_some_and(|rgb| contrast(1.0, luminance(rgb)) >= 4.5)
}

fn parse_color(input: &str) -> Option<[u8; 3]> {
    let hex = input.strip_prefix('#')?;
    if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).ok();
    Some([channel(0)?, channel(2)?, channel(4)?])
}

/// WCAG 2 relative luminance of an sRGB colour.
fn luminance(rgb: [u8; 3]) -> f64 {
    let linear = |channel: u8| {
        let c = f64::from(channel) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
}

/// WCAG 2 contrast ratio of two luminances.
fn contrast(a: f64, b: f64) -> f64 {
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_texts() {
        assert_eq!(single_line("Café Zürich", 100).unwrap(), "Café Zürich");
        assert!(single_line(&"é".repeat(100), 100).is_ok());
        for bad in ["", "  ", "Two\nlines", "Tab\there", "Esc\u{1b}"] {
            assert!(single_line(bad, 100).is_err(), "{bad:?}");
        }
        assert!(single_line(&"é".repeat(101), 100).is_err());
    }

    #[test]
    fn addresses_are_multi_line() {
        assert_eq!(
            address("Main Street 1\r\n10115 Berlin\nGermany").unwrap(),
            "Main Street 1\n10115 Berlin\nGermany"
        );
        assert!(address(&"a\n".repeat(10)).is_ok());
        assert!(address(&"a\n".repeat(11)).is_err());
        assert!(address(&"x".repeat(501)).is_err());
        for bad in ["", " \n ", "Main\tStreet", "Main\u{0}Street", "bell\u{7}"] {
            assert!(address(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn brand_colours_are_six_hex_digits() {
        assert_eq!(brand_color("#1f4fd1").unwrap(), "#1F4FD1");
        for bad in [
            "",
            "1F4FD1",
            "#1F4FD",
            "#1F4FD1F",
            "#GGGGGG",
            "#1f4 d1",
            "red",
            "#fff",
            "#1F4FD1\n",
        ] {
            assert!(brand_color(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn logos_are_https_urls() {
        assert_eq!(
            logo_url("https://Cdn.example/logo.png").unwrap(),
            "https://cdn.example/logo.png"
        );
        for bad in [
            "http://cdn.example/logo.png",
            "/logo.png",
            "data:image/png;base64,AA",
        ] {
            assert!(logo_url(bad).is_err(), "{bad}");
        }
        let long = format!("https://cdn.example/{}", "a".repeat(MAX_LOGO_URL_CHARS));
        assert!(logo_url(&long).is_err());
    }

    #[test]
    fn invoice_prefixes() {
        assert_eq!(invoice_prefix("inv").unwrap(), "INV");
        assert_eq!(invoice_prefix("ACME-EU-2").unwrap(), "ACME-EU-2");
        assert!(invoice_prefix("A").is_ok());
        assert!(invoice_prefix(&"A".repeat(MAX_INVOICE_PREFIX_CHARS)).is_ok());
        for bad in ["", "-INV", "INV-", "IN V", "INV_1", "ÄBC", "INV/1", "INV\n"] {
            assert!(invoice_prefix(bad).is_err(), "{bad}");
        }
        assert!(invoice_prefix(&"A".repeat(MAX_INVOICE_PREFIX_CHARS + 1)).is_err());
        assert!(invoice_prefix(DEFAULT_INVOICE_PREFIX).is_ok());
    }

    #[test]
    fn portal_plan_changes_are_now_or_next_period() {
        assert_eq!(portal_plan_change("now").unwrap(), "now");
        assert_eq!(portal_plan_change("NEXTPERIOD").unwrap(), "nextPeriod");
        assert_eq!(PortalPlanChange::default(), PortalPlanChange::Now);
        for value in PortalPlanChange::ALL {
            assert_eq!(PortalPlanChange::parse(value.as_str()), Ok(value));
        }
        for bad in ["", "later", "next_period", "now ", "renewal"] {
            assert!(portal_plan_change(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_on_the_accent_contrasts_with_it() {
        assert_eq!(accent_ink("#1F4FD1"), "#fff");
        assert_eq!(accent_ink("#000000"), "#fff");
        assert_eq!(accent_ink("#FFD700"), INK);
        assert_eq!(accent_ink("#FFFFFF"), INK);
        assert!(readable_on_white("#1F4FD1"));
        assert!(!readable_on_white("#FFD700"));
        assert!(!readable_on_white("not a colour"));
    }
}
