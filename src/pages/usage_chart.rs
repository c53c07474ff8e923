//! The geometry of the usage chart the portal and the dashboard show per meter: its quantity in
//! its last periods, one bar a period, oldest left, the current period at the right end. The
//! template `usage.html` draws it as inline SVG from these numbers; the SVG carries no script and
//! no `style` attribute (its colours are classes of `recur.css`), so the pages' strict policy
//! holds. Heights are computed with exact decimals and integers: no quantity passes a float.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::Serialize;

use crate::services::usage::HISTORY_PERIODS;

/// Width of the chart, in SVG units (its pixels at full size).
pub const WIDTH: i64 = 240;
/// Height of the chart, in SVG units.
pub const HEIGHT: i64 = 64;
/// Where the axis runs, across the chart's bottom.
pub const AXIS: i64 = HEIGHT - 1;
/// The room a bar has per period.
const SLOT: i64 = WIDTH / HISTORY_PERIODS as i64;
/// A bar's width inside its slot.
const BAR: i64 = SLOT * 7 / 10;
/// The tallest bar's height: the axis' height less a margin at the top.
const ROOM: i64 = AXIS - 2;

/// One bar: a rectangle standing on the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bar {
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width.
    pub width: i64,
    /// Height; 0 for a quantity of 0, at least 1 for any other.
    pub height: i64,
}

/// The bars of `quantities` (oldest first, at most [`HISTORY_PERIODS`]; a negative one is drawn
/// as 0), scaled to the largest, right-aligned so the last is at the chart's right end.
pub fn bars(quantities: &[Decimal]) -> Vec<Bar> {
    let largest = quantities.iter().copied().fold(Decimal::ZERO, Decimal::max);
    let count = i64::try_from(quantities.len()).unwrap_or(i64::MAX);
    quantities
        .iter()
        .zip(0..)
        .map(|(quantity, i)| {
            let height = height(*quantity, largest);
            Bar {
                x: WIDTH - (count - i) * SLOT + (SLOT - BAR) / 2,
                y: AXIS - height,
                width: BAR,
                height,
            }
        })
        .collect()
}

/// `quantity`'s height with `largest` at [`ROOM`], rounded half up, at least 1 unless it is 0.
fn height(quantity: Decimal, largest: Decimal) -> i64 {
    if quantity <= Decimal::ZERO || largest <= Decimal::ZERO {
        return 0;
    }
    // quantity / largest ≤ 1: the product cannot overflow.
    let scaled = (quantity / largest * Decimal::from(ROOM))
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
    scaled.to_i64().unwrap_or(ROOM).clamp(1, ROOM)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimals(values: &[&str]) -> Vec<Decimal> {
        values.iter().map(|v| v.parse().unwrap()).collect()
    }

    #[test]
    fn bars_scale_to_the_largest_and_end_at_the_right() {
        let drawn = bars(&decimals(&["1000", "500", "0", "0.001"]));
        assert_eq!(drawn.len(), 4);
        let heights: Vec<i64> = drawn.iter().map(|b| b.height).collect();
        assert_eq!(heights, [ROOM, ROOM / 2 + ROOM % 2, 0, 1]);
        for bar in &drawn {
            assert_eq!(bar.y + bar.height, AXIS);
            assert!(bar.x >= 0 && bar.x + bar.width <= WIDTH);
        }
        assert_eq!(drawn[3].x, WIDTH - SLOT + (SLOT - BAR) / 2);
        assert!(drawn.windows(2).all(|w| w[1].x - w[0].x == SLOT));
    }

    #[test]
    fn nothing_used_is_flat_and_six_periods_fill_the_width() {
        assert!(bars(&decimals(&["0", "0"])).iter().all(|b| b.height == 0));
        assert!(bars(&[]).is_empty());
        let six = bars(&decimals(&["1", "2", "3", "4", "5", "6"]));
        assert_eq!(six[0].x, (SLOT - BAR) / 2);
        let huge = Decimal::MAX;
        assert_eq!(bars(&[huge, Decimal::ONE])[0].height, ROOM);
    }
}
