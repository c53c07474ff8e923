//! Claiming due deliveries: of events to their own URLs and to registered endpoints, earliest
//! first over both, bounded per endpoint, leased so that one dispatcher alone delivers each.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context;

use super::target::Target;
use super::{endpoint_of, Delivery, Dispatcher, PER_ENDPOINT};
use crate::platform::Platform;
use crate::store::endpoint_deliveries;
use crate::store::events::{self, Candidate, Scope};
use crate::store::merchants::{self, Merchant};

/// Which queue a candidate is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Queue {
    /// `events`: an event to its own URL.
    Own,
    /// `endpoint_deliveries`: an event to a registered endpoint.
    Endpoint,
}

impl Dispatcher {
    /// Leases up to `free` due deliveries, at most `per_endpoint` per endpoint counting those the
    /// caller already holds (`held`): one light query per queue for the candidates (id, URL,
    /// due time), merged earliest first; one statement per queue that leases them; one read per
    /// merchant.
    pub(super) async fn claim(
        &self,
        state: &Platform,
        scope: Scope,
        free: usize,
        held: &HashMap<String, usize>,
        per_endpoint: usize,
    ) -> anyhow::Result<Vec<Delivery>> {
        let real_now = state.clock.now();
        let test_clock = match scope {
            Scope::RealTime => None,
            Scope::Merchant(id) => Some(state.merchant_now(id).await?),
        };
        let now = test_clock.unwrap_or(real_now);
        let limit = i64::try_from(free * PER_ENDPOINT).unwrap_or(i64::MAX);
        let own = events::due(&state.store, scope, now, real_now, limit).await?;
        let to_endpoints =
            endpoint_deliveries::due(&state.store, scope, now, real_now, limit).await?;
        let mut candidates: Vec<(Queue, Candidate)> = own
            .into_iter()
            .map(|c| (Queue::Own, c))
            .chain(to_endpoints.into_iter().map(|c| (Queue::Endpoint, c)))
            .collect();
        candidates.sort_by_key(|(queue, c)| (c.next_attempt_at, *queue == Queue::Endpoint, c.id));
        // (queue, id) -> endpoint of the deliveries to lease.
        let mut picked: HashMap<(Queue, i64), String> = HashMap::new();
        let mut taken: HashMap<String, usize> = HashMap::new();
        for (queue, candidate) in candidates {
            if picked.len() == free {
                break;
            }
            let endpoint = endpoint_of(&candidate.url);
            let holding = held.get(&endpoint).copied().unwrap_or(0)
                + taken.get(&endpoint).copied().unwrap_or(0);
            if holding < per_endpoint {
                *taken.entry(endpoint.clone()).or_default() += 1;
                picked.insert((queue, candidate.id), endpoint);
            }
        }
        let ids = |queue| -> Vec<i64> {
            picked
                .keys()
                .filter(|(q, _)| *q == queue)
                .map(|(_, id)| *id)
                .collect()
        };
        let (own, to_endpoints) = (ids(Queue::Own), ids(Queue::Endpoint));
        let until = real_now + self.lease;
        let mut leased: Vec<(Queue, i64, Target)> =
            events::lease(&state.store, &own, real_now, until)
                .await?
                .into_iter()
                .map(|e| (Queue::Own, e.id, Target::Own(e)))
                .collect();
        leased.extend(
            endpoint_deliveries::lease(&state.store, &to_endpoints, real_now, until)
                .await?
                .into_iter()
                .map(|d| (Queue::Endpoint, d.id, Target::Endpoint(d))),
        );
        let mut signers: HashMap<i64, Arc<Merchant>> = HashMap::new();
        let mut claimed = Vec::with_capacity(leased.len());
        for (queue, id, target) in leased {
            let merchant_id = target.merchant_id();
            let merchant = match signers.get(&merchant_id) {
                Some(merchant) => merchant.clone(),
                None => {
                    let merchant = Arc::new(
                        merchants::by_id(&state.store, merchant_id)
                            .await?
                            .context("delivery without merchant")?,
                    );
                    signers.insert(merchant_id, merchant.clone());
                    merchant
                }
            };
            // The leases return only picked ids; the fallback merely avoids a panic path.
            let endpoint = picked
                .remove(&(queue, id))
                .unwrap_or_else(|| endpoint_of(target.url()));
            claimed.push(Delivery {
                endpoint,
                target,
                test_clock,
                merchant,
                start_by: real_now + self.wait,
            });
        }
        Ok(claimed)
    }
}
