//! Card cascading rules: which processors a cashier payment tries, in which order, and which
//! declines move it on to the next one.
//!
//! A *soft* decline says the gateway could not process the payment (an outage, a routing or
//! acquirer problem), so another gateway may well succeed. A *hard* decline is the issuer's
//! answer about the card or the account (declined, insufficient funds, lost or stolen card):
//! asking another gateway would get the same answer, so the cascade stops.

/// Decline codes after which the next card processor is tried.
pub const SOFT_DECLINES: [&str; 4] = [
    "processing_error",
    "issuer_unavailable",
    "try_again_later",
    "gateway_timeout",
];

/// Whether a decline with `code` moves the payment to the next card processor.
pub fn is_soft_decline(code: &str) -> bool {
    SOFT_DECLINES.contains(&code)
}

/// The processors a payment tries, in order: the one the customer chose, then, when it is a card
/// processor, every other offered card processor in the offered (cascade) order. Alternative
/// methods do not cascade. Empty when `chosen` is not offered.
pub fn route<T>(
    offered: &[T],
    chosen: i64,
    id: impl Fn(&T) -> i64,
    is_card: impl Fn(&T) -> bool,
) -> Vec<&T> {
    let Some(first) = offered.iter().find(|p| id(p) == chosen) else {
        return Vec::new();
    };
    let mut route = vec![first];
    if is_card(first) {
        route.extend(offered.iter().filter(|p| is_card(p) && id(p) != chosen));
    }
    route
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (id, is card)
    type P = (i64, bool);

    fn ids(route: Vec<&P>) -> Vec<i64> {
        route.into_iter().map(|p| p.0).collect()
    }

    #[test]
    fn card_choice_cascades_over_the_other_card_processors_in_order() {
        let offered: Vec<P> = vec![(101, true), (102, true), (201, false), (103, true)];
        assert_eq!(ids(route(&offered, 101, |p| p.0, |p| p.1)), [101, 102, 103]);
        assert_eq!(ids(route(&offered, 102, |p| p.0, |p| p.1)), [102, 101, 103]);
        assert_eq!(ids(route(&offered, 201, |p| p.0, |p| p.1)), [201]);
        assert!(route(&offered, 999, |p| p.0, |p| p.1).is_empty());
    }

    #[test]
    fn only_gateway_failures_are_soft() {
        assert!(is_soft_decline("processing_error"));
        assert!(!is_soft_decline("card_declined"));
        assert!(!is_soft_decline("insufficient_funds"));
    }

    proptest! {
        #[test]
        fn a_route_never_repeats_and_never_leaves_the_offer(
            kinds in proptest::collection::vec(any::<bool>(), 0..8),
            pick in 0usize..8,
        ) {
            let offered: Vec<P> = kinds.iter().enumerate().map(|(i, k)| (i as i64, *k)).collect();
            let chosen = pick as i64;
            let r = ids(route(&offered, chosen, |p| p.0, |p| p.1));
            let mut unique = r.clone();
            unique.sort();
            unique.dedup();
            prop_assert_eq!(unique.len(), r.len());
            prop_assert!(r.iter().all(|id| offered.iter().any(|p| p.0 == *id)));
            if let Some(first) = r.first() {
                prop_assert_eq!(*first, chosen);
            }
        }
    }
}
