//! Concurrent statements of one kind share a statement.
//!
//! Under load many requests read a table by key, or insert a row into it, at the same moment,
//! and each one's statement costs the database and the driver far more than its row: on
//! PostgreSQL a primary-key select of eight rows runs at two thirds the rate of a select of one,
//! and an insert of eight rows at most of the rate of an insert of one, with one commit for the
//! eight. A [`Coalescer`] queues the requests; whenever fewer than [`IN_FLIGHT`] of its
//! statements are running, it runs what is queued as one statement and hands each request its
//! own answer. A request that finds a slot free runs alone, at once, in its own task, so a lone
//! client waits for no one; requests queue only behind statements already running, never
//! behind a timer.
//!
//! Every request keeps the meaning it has alone: a read is tenant-scoped by the merchant id its
//! key carries, and an insert's row succeeds or conflicts by its own constraints (a batch's
//! rows are one statement, so they commit together, and a request is answered only after that
//! commit). When a batch's statement fails, each of its requests is run again alone, so that an
//! error reaches only the request that caused it.

use std::sync::{Arc, Mutex, OnceLock};

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use super::{Backend, Pool};

/// How many statements of one coalescer may run at once. Two keep the database busy while the
/// next batch gathers; more would spread the queue over more, smaller statements.
const IN_FLIGHT: usize = 2;

/// The sizes a batch takes: the most of these that are waiting, so that each connection
/// prepares at most this many statements per kind.
const BUCKETS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// One kind of statement that a [`Coalescer`] can run for several requests at once.
pub trait Batch: Send + Sync + 'static {
    /// What a request asks: a key to read or a row to insert, always with its merchant.
    type Request: Send + Sync + 'static;
    /// What it gets.
    type Answer: Send + 'static;

    /// Runs every request in one statement; one answer per request, in their order.
    /// `requests` holds 1, 2, 4, … 32 entries (see [`Statements`]).
    fn run<'a>(
        &'a self,
        pool: &'a Pool,
        backend: Backend,
        requests: &'a [Self::Request],
    ) -> BoxFuture<'a, Result<Vec<Self::Answer>, sqlx::Error>>;
}

/// A kind of statement's text, one per engine and batch size, each built the first time it is
/// needed and spelled as its engine binds it fastest ([`super::for_backend`]).
pub struct Statements([[OnceLock<String>; BUCKETS.len()]; 2]);

impl Default for Statements {
    fn default() -> Self {
        Self::new()
    }
}

impl Statements {
    /// No statement built yet.
    pub const fn new() -> Self {
        Self([const { [const { OnceLock::new() }; BUCKETS.len()] }; 2])
    }

    /// The statement for `requests` requests on `backend`, built by `build` the first time. A
    /// [`Coalescer`] only ever runs batches of one of the sizes in [`BUCKETS`], and a statement
    /// for another size would bind the wrong number of parameters: that is a bug, and panics.
    pub fn get(
        &self,
        backend: Backend,
        requests: usize,
        build: impl FnOnce(usize) -> String,
    ) -> &str {
        let bucket = BUCKETS
            .iter()
            .position(|&size| size == requests)
            .unwrap_or_else(|| panic!("a batch of {requests} requests is not one of {BUCKETS:?}"));
        let engine = match backend {
            Backend::Sqlite => 0,
            Backend::Postgres => 1,
        };
        self.0[engine][bucket].get_or_init(|| super::for_backend(build(requests), backend))
    }
}

/// A request waiting for its key.
type Waiter<B> = (
    <B as Batch>::Request,
    oneshot::Sender<Result<<B as Batch>::Answer, sqlx::Error>>,
);

/// Runs statements of one kind for concurrent requests, several per statement (see the module
/// documentation). Cheap to clone.
pub struct Coalescer<B: Batch> {
    shared: Arc<Shared<B>>,
}

/// What the clones of a [`Coalescer`] share.
struct Shared<B: Batch> {
    batch: B,
    pool: Pool,
    backend: Backend,
    state: Mutex<State<B>>,
}

/// The requests waiting for a slot and the statements running.
struct State<B: Batch> {
    waiting: Vec<Waiter<B>>,
    running: usize,
}

impl<B: Batch> Clone for Coalescer<B> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<B: Batch> std::fmt::Debug for Coalescer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coalescer").finish_non_exhaustive()
    }
}

impl<B: Batch> Coalescer<B> {
    /// A coalescer running `batch` on `pool`.
    pub fn new(batch: B, pool: Pool, backend: Backend) -> Self {
        let state = Mutex::new(State {
            waiting: Vec::new(),
            running: 0,
        });
        Self {
            shared: Arc::new(Shared {
                batch,
                pool,
                backend,
                state,
            }),
        }
    }

    /// The answer to `request`, run alone or with whatever other requests are waiting.
    ///
    /// With a slot free (and so no one waiting), the caller runs its request itself, with no
    /// task switch. Otherwise it waits: a statement that ends takes what is waiting into the
    /// next one, in a task of its own, so that a caller that goes away never strands the others.
    pub async fn run(&self, request: B::Request) -> Result<B::Answer, sqlx::Error> {
        let mine = {
            let mut state = self.shared.lock();
            if state.running < IN_FLIGHT {
                state.running += 1;
                Ok(request)
            } else {
                let (answer, answered) = oneshot::channel();
                state.waiting.push((request, answer));
                Err(answered)
            }
        };
        match mine {
            Ok(request) => {
                let slot = Slot(&self.shared);
                let answer = self.shared.run_alone(request).await;
                drop(slot);
                answer
            }
            Err(answered) => answered.await.map_err(|_| sqlx::Error::PoolClosed)?,
        }
    }
}

impl<B: Batch> Shared<B> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<B>> {
        // The state stays consistent at every await-free step, so a poisoned lock is usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn run_alone(&self, request: B::Request) -> Result<B::Answer, sqlx::Error> {
        let requests = [request];
        let answers = self.batch.run(&self.pool, self.backend, &requests).await?;
        answers.into_iter().next().ok_or(sqlx::Error::RowNotFound)
    }

    /// Marks a statement ended and starts the next one for whatever is waiting.
    fn release(self: &Arc<Self>) {
        let batch = {
            let mut state = self.lock();
            if state.waiting.is_empty() {
                state.running -= 1;
                return;
            }
            let take = BUCKETS
                .iter()
                .rev()
                .copied()
                .find(|&size| size <= state.waiting.len())
                .unwrap_or(1);
            state.waiting.drain(..take).collect::<Vec<_>>()
        };
        let shared = self.clone();
        tokio::spawn(async move {
            answer(&shared, batch).await;
            shared.release();
        });
    }
}

/// A running statement's slot, handed on (or freed) when the statement ends or its caller
/// goes away.
struct Slot<'a, B: Batch>(&'a Arc<Shared<B>>);

impl<B: Batch> Drop for Slot<'_, B> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Runs the batch's requests in one statement and answers each. When that statement fails,
/// each request is run again alone, so that each gets its own answer or error.
async fn answer<B: Batch>(shared: &Shared<B>, batch: Vec<Waiter<B>>) {
    let (requests, answers): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    match shared
        .batch
        .run(&shared.pool, shared.backend, &requests)
        .await
    {
        Ok(results) => {
            for (answer, result) in answers.into_iter().zip(results) {
                // A request that went away (its client hung up) has no one to answer.
                let _ = answer.send(Ok(result));
            }
        }
        Err(error) if requests.len() == 1 => {
            if let Some(answer) = answers.into_iter().next() {
                let _ = answer.send(Err(error));
            }
        }
        Err(_) => {
            for (request, answer) in requests.into_iter().zip(answers) {
                let _ = answer.send(shared.run_alone(request).await);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bucket_builds_its_statement_once() {
        let statements = Statements::new();
        let pg = Backend::Postgres;
        assert_eq!(statements.get(pg, 4, |n| format!("run {n}")), "run 4");
        assert_eq!(
            statements.get(pg, 4, |_| String::from("built twice")),
            "run 4"
        );
        assert_eq!(statements.get(pg, 1, |n| format!("run {n}")), "run 1");
        assert_eq!(statements.get(pg, 32, |n| format!("run {n}")), "run 32");
    }

    #[test]
    fn each_engine_has_its_own_spelling() {
        let statements = Statements::new();
        let build = |n| format!("SELECT {}", super::super::placeholders(n, 1, 1));
        assert_eq!(
            statements.get(Backend::Postgres, 2, build),
            "SELECT ($1), ($2)"
        );
        assert_eq!(statements.get(Backend::Sqlite, 2, build), "SELECT (?), (?)");
    }

    #[test]
    #[should_panic(expected = "a batch of 3 requests is not one of")]
    fn a_size_between_buckets_is_a_bug() {
        Statements::new().get(Backend::Sqlite, 3, |n| format!("run {n}"));
    }

    /// Answers ten times each request once the gate opens, records each statement's size, and
    /// fails any statement holding a negative request.
    struct Tenfold {
        gate: tokio::sync::RwLock<()>,
        sizes: Mutex<Vec<usize>>,
    }

    impl Batch for Arc<Tenfold> {
        type Request = i64;
        type Answer = i64;

        fn run<'a>(
            &'a self,
            _pool: &'a Pool,
            _backend: Backend,
            requests: &'a [i64],
        ) -> BoxFuture<'a, Result<Vec<i64>, sqlx::Error>> {
            Box::pin(async move {
                self.sizes.lock().unwrap().push(requests.len());
                let _open = self.gate.read().await;
                if requests.iter().any(|&request| request < 0) {
                    return Err(sqlx::Error::Protocol(format!(
                        "{} requests",
                        requests.len()
                    )));
                }
                Ok(requests.iter().map(|request| request * 10).collect())
            })
        }
    }

    async fn settle(until: impl Fn() -> bool) {
        for _ in 0..1000 {
            if until() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the tasks did not get there");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn waiting_requests_share_a_statement_and_a_failure_is_retried_alone() {
        sqlx::any::install_default_drivers();
        let options = "sqlite::memory:".parse().unwrap();
        let pool = Pool::connect(options, Backend::Sqlite, 1).await.unwrap();
        let tenfold = Arc::new(Tenfold {
            gate: tokio::sync::RwLock::new(()),
            sizes: Mutex::new(Vec::new()),
        });
        let coalescer = Coalescer::new(tenfold.clone(), pool, Backend::Sqlite);
        let closed = tenfold.gate.write().await;
        let call = |request: i64| {
            let coalescer = coalescer.clone();
            tokio::spawn(async move { coalescer.run(request).await })
        };

        // Two requests take both slots and wait at the gate; the next five queue behind them.
        let running: Vec<_> = [1, 2].into_iter().map(call).collect();
        settle(|| tenfold.sizes.lock().unwrap().len() == IN_FLIGHT).await;
        let queued: Vec<_> = [3, -4, 5, 6, 7].into_iter().map(call).collect();
        settle(|| coalescer.shared.lock().waiting.len() == 5).await;
        drop(closed);

        let mut answers = Vec::new();
        for task in running.into_iter().chain(queued) {
            answers.push(task.await.unwrap().map_err(|error| error.to_string()));
        }
        assert_eq!(answers[..3], [Ok(10), Ok(20), Ok(30)]);
        assert_eq!(
            answers[3],
            Err("encountered unexpected or invalid data: 1 requests".into())
        );
        assert_eq!(answers[4..], [Ok(50), Ok(60), Ok(70)]);
        // The first slot freed takes four of the five waiting into one statement, which fails
        // for -4 and is run again one request at a time; the second slot takes the fifth.
        let mut sizes = tenfold.sizes.lock().unwrap().clone();
        sizes.sort_unstable();
        assert_eq!(sizes, [1, 1, 1, 1, 1, 1, 1, 4]);
        let state = coalescer.shared.lock();
        assert_eq!((state.running, state.waiting.len()), (0, 0));
    }
}
