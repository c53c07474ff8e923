use super::*;
use proptest::prelude::*;

fn pct(text: &str) -> Decimal {
    parse_percentage(text).unwrap()
}

/// A valid percentage: 0‥=100 with 4 decimal places.
fn any_percentage() -> impl Strategy<Value = Decimal> {
    (0i64..=1_000_000).prop_map(|n| Decimal::new(n, 4))
}

/// An amount in minor units of JPY (0 decimals), EUR (2) or BHD (3): up to a billion major
/// units, either sign.
fn any_amount() -> impl Strategy<Value = i64> {
    prop_oneof![
        -1_000_000_000i64..=1_000_000_000,
        -100_000_000_000i64..=100_000_000_000,
        -1_000_000_000_000i64..=1_000_000_000_000,
    ]
}

fn rate(id: &str, p: &str, inclusive: bool, country: Option<&str>) -> TaxRate {
    TaxRate {
        tax_rate_id: id.into(),
        name: id.into(),
        percentage: pct(p),
        inclusive,
        country: country.map(str::to_string),
    }
}

#[test]
fn percentages_are_checked() {
    assert_eq!(pct("19.0"), Decimal::new(19, 0));
    assert_eq!(pct("7.1250"), Decimal::new(7125, 3));
    assert_eq!(pct("100"), Decimal::ONE_HUNDRED);
    assert_eq!(pct("0"), Decimal::ZERO);
    assert_eq!(pct("19.00000"), Decimal::new(19, 0));
    for bad in ["", "-1", "100.0001", "1.23456", "abc", "1e2", "NaN", "101"] {
        assert_eq!(parse_percentage(bad), Err(PERCENTAGE_RULE), "{bad}");
    }
}

#[test]
fn exclusive_examples() {
    // 19 % of €10.00 is €1.90; of €0.05 it is 0.95 cent, rounded to 1.
    assert_eq!(exclusive_tax(1000, pct("19")), 190);
    assert_eq!(exclusive_tax(5, pct("19")), 1);
    // Half away from zero: 2.5 → 3, −2.5 → −3.
    assert_eq!(exclusive_tax(25, pct("10")), 3);
    assert_eq!(exclusive_tax(-25, pct("10")), -3);
    // JPY: 10 % of ¥1,234 is ¥123.4 → ¥123.
    assert_eq!(exclusive_tax(1234, pct("10")), 123);
}

#[test]
fn inclusive_examples() {
    // €11.90 with 19 % contained: €1.90.
    assert_eq!(inclusive_taxes(1190, &[pct("19")]), vec![190]);
    // Two rates share the divisor 100 + 19 + 7: 1260 × 19 / 126 = 190, × 7 / 126 = 70.
    assert_eq!(inclusive_taxes(1260, &[pct("19"), pct("7")]), vec![190, 70]);
}

#[test]
fn reverse_charge_skips_eu_rates_only() {
    let rates = [
        rate("txr_de", "19", false, Some("DE")),
        rate("txr_any", "1", false, None),
        rate("txr_us", "5", false, Some("US")),
    ];
    let b2b = Parties {
        merchant_country: Some("DE".into()),
        customer_country: Some("FR".into()),
        customer_has_eu_vat: true,
    };
    let taxation = Taxation::new(&rates, &b2b);
    assert!(taxation.reverse_charge);
    let kept: Vec<&str> = taxation
        .rates
        .iter()
        .map(|r| r.tax_rate_id.as_str())
        .collect();
    assert_eq!(kept, ["txr_any", "txr_us"]);
    // Same country, no VAT id, or a country outside the EU: every rate applies.
    for parties in [
        Parties {
            customer_country: Some("DE".into()),
            ..b2b.clone()
        },
        Parties {
            customer_has_eu_vat: false,
            ..b2b.clone()
        },
        Parties {
            customer_country: Some("CH".into()),
            ..b2b.clone()
        },
        Parties {
            merchant_country: None,
            ..b2b.clone()
        },
    ] {
        let taxation = Taxation::new(&rates, &parties);
        assert!(!taxation.reverse_charge);
        assert_eq!(taxation.rates.len(), 3);
    }
}

#[test]
fn the_eu_has_27_distinct_members() {
    let mut codes = EU_MEMBER_STATES.to_vec();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), 27);
    assert!(is_eu_member("fr") && !is_eu_member("GB") && !is_eu_member("EL"));
}

proptest! {
    #[test]
    fn exclusive_rounding_error_is_under_half_a_unit(base in any_amount(), p in any_percentage()) {
        let exact = Decimal::from(base) * p / Decimal::ONE_HUNDRED;
        let error = (Decimal::from(exclusive_tax(base, p)) - exact).abs();
        prop_assert!(error <= Decimal::new(5, 1));
    }

    #[test]
    fn exclusive_is_monotone(a in any_amount(), b in any_amount(), p in any_percentage()) {
        let (low, high) = (a.min(b), a.max(b));
        prop_assert!(exclusive_tax(low, p) <= exclusive_tax(high, p));
    }

    #[test]
    fn taxes_are_symmetric(a in any_amount(), p in any_percentage(), q in any_percentage()) {
        prop_assert_eq!(exclusive_tax(-a, p), -exclusive_tax(a, p));
        let negated: Vec<i64> = inclusive_taxes(a, &[p, q]).iter().map(|t| -t).collect();
        prop_assert_eq!(inclusive_taxes(-a, &[p, q]), negated);
    }

    #[test]
    fn zero_percent_is_no_tax(a in any_amount()) {
        prop_assert_eq!(exclusive_tax(a, Decimal::ZERO), 0);
        prop_assert_eq!(inclusive_taxes(a, &[Decimal::ZERO]), vec![0]);
    }

    #[test]
    fn inclusive_taxes_fit_in_the_total(
        total in any_amount(),
        ps in proptest::collection::vec(any_percentage(), 1..4),
    ) {
        let taxes = inclusive_taxes(total, &ps);
        let sum: i64 = taxes.iter().sum();
        let net = total - sum;
        prop_assert!(sum.abs() <= total.abs());
        prop_assert_eq!(net + sum, total);
        // Each tax is within half a unit of the exact share.
        let divisor = Decimal::ONE_HUNDRED + ps.iter().copied().sum::<Decimal>();
        for (tax, p) in taxes.iter().zip(&ps) {
            let exact = Decimal::from(total) * *p / divisor;
            prop_assert!((Decimal::from(*tax) - exact).abs() <= Decimal::new(5, 1));
        }
    }

    #[test]
    fn one_inclusive_rate_is_the_design_formula(total in any_amount(), p in any_percentage()) {
        let exact = Decimal::from(total) * p / (Decimal::ONE_HUNDRED + p);
        let tax = inclusive_taxes(total, &[p])[0];
        prop_assert!((Decimal::from(tax) - exact).abs() <= Decimal::new(5, 1));
    }
}
