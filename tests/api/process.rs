//! The real `recur` binary as a child process, for tests that kill it or read its log.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The `recur` binary with a fixed environment.
pub struct Recur {
    pub env: Vec<(String, String)>,
}

impl Recur {
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_recur"));
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .args(args);
        command
    }

    /// Starts `recur serve` and returns it with its base URL once it listens.
    pub fn serve(&self) -> (Child, String) {
        self.serve_logging_to(Stdio::null())
    }

    /// Like [`Recur::serve`], with the server's log (stderr) going to `log`.
    pub fn serve_logging_to(&self, log: impl Into<Stdio>) -> (Child, String) {
        let mut child = self
            .command(&["serve"])
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("recur serve starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines.next().expect("recur prints its address").unwrap();
            if let Some(url) = line.strip_prefix("listening on ") {
                break url.to_string();
            }
        };
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        (child, url)
    }
}
