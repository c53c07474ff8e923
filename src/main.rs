use clap::Parser;

/// mimalloc instead of the system allocator: a request allocates and frees many small buffers
/// from several threads, where glibc malloc spent a sixth of the samples (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = recur::cli::Cli::parse();
    let config = match recur::config::Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("recur: configuration error: {error:#}");
            return std::process::ExitCode::from(2);
        }
    };
    recur::telemetry::init(config.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("recur: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(recur::cli::run(cli, config)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recur: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
