//! One measured run of the API benchmark: latencies from concurrent tasks for a set time, with
//! the CPU they cost (`cpu.rs`), and the run in short.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cpu::{self, Cost};

/// Latencies of one measured run, and its cost.
pub struct Sample {
    pub latencies: Vec<Duration>,
    pub elapsed: Duration,
    pub cost: Option<Cost>,
}

impl Sample {
    pub fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let index = ((sorted.len() as f64 * p).ceil() as usize).saturating_sub(1);
        sorted.get(index).copied().unwrap_or_default()
    }
}

/// Runs `op` from `concurrency` tasks for `duration`, recording each call's latency.
pub async fn drive<F, Fut>(concurrency: usize, duration: Duration, op: F) -> Sample
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let counter = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let ((latencies, elapsed), cost) = cpu::measure(async {
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                let op = op.clone();
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    while Instant::now() < deadline {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        let t = Instant::now();
                        op(n).await;
                        latencies.push(t.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await.expect("bench task"));
        }
        (latencies, started.elapsed())
    })
    .await;
    Sample {
        latencies,
        elapsed,
        cost,
    }
}

/// A measured run in short: its rate, its operations and what they cost.
#[derive(Clone, Copy)]
pub struct Run {
    pub rate: f64,
    pub operations: u64,
    pub cost: Option<Cost>,
}

impl Run {
    pub fn of(sample: &Sample) -> Run {
        Run {
            rate: sample.rate(),
            operations: sample.latencies.len() as u64,
            cost: sample.cost,
        }
    }
}
