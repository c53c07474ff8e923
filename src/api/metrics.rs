//! Prometheus metrics, exposed at `/metrics`: request counts and latencies by route, the
//! outcomes of webhook attempts and e-mail sends this process recorded, and the outboxes'
//! backlog read from the database at each scrape.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use recur_domain::signature::constant_time_eq;
use sha2::{Digest, Sha256};

use super::extract::bearer_token;
use super::problem::ApiError;
use crate::app::AppState;
use crate::store::{emails, events};

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

    /// The registry in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Middleware: counts each request and observes its latency under its route template.
pub async fn record(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    let labels = RouteLabels { method, route };
    state
        .metrics
        .latency
        .get_or_create(&labels)
        .observe(started.elapsed().as_secs_f64());
    state
        .metrics
        .requests
        .get_or_create(&RequestLabels {
            method: labels.method,
            route: labels.route,
            status: response.status().as_u16(),
        })
        .inc();
    response
}

/// `GET /metrics`: 401 without the bearer token when `RECUR_METRICS_TOKEN` is set. The backlog
/// gauges are left out when the database cannot be read, rather than shown stale.
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if !authorized(state.config.metrics.token.as_deref(), &headers) {
        return ApiError::Unauthorized.into_response();
    }
    let backlog = async {
        let events = events::pending_count(&state.store).await?;
        let emails = emails::pending_count(&state.store).await?;
        Ok::<_, sqlx::Error>([("events", events), ("emails", emails)])
    };
    match backlog.await {
        Ok(counts) => {
            for (outbox, count) in counts {
                state
                    .metrics
                    .outbox_pending
                    .get_or_create(&OutboxLabels {
                        outbox: outbox.to_string(),
                    })
                    .set(count);
            }
        }
        Err(error) => {
            tracing::warn!(%error, "reading the outbox backlog for /metrics failed");
            state.metrics.outbox_pending.clear();
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

/// Whether `headers` carry `token` as a bearer token (always, when no token is configured). Both
/// sides are hashed first, so the comparison takes the same time whatever is presented.
fn authorized(token: Option<&str>, headers: &HeaderMap) -> bool {
    let Some(token) = token else {
        return true;
    };
    let presented = bearer_token(headers).unwrap_or_default();
    constant_time_eq(
        &Sha256::digest(presented.as_bytes()),
        &Sha256::digest(token.as_bytes()),
    )
}
