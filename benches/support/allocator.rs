//! The allocator of the `recur` binary, so that the server a benchmark starts in-process
//! allocates as it does in production.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
