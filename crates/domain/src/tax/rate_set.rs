//! The tax rates a membership bills with (`taxRateIds`, DESIGN §14): at most
//! [`MAX_RATES_PER_MEMBERSHIP`] of the merchant's active rates, none twice, all inclusive or all
//! exclusive. The API reads the list and looks its rates up; these rules decide, with the field
//! errors it answers: [`requested_rate_ids`] before the lookup, [`rate_set`] after it.

use super::TaxRate;
use crate::validation::FieldErrors;

/// Most rates a membership bills with.
pub const MAX_RATES_PER_MEMBERSHIP: usize = 5;

/// The field that lists a membership's rates.
pub const TAX_RATE_IDS: &str = "taxRateIds";

/// The path of the list's `i`-th id: `taxRateIds[i]`.
pub fn rate_id_path(i: usize) -> String {
    format!("{TAX_RATE_IDS}[{i}]")
}

/// A merchant's rate the lookup found for a requested id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoundRate<'a> {
    /// The rate.
    pub rate: &'a TaxRate,
    /// `false` once archived: a rate given to no new membership.
    pub active: bool,
}

/// The ids of a membership's `taxRateIds`, checked before any is looked up: at most
/// [`MAX_RATES_PER_MEMBERSHIP`] (counted before an item is read: a longer list is refused under
/// `taxRateIds` alone), none listed twice (`taxRateIds[i]`: the later ones). Each item is its
/// id, or `None` when it is no id (its reader reports why). The ids in order, or the errors;
/// these are empty when only items that were no id failed.
pub fn requested_rate_ids<I>(items: I) -> Result<Vec<String>, FieldErrors>
where
    I: IntoIterator<Item = Option<String>>,
    I::IntoIter: ExactSizeIterator,
{
    let items = items.into_iter();
    let mut errors = FieldErrors::new();
    if items.len() > MAX_RATES_PER_MEMBERSHIP {
        errors.add(
            TAX_RATE_IDS,
            format!("must hold at most {MAX_RATES_PER_MEMBERSHIP} rates"),
        );
        return Err(errors);
    }
    let mut ids: Vec<String> = Vec::with_capacity(items.len());
    let mut failed = false;
    for (i, item) in items.enumerate() {
        match item {
            Some(id) if ids.contains(&id) => {
                errors.add(rate_id_path(i), "is listed twice");
                failed = true;
            }
            Some(id) => ids.push(id),
            None => failed = true,
        }
    }
    if failed {
        return Err(errors);
    }
    Ok(ids)
}

/// The rates a membership asking for `ids` bills with, given the merchant's rates `found` for
/// them (in any order; ids the merchant has no rate for left out): each rate in the order asked,
/// when the ids pass [`requested_rate_ids`], each is an active rate of the merchant
/// (`taxRateIds[i]`: "does not match a tax rate of this merchant", "is an archived tax rate")
/// and they are all inclusive or all exclusive (`taxRateIds`). Otherwise the errors.
pub fn rate_set(ids: &[String], found: &[FoundRate<'_>]) -> Result<Vec<TaxRate>, FieldErrors> {
    let ids = requested_rate_ids(ids.iter().cloned().map(Some))?;
    let mut errors = FieldErrors::new();
    let mut rates = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        match found.iter().find(|f| f.rate.tax_rate_id == *id) {
            Some(f) if f.active => rates.push(f.rate.clone()),
            Some(_) => errors.add(rate_id_path(i), "is an archived tax rate"),
            None => errors.add(
                rate_id_path(i),
                "does not match a tax rate of this merchant",
            ),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if rates.iter().any(|r| r.inclusive) && rates.iter().any(|r| !r.inclusive) {
        errors.add(TAX_RATE_IDS, "must be all inclusive or all exclusive rates");
        return Err(errors);
    }
    Ok(rates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rust_decimal::Decimal;

    fn rate(id: &str, inclusive: bool) -> TaxRate {
        TaxRate {
            tax_rate_id: id.into(),
            name: id.into(),
            percentage: Decimal::new(19, 0),
            inclusive,
            country: None,
        }
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|id| id.to_string()).collect()
    }

    /// The errors as `(path, message)` pairs.
    fn pairs(errors: FieldErrors) -> Vec<(String, String)> {
        errors
            .into_map()
            .into_iter()
            .flat_map(|(path, messages)| messages.into_iter().map(move |m| (path.clone(), m)))
            .collect()
    }

    fn pair(path: &str, message: &str) -> (String, String) {
        (path.into(), message.into())
    }

    #[test]
    fn at_most_five_ids_none_twice() {
        let six = (0..6).map(|i| Some(format!("txr_{i}")));
        assert_eq!(
            pairs(requested_rate_ids(six).unwrap_err()),
            [pair("taxRateIds", "must hold at most 5 rates")]
        );
        let twice = ["txr_a", "txr_b", "txr_a", "txr_a"].map(|id| Some(id.to_string()));
        assert_eq!(
            pairs(requested_rate_ids(twice).unwrap_err()),
            [
                pair("taxRateIds[2]", "is listed twice"),
                pair("taxRateIds[3]", "is listed twice"),
            ]
        );
        let no_id = [Some("txr_a".to_string()), None];
        assert_eq!(requested_rate_ids(no_id), Err(FieldErrors::new()));
        let fine = ["txr_a", "txr_b"].map(|id| Some(id.to_string()));
        assert_eq!(requested_rate_ids(fine), Ok(ids(&["txr_a", "txr_b"])));
        assert_eq!(requested_rate_ids(Vec::new()), Ok(Vec::new()));
    }

    #[test]
    fn each_rate_active_and_all_of_one_kind() {
        let (vat, gst, old) = (
            rate("txr_v", false),
            rate("txr_g", true),
            rate("txr_o", false),
        );
        let found = [
            FoundRate {
                rate: &gst,
                active: true,
            },
            FoundRate {
                rate: &vat,
                active: true,
            },
            FoundRate {
                rate: &old,
                active: false,
            },
        ];
        assert_eq!(rate_set(&ids(&["txr_v"]), &found), Ok(vec![vat.clone()]));
        assert_eq!(
            pairs(rate_set(&ids(&["txr_v", "txr_o", "txr_x"]), &found).unwrap_err()),
            [
                pair("taxRateIds[1]", "is an archived tax rate"),
                pair(
                    "taxRateIds[2]",
                    "does not match a tax rate of this merchant"
                ),
            ]
        );
        assert_eq!(
            pairs(rate_set(&ids(&["txr_g", "txr_v"]), &found).unwrap_err()),
            [pair(
                "taxRateIds",
                "must be all inclusive or all exclusive rates"
            )]
        );
        assert_eq!(rate_set(&[], &found), Ok(Vec::new()));
    }

    /// Up to eight rates `txr_0`…`txr_7`, each inclusive or not and active or not, and a request
    /// of up to seven ids among `txr_0`…`txr_9` (the last two the merchant does not have).
    fn any_request() -> impl Strategy<Value = (Vec<(bool, bool)>, Vec<usize>)> {
        (
            proptest::collection::vec((any::<bool>(), any::<bool>()), 8),
            proptest::collection::vec(0usize..10, 0..=7),
        )
    }

    proptest! {
        /// The rules accept exactly a set of at most five distinct ids, each an active rate of
        /// the merchant, all inclusive or all exclusive; then the rates come in the order asked.
        /// So no accepted set mixes inclusive and exclusive rates, lists one twice or holds
        /// more than five.
        #[test]
        fn rate_set_accepts_exactly_the_valid_sets((catalog, asked) in any_request()) {
            let rates: Vec<TaxRate> = catalog
                .iter()
                .enumerate()
                .map(|(i, (inclusive, _))| rate(&format!("txr_{i}"), *inclusive))
                .collect();
            let found: Vec<FoundRate> = rates
                .iter()
                .zip(&catalog)
                .map(|(rate, (_, active))| FoundRate { rate, active: *active })
                .rev()
                .collect();
            let requested: Vec<String> = asked.iter().map(|i| format!("txr_{i}")).collect();
            let mut distinct = asked.clone();
            distinct.sort_unstable();
            distinct.dedup();
            let valid = asked.len() <= MAX_RATES_PER_MEMBERSHIP
                && distinct.len() == asked.len()
                && asked.iter().all(|i| *i < 8 && catalog[*i].1)
                && (asked.iter().all(|i| catalog[*i].0) || asked.iter().all(|i| !catalog[*i].0));
            match rate_set(&requested, &found) {
                Ok(set) => {
                    prop_assert!(valid);
                    let asked_ids: Vec<&str> = set.iter().map(|r| r.tax_rate_id.as_str()).collect();
                    prop_assert_eq!(asked_ids, requested.iter().map(String::as_str).collect::<Vec<_>>());
                    prop_assert!(set.iter().all(|r| r.inclusive) || set.iter().all(|r| !r.inclusive));
                }
                Err(errors) => {
                    prop_assert!(!valid);
                    prop_assert!(!errors.is_empty());
                    prop_assert!(errors.as_map().keys().all(|path| path.starts_with(TAX_RATE_IDS)));
                }
            }
        }

        /// Before any lookup, a list is refused exactly when it is too long, lists an id twice
        /// or holds an item that is no id; the errors name the list or its later duplicates.
        #[test]
        fn requested_ids_refuse_long_lists_and_duplicates(
            items in proptest::collection::vec(proptest::option::weighted(0.9, 0usize..6), 0..=8),
        ) {
            let given: Vec<Option<String>> =
                items.iter().map(|i| i.map(|i| format!("txr_{i}"))).collect();
            let answer = requested_rate_ids(given.clone());
            let present: Vec<usize> = items.iter().flatten().copied().collect();
            let mut distinct = present.clone();
            distinct.sort_unstable();
            distinct.dedup();
            let too_long = items.len() > MAX_RATES_PER_MEMBERSHIP;
            let valid = !too_long && present.len() == items.len() && distinct.len() == present.len();
            prop_assert_eq!(answer.is_ok(), valid);
            match answer {
                Ok(ids) => prop_assert_eq!(Some(ids), given.into_iter().collect::<Option<Vec<_>>>()),
                Err(errors) if too_long => {
                    prop_assert_eq!(errors.as_map().keys().collect::<Vec<_>>(), vec![TAX_RATE_IDS]);
                }
                Err(errors) => {
                    let twice = errors.as_map().len();
                    prop_assert_eq!(twice, present.len() - distinct.len());
                }
            }
        }
    }
}
