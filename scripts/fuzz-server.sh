# Sourced by scripts/fuzz-api and scripts/fuzz-pages: builds recur and starts it on a fresh
# database of the backend named in $1 (sqlite, or postgres: a database named like the tests'
# ones, so that an interrupted run's is dropped later too), stopped and dropped on exit. Sets
# `base` (the server's URL) and `work` (its data directory); `field NAME` reads the demo
# merchant's credentials and `server_panicked` fails when the server's log shows a panic.
# Stripe is a localstripe started alongside (scripts/localstripe.sh).

start_fuzz_server() {
    local backend="$1"
    local binary="${CARGO_TARGET_DIR:-target}/debug/recur"
    cargo build --quiet --bin recur
    work=$(mktemp -d)
    unset RECUR_DATABASE_URL
    database=""
    case "$backend" in
    sqlite) ;;
    postgres)
        source scripts/postgres.sh
        ensure_postgres
        database="recur_t_$(date +%s)_fuzz$$"
        psql "$RECUR_TEST_POSTGRES_URL" -qc "CREATE DATABASE \"$database\""
        export RECUR_DATABASE_URL="${RECUR_TEST_POSTGRES_URL%/*}/$database"
        ;;
    *) echo "backend must be sqlite or postgres, not $backend" >&2; exit 2 ;;
    esac
    trap stop_fuzz_server EXIT
    # Stripe is localstripe, so that connecting a processor reaches an answer.
    source scripts/tools.sh
    source scripts/localstripe.sh
    ensure_localstripe
    RECUR_LISTEN=127.0.0.1:0 RECUR_DATA_DIR="$work" RECUR_LOG=warn \
        RECUR_STRIPE_API_BASE="$RECUR_TEST_STRIPE_URL" "$binary" serve >"$work/out" 2>"$work/err" &
    server=$!
    for _ in $(seq 1 100); do grep -q '^listening on ' "$work/out" 2>/dev/null && break; sleep 0.1; done
    base=$(sed -n 's/^listening on //p' "$work/out")
}

stop_fuzz_server() {
    stop_localstripe
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$work"
    if [ -n "$database" ]; then drop_test_databases "datname = '$database'"; fi
}

field() { sed -n "s/^  $1: *//p" "$work/out"; }

server_panicked() {
    if grep -qi "panicked" "$work/err"; then
        echo "the server panicked during fuzzing:" >&2
        cat "$work/err" >&2
        return 0
    fi
    return 1
}
