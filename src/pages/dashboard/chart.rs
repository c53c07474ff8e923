//! The overview's revenue chart: one bar a day, drawn on the server as SVG with `plotters` (its
//! SVG backend only, no fonts: the figures are in the page's table, the chart only shows their
//! shape). The SVG is served from its own route and shown with `<img>`, so the page's strict
//! policy holds; it carries no script and no `style` attribute, only presentation attributes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::*;

use crate::pages::failure::PageError;

/// Width of the chart, in pixels.
const WIDTH: u32 = 600;
/// Height of the chart, in pixels.
const HEIGHT: u32 = 160;
/// Bars above the axis: money taken in.
const IN: RGBColor = RGBColor(0x1f, 0x7a, 0x4d);
/// Bars below the axis: a day whose refunds exceed its payments.
const OUT: RGBColor = RGBColor(0xb4, 0x23, 0x18);
/// The axis.
const AXIS: RGBColor = RGBColor(0x98, 0xa2, 0xb3);

/// The SVG of one bar per value of `days` (minor units, oldest first), scaled to the largest
/// magnitude, with the zero axis in the middle when a day is negative and at the bottom
/// otherwise. Heights are computed in integers: no money passes through a float.
pub fn revenue_svg(days: &[i64]) -> Result<String, PageError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let height = i128::from(HEIGHT) - 2;
        let any_negative = days.iter().any(|&d| d < 0);
        let axis = if any_negative {
            height / 2 + 1
        } else {
            height + 1
        };
        let room = if any_negative { height / 2 } else { height };
        let largest = days
            .iter()
            .map(|d| i128::from(*d).abs())
            .max()
            .unwrap_or(0)
            .max(1);
        let count = i128::try_from(days.len()).unwrap_or(1).max(1);
        let slot = i128::from(WIDTH) / count;
        for (i, &amount) in days.iter().enumerate() {
            let i = i128::try_from(i).unwrap_or(0);
            let bar = i128::from(amount) * room / largest;
            if bar == 0 {
                continue;
            }
            let (x0, x1) = (i * slot + 1, (i + 1) * slot - 1);
            let (top, bottom, colour) = if bar > 0 {
                (axis - bar, axis, IN)
            } else {
                (axis, axis - bar, OUT)
            };
            root.draw(&Rectangle::new(
                [(px(x0), px(top)), (px(x1), px(bottom))],
                colour.filled(),
            ))
            .map_err(draw_error)?;
        }
        root.draw(&PathElement::new(
            vec![(0, px(axis)), (px(i128::from(WIDTH)), px(axis))],
            AXIS.stroke_width(1),
        ))
        .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// A pixel coordinate (always within the chart's few hundred pixels).
fn px(value: i128) -> i32 {
    i32::try_from(value).unwrap_or(0)
}

fn draw_error<E: std::error::Error + Send + Sync>(error: DrawingAreaErrorKind<E>) -> PageError {
    PageError::Internal(anyhow::anyhow!("drawing the chart: {error}"))
}

/// `svg` as a response: `image/svg+xml` under a policy that forbids everything, so the file
/// runs nothing even opened on its own.
pub fn svg_response(svg: String) -> Response {
    let mut response = (StatusCode::OK, svg).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("image/svg+xml"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_follow_the_days_and_the_svg_has_no_script_or_style() {
        let svg = revenue_svg(&[0, 1000, 500, -250]).expect("drawn");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert_eq!(
            svg.matches("<rect").count(),
            4,
            "background and three bars: {svg}"
        );
        assert!(!svg.contains("style="), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("#1F7A4D") || svg.contains("#1f7a4d"), "{svg}");
        assert!(svg.contains("#B42318") || svg.contains("#b42318"), "{svg}");
        let flat = revenue_svg(&[0; 30]).expect("drawn");
        assert_eq!(flat.matches("<rect").count(), 1, "{flat}");
    }
}
