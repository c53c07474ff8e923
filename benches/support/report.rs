//! Running a benchmark on each backend and printing its table. Shared by the benchmark binaries
//! through `#[path]`.

use std::future::Future;

use recur::store::Backend;

/// Runs `bench` on each of `backends`, one after the other on one multi-threaded runtime, and
/// collects the rows each returns.
pub fn per_backend<T, F>(backends: Vec<Backend>, bench: impl Fn(Backend) -> F) -> Vec<T>
where
    F: Future<Output = Vec<T>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    backends
        .into_iter()
        .flat_map(|backend| runtime.block_on(bench(backend)))
        .collect()
}

/// Prints a Markdown table under `title`, which is followed by this machine's core count (the
/// ratios are comparable across machines, the rates are not).
pub fn print_table(title: &str, columns: &[&str], rows: impl IntoIterator<Item = String>) {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("\n{title}, {cores} cores\n");
    println!("| {} |", columns.join(" | "));
    println!("|{}", "---|".repeat(columns.len()));
    for row in rows {
        println!("{row}");
    }
}
