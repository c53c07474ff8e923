//! What one hand-off between two threads costs on this machine: the price of every wake-up in
//! a one-client run, measured in the same run as the rates it explains.
//!
//! Two threads pass one byte back and forth over a Unix socket pair, as `perf bench sched pipe`
//! does with a pipe. Each round trip wakes each thread once. A one-client raw statement is two
//! such wake-ups (client → database → client); a request that runs a statement of its own is at
//! least four (client → server → database → server → client), so where wake-ups cost more than
//! the work between them, no server reaches the raw rate's share that a ratio target asks.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Round trips measured; a fraction of a second on any machine.
const ROUND_TRIPS: u32 = 20_000;

/// The mean time of one round trip between two threads (two wake-ups), or `None` when the
/// socket pair cannot be made.
pub fn round_trip() -> Option<Duration> {
    let (mut here, mut there) = UnixStream::pair().ok()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let mut byte = [0u8; 1];
        for _ in 0..ROUND_TRIPS {
            there.read_exact(&mut byte)?;
            there.write_all(&byte)?;
        }
        Ok(())
    });
    let mut byte = [0u8; 1];
    let started = Instant::now();
    for _ in 0..ROUND_TRIPS {
        here.write_all(&byte).ok()?;
        here.read_exact(&mut byte).ok()?;
    }
    let elapsed = started.elapsed();
    echo.join().ok()?.ok()?;
    Some(elapsed / ROUND_TRIPS)
}
