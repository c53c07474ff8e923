//! Where a measurement's CPU time went, read from Linux's `/proc`, split three ways:
//!
//! - the **server**: this process's threads named [`SERVER_THREAD`] (the benchmark runs recur on a
//!   runtime of its own with that thread name);
//! - the **database**: SQLite's connection threads in this process, and every `postgres` process
//!   on this machine together with the backends that exited meanwhile (the postmaster's reaped
//!   children), so that the backends of a `pgbench` run count too;
//! - the **load client**: the rest of this process, and the child processes it waited for
//!   (`pgbench`).
//!
//! On a machine whose cores the measurement keeps busy, a rate is the machine's CPU divided by
//! the CPU one operation costs, so these figures say which part bounds a ratio.

use std::future::Future;
use std::time::{Duration, Instant};

/// The thread name of the runtime the benchmark serves recur on.
pub const SERVER_THREAD: &str = "recur-server";
/// The thread name sqlx gives SQLite's connection threads, as `/proc` shows it (15 bytes).
const SQLITE_THREAD: &str = "sqlx-sqlite-wor";

/// CPU time by part: seconds, or microseconds per operation once shared out
/// ([`CpuTimes::per_operation_micros`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuTimes {
    /// The load client: `pgbench`, the raw loop's tasks or the HTTP clients.
    pub client: f64,
    /// recur's server runtime.
    pub server: f64,
    /// The database.
    pub database: f64,
}

impl CpuTimes {
    /// All three parts.
    pub fn total(&self) -> f64 {
        self.client + self.server + self.database
    }

    /// The same times shared out over `operations`, in microseconds each.
    pub fn per_operation_micros(&self, operations: u64) -> CpuTimes {
        let per = |seconds: f64| seconds * 1e6 / operations.max(1) as f64;
        CpuTimes {
            client: per(self.client),
            server: per(self.server),
            database: per(self.database),
        }
    }
}

/// What a measured future cost: its CPU by part, and the wall-clock time it took.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    /// CPU seconds by part.
    pub cpu: CpuTimes,
    /// Wall-clock time.
    pub elapsed: Duration,
}

impl Cost {
    /// The share of the machine's cores the measurement kept busy, in per cent.
    pub fn busy_percent(&self) -> f64 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        100.0 * self.cpu.total() / (self.elapsed.as_secs_f64() * cores)
    }
}

/// Runs `work` and returns its output with its cost; no cost where `/proc` cannot be read.
pub async fn measure<T>(work: impl Future<Output = T>) -> (T, Option<Cost>) {
    let (before, started) = (snapshot(), Instant::now());
    let output = work.await;
    let elapsed = started.elapsed();
    let cost = before.zip(snapshot()).map(|(before, after)| Cost {
        cpu: CpuTimes {
            client: after.client - before.client,
            server: after.server - before.server,
            database: after.database - before.database,
        },
        elapsed,
    });
    (output, cost)
}

/// The CPU each part has used so far.
fn snapshot() -> Option<CpuTimes> {
    let tick = ticks_per_second()?;
    let (mut server, mut sqlite) = (0, 0);
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Some(stat) = Stat::read(task.path().join("stat")) else {
            continue; // the thread ended meanwhile; its time is in the process's
        };
        if stat.name.starts_with(SERVER_THREAD) {
            server += stat.own;
        } else if stat.name.starts_with(SQLITE_THREAD) {
            sqlite += stat.own;
        }
    }
    // Read after its threads, so that it holds at least their time.
    let process = Stat::read("/proc/self/stat".into())?;
    let postgres = postgres_ticks()?;
    let seconds = |ticks: u64| ticks as f64 / tick;
    Some(CpuTimes {
        client: seconds((process.own + process.children).saturating_sub(server + sqlite)),
        server: seconds(server),
        database: seconds(sqlite + postgres),
    })
}

/// PostgreSQL's CPU so far: the running processes' own time and the reaped backends' (the
/// postmaster's children's). A backend reaped while the processes are read would be lost or
/// counted twice (a finished `pgbench` run's backends end right then), so the own times are
/// read between two readings of the reaped time, again until no reaping falls between them.
fn postgres_ticks() -> Option<u64> {
    let reaped = || Some(postgres_stats()?.iter().map(|s| s.children).sum::<u64>());
    for _ in 0..1000 {
        let before = reaped()?;
        let own: u64 = postgres_stats()?.iter().map(|s| s.own).sum();
        let after = reaped()?;
        if before == after {
            return Some(own + after);
        }
    }
    None
}

/// The stats of every `postgres` process on this machine.
fn postgres_stats() -> Option<Vec<Stat>> {
    let processes = std::fs::read_dir("/proc").ok()?.flatten().filter(|entry| {
        entry
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
    });
    Some(
        processes
            .filter_map(|entry| Stat::read(entry.path().join("stat")))
            .filter(|stat| stat.name == "postgres")
            .collect(),
    )
}

/// The fields of a `/proc/<pid>/stat` (or a task's) that matter here.
struct Stat {
    /// The command name (`comm`), at most 15 bytes.
    name: String,
    /// User and system CPU ticks of the process (all its threads) or the thread.
    own: u64,
    /// User and system CPU ticks of its children that ended and were waited for.
    children: u64,
}

impl Stat {
    fn read(path: std::path::PathBuf) -> Option<Stat> {
        let text = std::fs::read_to_string(path).ok()?;
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses, so split at the
        // last `)`; field 3 (state) is then the first after it.
        let (head, tail) = text.rsplit_once(')')?;
        let name = head.split_once('(')?.1.to_string();
        let fields: Vec<&str> = tail.split_whitespace().collect();
        let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
        Some(Stat {
            name,
            own: field(14)? + field(15)?,
            children: field(16)? + field(17)?,
        })
    }
}

/// The unit of `/proc`'s CPU times (`USER_HZ`), per second.
fn ticks_per_second() -> Option<f64> {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then_some(ticks as f64)
}
