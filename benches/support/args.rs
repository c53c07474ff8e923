//! The benchmarks' command line: `--flag value` pairs. Shared by the benchmark binaries through
//! `#[path]`.

use std::str::FromStr;

use recur::store::Backend;

/// The arguments the benchmark binary was started with.
pub struct Args(Vec<String>);

impl Args {
    /// This process's arguments.
    pub fn from_env() -> Self {
        Self(std::env::args().collect())
    }

    /// The value after `flag`, if it was given.
    pub fn value(&self, flag: &str) -> Option<String> {
        self.0
            .iter()
            .position(|a| a == flag)
            .and_then(|i| self.0.get(i + 1))
            .cloned()
    }

    /// The value after `flag` parsed, or `default` when it is absent or not a `T`.
    pub fn parsed<T: FromStr>(&self, flag: &str, default: T) -> T {
        self.value(flag)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    }

    /// `--backend sqlite|postgres`: that one; both when absent.
    pub fn backends(&self) -> Vec<Backend> {
        match self.value("--backend").as_deref() {
            Some("sqlite") => vec![Backend::Sqlite],
            Some("postgres") => vec![Backend::Postgres],
            _ => vec![Backend::Sqlite, Backend::Postgres],
        }
    }
}
