//! The process's Prometheus registry: request counts and latencies by route, the outcomes of
//! the webhook attempts and e-mail sends this process recorded, and the outboxes' backlog.
//! `/metrics` (`api::metrics`) renders it; every layer that counts something holds it through
//! [`Platform`](crate::platform::Platform).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::store::events;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutboxLabels {
    outbox: String,
}

/// The process's metric registry.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    webhook_attempts: Family<OutcomeLabels, Counter>,
    email_sends: Family<OutcomeLabels, Counter>,
    outbox_pending: Family<OutboxLabels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("recur");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        let webhook_attempts = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Webhook attempts recorded by this process, by the event's status afterwards \
             (Delivered, Pending: to be retried, Undeliverable)",
            webhook_attempts.clone(),
        );
        let email_sends = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "email_sends",
            "E-mail sends recorded by this process, by outcome (sent, retry, failed)",
            email_sends.clone(),
        );
        let outbox_pending = Family::<OutboxLabels, Gauge>::default();
        registry.register(
            "outbox_pending",
            "Webhook events and e-mails waiting to be sent, all processes, read at the scrape",
            outbox_pending.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            webhook_attempts,
            email_sends,
            outbox_pending,
        }
    }
}

impl Metrics {
    /// Counts a recorded webhook attempt whose event is now in `status`.
    pub fn webhook_attempt(&self, status: events::EventStatus) {
        self.webhook_attempts
            .get_or_create(&OutcomeLabels {
                outcome: status.as_str().to_string(),
            })
            .inc();
    }

    /// Counts a recorded e-mail send: `sent`, `retry` or `failed`.
    pub fn email_send(&self, outcome: &str) {
        self.email_sends
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// Counts a finished request under its route template and observes its latency.
    pub fn request(&self, method: String, route: String, status: u16, seconds: f64) {
        let labels = RouteLabels { method, route };
        self.latency.get_or_create(&labels).observe(seconds);
        self.requests
            .get_or_create(&RequestLabels {
                method: labels.method,
                route: labels.route,
                status,
            })
            .inc();
    }

    /// Sets the outboxes' backlog gauges: `(outbox, waiting rows)`.
    pub fn set_backlog(&self, counts: &[(&str, i64)]) {
        for (outbox, count) in counts {
            self.outbox_pending
                .get_or_create(&OutboxLabels {
                    outbox: outbox.to_string(),
                })
                .set(*count);
        }
    }

    /// Drops the backlog gauges (the database could not be read: none is better than stale).
    pub fn clear_backlog(&self) {
        self.outbox_pending.clear();
    }

    /// The registry in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
