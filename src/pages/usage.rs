//! A membership's usage as the portal and the dashboard show it (DESIGN §19), for the template
//! `usage.html`: the current period's dates and, per meter, its name and code, the quantity and
//! amount so far and the chart of its last periods ([`super::usage_chart`]).

use std::collections::BTreeMap;

use minijinja::{context, Value};
use recur_domain::money::display_amount;

use super::format::{display_date, display_quantity};
use super::usage_chart::{self, AXIS, HEIGHT, WIDTH};
use crate::services::usage::{PeriodQuantity, UsageSummary};

/// The template context of `summary` in the page's language.
pub fn usage_view(t: &BTreeMap<String, String>, lang: &str, summary: &UsageSummary) -> Value {
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    let current = &summary.current;
    let period = text("usage_period")
        .replace("{start}", &display_date(current.period_start, lang))
        .replace("{end}", &display_date(current.period_end, lang));
    let meters: Vec<Value> = current
        .meters
        .iter()
        .zip(&summary.history)
        .map(|(meter, history)| {
            let name = &meter.term.meter_name;
            context! {
                name => name,
                code => meter.term.meter_code,
                quantity => display_quantity(meter.priced.quantity, lang),
                amount => display_amount(meter.priced.amount, current.currency, lang),
                chart => chart(t, lang, name, history),
            }
        })
        .collect();
    context! { period, meters }
}

/// The chart of one meter's `history`: its size, its axis, its bars with the period and
/// quantity each stands for, and the label that names it.
fn chart(
    t: &BTreeMap<String, String>,
    lang: &str,
    name: &str,
    history: &[PeriodQuantity],
) -> Value {
    let text = |key: &str| t.get(key).cloned().unwrap_or_default();
    let quantities: Vec<_> = history.iter().map(|p| p.quantity).collect();
    let bars: Vec<Value> = usage_chart::bars(&quantities)
        .into_iter()
        .zip(history)
        .map(|(bar, period)| {
            let date = display_date(period.period_start, lang);
            let quantity = display_quantity(period.quantity, lang);
            let title = text("usage_bar")
                .replace("{date}", &date)
                .replace("{quantity}", &quantity);
            context! {
                current => period.current,
                date => date,
                quantity => quantity,
                title => title,
                ..Value::from_serialize(bar)
            }
        })
        .collect();
    context! {
        width => WIDTH,
        height => HEIGHT,
        axis => AXIS,
        label => text("usage_chart").replace("{meter}", name).replace("{n}", &bars.len().to_string()),
        bars => bars,
    }
}
