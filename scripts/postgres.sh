# Sourced by scripts/test and .ci/run: makes sure a local PostgreSQL cluster is installed and
# running, that a `recur` role may create databases on it, and exports RECUR_TEST_POSTGRES_URL.
# An already exported RECUR_TEST_POSTGRES_URL is used as it is.

ensure_postgres() {
    if [ -n "${RECUR_TEST_POSTGRES_URL:-}" ]; then
        return 0
    fi
    if ! command -v pg_lsclusters >/dev/null 2>&1; then
        echo "PostgreSQL is not installed; installing it (Debian packages)…" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    local cluster version name port status
    cluster=$(pg_lsclusters --no-header | head -n 1)
    if [ -z "$cluster" ]; then
        version=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
        pg_createcluster "$version" main >/dev/null
        cluster=$(pg_lsclusters --no-header | head -n 1)
    fi
    read -r version name port status _ <<<"$cluster"
    if [ "$status" != "online" ]; then
        # A cluster stopped uncleanly first syncs its whole data directory: one syncfs() instead
        # of an fsync per file, and more than pg_ctl's default minute to finish recovery.
        pg_ctlcluster "$version" "$name" start -- -t 900 -o "-c recovery_init_sync_method=syncfs"
    fi
    local psql_admin=(runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qtA)
    for _ in $(seq 1 30); do
        "${psql_admin[@]}" -c 'SELECT 1' >/dev/null 2>&1 && break
        sleep 0.5
    done
    if [ "$("${psql_admin[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'recur'")" != "1" ]; then
        "${psql_admin[@]}" -c "CREATE ROLE recur LOGIN CREATEDB PASSWORD 'recur'"
    fi
    # Databases left by earlier test runs: their names carry their creation time
    # (recur_t_<unix seconds>_<random>); only those older than 6 hours are dropped, so test runs
    # sharing this cluster never lose a database in use.
    export RECUR_TEST_POSTGRES_URL="postgres://recur:recur@127.0.0.1:${port}/postgres"
    local cutoff=$(( $(date +%s) - 6 * 3600 ))
    drop_test_databases "split_part(datname, '_', 3)::bigint < $cutoff"
}

# Drops the test databases (recur_t_<unix seconds>_…) for which the SQL condition on `datname`
# holds, closing connections still open on them, through RECUR_TEST_POSTGRES_URL (whose role
# created them).
drop_test_databases() {
    [ -n "${RECUR_TEST_POSTGRES_URL:-}" ] || return 0
    local psql_tests=(psql "$RECUR_TEST_POSTGRES_URL" -v ON_ERROR_STOP=1 -qtA)
    PGOPTIONS='--client-min-messages=warning' "${psql_tests[@]}" \
        -c "SELECT datname FROM pg_database WHERE datname ~ '^recur_t_[0-9]+_' AND ($1)" |
        while read -r db; do
            # FORCE cannot end an autovacuum worker (another role's); a plain DROP waits for it.
            [ -n "$db" ] && { PGOPTIONS='--client-min-messages=warning' "${psql_tests[@]}" \
                -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 ||
                PGOPTIONS='--client-min-messages=warning' "${psql_tests[@]}" \
                -c "DROP DATABASE IF EXISTS \"$db\"" >/dev/null 2>&1 || true; }
        done
}
