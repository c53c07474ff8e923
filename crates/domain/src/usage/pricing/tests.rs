//! The metered price rules with worked examples, and their properties.

use super::*;
use proptest::prelude::*;
use serde_json::json;
use std::str::FromStr;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn cur(code: &str) -> Currency {
    Currency::parse(code).unwrap()
}

fn per_unit(unit: &str) -> MeteredPricing {
    MeteredPricing::PerUnit {
        unit_amount: unit_amount(unit).unwrap(),
    }
}

fn tier(up_to: Option<&str>, unit: &str, flat: &str) -> Tier {
    Tier {
        up_to: up_to.map(dec),
        unit_amount: dec(unit),
        flat_amount: dec(flat),
    }
}

/// 0.01 a unit up to 1000 units (plus 5.00 once), 0.008 up to 10000, 0.005 above.
fn example_tiers() -> Vec<Tier> {
    vec![
        tier(Some("1000"), "0.01", "5"),
        tier(Some("10000"), "0.008", "0"),
        tier(None, "0.005", "0"),
    ]
}

fn amount(pricing: &MeteredPricing, quantity: &str, currency: &str) -> Result<i64, String> {
    pricing.amount(dec(quantity), cur(currency))
}

#[test]
fn unit_amounts() {
    for (input, value) in [
        ("0.0025", "0.0025"),
        ("0", "0"),
        ("0.000000000001", "0.000000000001"),
        ("1000000000", "1000000000"),
        ("1000000000.000000000000000", "1000000000"),
        ("007.50", "7.5"),
    ] {
        assert_eq!(unit_amount(input), Ok(dec(value)), "{input}");
    }
    assert_eq!(unit_amount("007.50").unwrap().to_string(), "7.5");
    for input in [
        "", "-1", "+1", "1e3", " 1", "1 ", "1.", ".5", "1,5", "abc", "NaN",
    ] {
        assert_eq!(
            unit_amount(input),
            Err(
                "must be a decimal number such as 0.0025 (digits and an optional '.', no sign or exponent)"
                    .into()
            ),
            "{input:?}"
        );
    }
    assert_eq!(
        unit_amount("0.0000000000001"),
        Err("must have at most 12 decimal places".into())
    );
    let long = "9".repeat(40);
    for input in ["1000000000.000000000001", "1000000001", long.as_str()] {
        assert_eq!(
            unit_amount(input),
            Err("must be at most 1000000000".into()),
            "{input}"
        );
    }
}

#[test]
fn tiers_modes() {
    for mode in [TiersMode::Graduated, TiersMode::Volume] {
        assert_eq!(TiersMode::parse(mode.as_str()), Ok(mode));
        assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.as_str()));
    }
    for bad in ["", "Graduated", "tiered", "volume "] {
        assert_eq!(
            TiersMode::parse(bad),
            Err("must be graduated or volume".into())
        );
    }
}

fn tier_errors(tiers: Vec<Tier>) -> Vec<(String, String)> {
    MeteredPricing::tiered(TiersMode::Graduated, tiers).unwrap_err()
}

fn error(field: &str, message: &str) -> (String, String) {
    (field.to_string(), message.to_string())
}

#[test]
fn tiers_are_checked_field_by_field() {
    assert!(MeteredPricing::tiered(TiersMode::Volume, example_tiers()).is_ok());
    assert!(MeteredPricing::tiered(TiersMode::Graduated, vec![tier(None, "1", "0")]).is_ok());
    assert_eq!(
        tier_errors(vec![]),
        [error("tiers", "must have 1 to 100 tiers")]
    );
    let mut many: Vec<Tier> = (1..=MAX_TIERS)
        .map(|n| tier(Some(&n.to_string()), "1", "0"))
        .collect();
    many.push(tier(None, "1", "0"));
    assert_eq!(
        tier_errors(many.clone()),
        [error("tiers", "must have 1 to 100 tiers")]
    );
    many.remove(0);
    assert!(MeteredPricing::tiered(TiersMode::Graduated, many).is_ok());
    assert_eq!(
        tier_errors(vec![tier(None, "1", "0"), tier(Some("10"), "1", "0")]),
        [
            error("tiers[0].upTo", "must be given on every tier but the last"),
            error(
                "tiers[1].upTo",
                "must be null on the last tier, which covers every quantity above the tier before it"
            ),
        ]
    );
    assert_eq!(
        tier_errors(vec![
            tier(Some("0"), "1", "0"),
            tier(Some("10"), "1", "0"),
            tier(Some("10"), "1", "0"),
            tier(Some("5"), "1", "0"),
            tier(Some("0.0000000000001"), "1", "0"),
            tier(Some("1000000000000000"), "1", "0"),
            tier(None, "-0.01", "1000000000.5"),
        ]),
        [
            error("tiers[0].upTo", "must be greater than 0"),
            error(
                "tiers[2].upTo",
                "must be greater than the upTo of the tier before it (10)"
            ),
            error(
                "tiers[3].upTo",
                "must be greater than the upTo of the tier before it (10)"
            ),
            error(
                "tiers[4].upTo",
                "must be below 1000000000000000 with at most 12 decimal places"
            ),
            error(
                "tiers[5].upTo",
                "must be below 1000000000000000 with at most 12 decimal places"
            ),
            error(
                "tiers[6].unitAmount",
                "must be at least 0 and at most 1000000000, with at most 12 decimal places"
            ),
            error(
                "tiers[6].flatAmount",
                "must be at least 0 and at most 1000000000, with at most 12 decimal places"
            ),
        ]
    );
}

#[test]
fn package_sizes() {
    let five = dec("5");
    assert!(MeteredPricing::package(1, five).is_ok());
    assert!(MeteredPricing::package(MAX_PACKAGE_SIZE, five).is_ok());
    for size in [0, -1, MAX_PACKAGE_SIZE + 1, i64::MIN] {
        assert_eq!(
            MeteredPricing::package(size, five),
            Err("must be an integer from 1 to 1000000000".into())
        );
    }
}

#[test]
fn pricings_are_stored_as_json_and_read_back() {
    let cases = [
        (
            per_unit("0.0025"),
            json!({"model": "per_unit", "unitAmount": "0.0025"}),
        ),
        (
            MeteredPricing::package(100, dec("5")).unwrap(),
            json!({"model": "package", "size": 100, "unitAmount": "5"}),
        ),
        (
            MeteredPricing::tiered(
                TiersMode::Volume,
                vec![tier(Some("1000"), "0.01", "5"), tier(None, "0.005", "0")],
            )
            .unwrap(),
            json!({"model": "tiered", "mode": "volume", "tiers": [
                {"upTo": "1000", "unitAmount": "0.01", "flatAmount": "5"},
                {"upTo": null, "unitAmount": "0.005", "flatAmount": "0"},
            ]}),
        ),
    ];
    for (pricing, stored) in cases {
        assert_eq!(serde_json::to_value(&pricing).unwrap(), stored);
        assert_eq!(
            serde_json::from_value::<MeteredPricing>(stored).unwrap(),
            pricing
        );
    }
    let without_flat = json!({"model": "tiered", "mode": "graduated", "tiers": [
        {"upTo": null, "unitAmount": "1"},
    ]});
    let read: MeteredPricing = serde_json::from_value(without_flat).unwrap();
    assert_eq!(
        read,
        MeteredPricing::Tiered {
            mode: TiersMode::Graduated,
            tiers: vec![tier(None, "1", "0")]
        }
    );
}

#[test]
fn per_unit_amounts_round_half_up_once() {
    let calls = per_unit("0.0025");
    // 1234 × 0.0025 = 3.085 EUR: half a cent rounds up.
    assert_eq!(amount(&calls, "1234", "EUR"), Ok(309));
    assert_eq!(amount(&calls, "1", "EUR"), Ok(0));
    assert_eq!(amount(&calls, "2", "EUR"), Ok(1));
    // JPY has no minor unit: 1.5 and 2.5 yen both round up.
    let yen = per_unit("0.5");
    assert_eq!(amount(&yen, "3", "JPY"), Ok(2));
    assert_eq!(amount(&yen, "5", "JPY"), Ok(3));
    assert_eq!(amount(&yen, "4", "JPY"), Ok(2));
    assert_eq!(amount(&yen, "0.5", "JPY"), Ok(0));
    assert_eq!(amount(&per_unit("0.0005"), "1", "BHD"), Ok(1));
    // Fractional quantities: 2.5 GB at 0.10.
    assert_eq!(amount(&per_unit("0.10"), "2.5", "USD"), Ok(25));
}

#[test]
fn rounding_once_is_not_rounding_each_event() {
    let price = per_unit("0.004");
    let each_event: i64 = (0..1000).map(|_| amount(&price, "1", "EUR").unwrap()).sum();
    assert_eq!(each_event, 0);
    assert_eq!(amount(&price, "1000", "EUR"), Ok(400));
}

#[test]
fn package_amounts_charge_every_started_package() {
    let price = MeteredPricing::package(100, dec("5")).unwrap();
    for (quantity, minor) in [
        ("0", 0),
        ("0.000000000001", 500),
        ("1", 500),
        ("100", 500),
        ("100.5", 1000),
        ("101", 1000),
        ("250", 1500),
    ] {
        assert_eq!(amount(&price, quantity, "EUR"), Ok(minor), "{quantity}");
    }
    let yen = MeteredPricing::package(3, dec("2.5")).unwrap();
    assert_eq!(amount(&yen, "7", "JPY"), Ok(8)); // 3 packages: 7.5 yen
}

#[test]
fn graduated_amounts_add_the_tiers_up() {
    let price = MeteredPricing::tiered(TiersMode::Graduated, example_tiers()).unwrap();
    for (quantity, minor) in [
        ("0", 0),
        ("1", 501),       // 0.01 + 5.00
        ("1000", 1500),   // upTo is inclusive: tier 2 is not reached, nor its flat amount
        ("1000.5", 1500), // 15.004
        ("1001", 1501),   // 15.008
        ("10000", 8700),  // 15 + 9000 × 0.008
        ("12345", 9873),  // 15 + 72 + 2345 × 0.005 = 98.725
    ] {
        assert_eq!(amount(&price, quantity, "EUR"), Ok(minor), "{quantity}");
    }
}

#[test]
fn volume_amounts_price_every_unit_at_one_tier() {
    let price = MeteredPricing::tiered(TiersMode::Volume, example_tiers()).unwrap();
    for (quantity, minor) in [
        ("0", 0), // no usage, no charge: not even tier 1's flat amount
        ("1", 501),
        ("1000", 1500), // 1000 × 0.01 + 5
        ("1001", 801),  // 1001 × 0.008
        ("10000", 8000),
        ("10001", 5001), // 50.005: half a cent rounds up
        ("12345", 6173), // 61.725
    ] {
        assert_eq!(amount(&price, quantity, "EUR"), Ok(minor), "{quantity}");
    }
    let yen = MeteredPricing::tiered(
        TiersMode::Volume,
        vec![tier(Some("10"), "1.5", "0"), tier(None, "0.25", "0")],
    )
    .unwrap();
    assert_eq!(amount(&yen, "3", "JPY"), Ok(5)); // 4.5
    assert_eq!(amount(&yen, "10", "JPY"), Ok(15));
    assert_eq!(amount(&yen, "18", "JPY"), Ok(5)); // 4.5
}

#[test]
fn amounts_are_bounded() {
    let expensive = per_unit("1000000000");
    assert_eq!(
        amount(&expensive, "100000000000000", "EUR"),
        Err("comes to more than 9999999999999.99".into())
    );
    let yen = per_unit("1");
    assert_eq!(amount(&yen, "999999999999999", "JPY"), Ok(MAX_AMOUNT_MINOR));
    assert_eq!(
        amount(&yen, "999999999999999.4", "JPY"),
        Ok(MAX_AMOUNT_MINOR)
    );
    assert_eq!(
        amount(&yen, "999999999999999.5", "JPY"),
        Err("comes to more than 999999999999999".into())
    );
    // Far beyond any bound, yet no overflow.
    let huge = Decimal::MAX;
    assert!(expensive.amount(huge, cur("EUR")).is_err());
    let tiers = MeteredPricing::tiered(TiersMode::Graduated, example_tiers()).unwrap();
    assert!(tiers.amount(huge, cur("EUR")).is_err());
    // A free top tier: any count costs what the tiers below it do.
    let capped = MeteredPricing::tiered(
        TiersMode::Graduated,
        vec![tier(Some("10"), "1", "0"), tier(None, "0", "0")],
    )
    .unwrap();
    assert_eq!(capped.amount(Decimal::from(i64::MAX), cur("EUR")), Ok(1000));
    assert_eq!(per_unit("0").amount(huge, cur("EUR")), Ok(0));
}

#[test]
fn quantities_and_prices_outside_the_rules_are_refused() {
    let price = per_unit("1");
    let quantity = "the quantity must be at least 0 with at most 12 decimal places";
    assert_eq!(amount(&price, "-1", "EUR"), Err(quantity.into()));
    assert_eq!(
        amount(&price, "0.0000000000001", "EUR"),
        Err(quantity.into())
    );
    let negative = MeteredPricing::PerUnit {
        unit_amount: dec("-1"),
    };
    assert!(amount(&negative, "1", "EUR").is_err());
}

/// A decimal `mantissa × 10^-scale`.
fn decimal(
    mantissa: std::ops::Range<i64>,
    scale: std::ops::RangeInclusive<u32>,
) -> impl Strategy<Value = Decimal> {
    (mantissa, scale).prop_map(|(m, s)| Decimal::new(m, s))
}

fn currency() -> impl Strategy<Value = Currency> {
    prop::sample::select(vec!["EUR", "JPY", "BHD"]).prop_map(cur)
}

/// 1 to 5 tiers whose bounds are at least 1 apart, with small prices.
fn tiers() -> impl Strategy<Value = Vec<Tier>> {
    let step = decimal(1_000..100_000_000, 3..=3);
    let unit = decimal(0..10_000, 3..=6);
    let flat = prop_oneof![Just(Decimal::ZERO), decimal(0..100_000, 0..=2)];
    proptest::collection::vec((step, unit, flat), 1..=5).prop_map(|rows| {
        let last = rows.len() - 1;
        let mut up_to = Decimal::ZERO;
        rows.into_iter()
            .enumerate()
            .map(|(i, (step, unit_amount, flat_amount))| {
                up_to += step;
                Tier {
                    up_to: (i < last).then_some(up_to),
                    unit_amount,
                    flat_amount,
                }
            })
            .collect()
    })
}

fn quantity() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        Just(Decimal::ZERO),
        decimal(0..10_000_000_000, 0..=4),
        decimal(0..100_000_000, 0..=3),
        decimal(0..1_000, 0..=0),
    ]
}

/// The charge of tier `i` alone: the units of `q` between its bounds times its price, plus its
/// flat amount when there are any, unrounded.
fn tier_charge(tiers: &[Tier], i: usize, q: Decimal) -> Decimal {
    let lower = if i == 0 {
        Decimal::ZERO
    } else {
        tiers[i - 1].up_to.unwrap()
    };
    let upper = tiers[i].up_to.unwrap_or(q).min(q);
    if upper <= lower {
        return Decimal::ZERO;
    }
    (upper - lower) * tiers[i].unit_amount + tiers[i].flat_amount
}

/// What one tier charges for all of `q`, rounded.
fn volume_at(tier: &Tier, q: Decimal, currency: Currency) -> i64 {
    round_half_up(q * tier.unit_amount + tier.flat_amount, currency)
}

proptest! {
    /// A graduated amount is the sum of each tier's own charge, computed independently, rounded
    /// once.
    #[test]
    fn graduated_is_the_sum_of_the_tiers(tiers in tiers(), q in quantity(), currency in currency()) {
        let price = MeteredPricing::tiered(TiersMode::Graduated, tiers.clone()).unwrap();
        let exact: Decimal = (0..tiers.len()).map(|i| tier_charge(&tiers, i, q)).sum();
        prop_assert_eq!(price.amount(q, currency), Ok(round_half_up(exact, currency)));
    }

    /// More usage never costs less.
    #[test]
    fn graduated_never_decreases(tiers in tiers(), a in quantity(), b in quantity(), currency in currency()) {
        let price = MeteredPricing::tiered(TiersMode::Graduated, tiers).unwrap();
        let (low, high) = (a.min(b), a.max(b));
        prop_assert!(price.amount(low, currency).unwrap() <= price.amount(high, currency).unwrap());
    }

    /// A quantity equal to a tier's `upTo` is priced by that tier; just above it, by the next.
    #[test]
    fn volume_edges_are_inclusive(tiers in tiers(), currency in currency()) {
        let price = MeteredPricing::tiered(TiersMode::Volume, tiers.clone()).unwrap();
        for i in 0..tiers.len() - 1 {
            let edge = tiers[i].up_to.unwrap();
            prop_assert_eq!(price.amount(edge, currency), Ok(volume_at(&tiers[i], edge, currency)));
            for above in [edge + dec("0.000001"), edge + Decimal::ONE] {
                prop_assert_eq!(
                    price.amount(above, currency),
                    Ok(volume_at(&tiers[i + 1], above, currency))
                );
            }
        }
    }

    /// A per-unit amount is the exact product rounded once.
    #[test]
    fn per_unit_rounds_the_exact_product(
        unit in decimal(0..1_000_000_000_000, 3..=12),
        q in quantity(),
        currency in currency(),
    ) {
        let price = MeteredPricing::PerUnit { unit_amount: unit };
        let expected = round_half_up(q * unit, currency);
        let got = price.amount(q, currency);
        if expected <= MAX_AMOUNT_MINOR {
            prop_assert_eq!(got, Ok(expected));
        } else {
            prop_assert!(got.is_err());
        }
    }

    /// A package price charges ⌈quantity / size⌉ packages.
    #[test]
    fn package_charges_started_packages(
        size in 1i64..10_000,
        unit in decimal(0..10_000_000, 0..=4),
        q in quantity(),
        currency in currency(),
    ) {
        let price = MeteredPricing::package(size, unit).unwrap();
        let packages = (q / Decimal::from(size)).ceil();
        let expected = round_half_up(packages * unit, currency);
        let got = price.amount(q, currency);
        if expected <= MAX_AMOUNT_MINOR {
            prop_assert_eq!(got, Ok(expected));
        } else {
            prop_assert!(got.is_err());
        }
    }

    /// Whatever the model and quantity, an amount is never negative and never above the bound.
    #[test]
    fn amounts_are_never_negative(
        tiers in tiers(),
        graduated in any::<bool>(),
        unit in decimal(0..1_000_000_000_000, 3..=12),
        size in 1i64..=MAX_PACKAGE_SIZE,
        q in decimal(0..i64::MAX, 0..=12),
        currency in currency(),
    ) {
        let mode = if graduated { TiersMode::Graduated } else { TiersMode::Volume };
        for price in [
            MeteredPricing::tiered(mode, tiers.clone()).unwrap(),
            MeteredPricing::PerUnit { unit_amount: unit },
            MeteredPricing::package(size, unit).unwrap(),
        ] {
            match price.amount(q, currency) {
                Ok(minor) => prop_assert!((0..=MAX_AMOUNT_MINOR).contains(&minor)),
                Err(message) => prop_assert!(message.starts_with("comes to more than"), "{}", message),
            }
        }
    }
}
