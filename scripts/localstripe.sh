# Sourced by scripts/test: starts localstripe (PyPI; a stateful Stripe emulator written by
# others, with a fake Stripe.js) on a free port for the Stripe tests, and exports its address as
# RECUR_TEST_STRIPE_URL. Installs it into a virtualenv in the tool cache once per machine.
# `stop_localstripe` ends it.

ensure_localstripe() {
    local venv="${RECUR_TOOLS:-$HOME/.cache/recur-tools}/localstripe-venv"
    if [ ! -x "$venv/bin/localstripe" ]; then
        echo "installing localstripe into $venv (once per machine)" >&2
        if ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
            echo "python3-venv missing; installing Debian's python3-venv…" >&2
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        fi
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q localstripe
    fi
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    LOCALSTRIPE_LOG="${TMPDIR:-/tmp}/localstripe-$port.log"
    "$venv/bin/localstripe" --port "$port" --from-scratch >"$LOCALSTRIPE_LOG" 2>&1 &
    LOCALSTRIPE_PID=$!
    local tries=0
    until curl -fsS -u sk_test_ready: "http://127.0.0.1:$port/v1/balance" >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ "$tries" -gt 100 ] || ! kill -0 "$LOCALSTRIPE_PID" 2>/dev/null; then
            echo "localstripe did not start; its log:" >&2
            cat "$LOCALSTRIPE_LOG" >&2
            return 1
        fi
        sleep 0.2
    done
    export RECUR_TEST_STRIPE_URL="http://127.0.0.1:$port"
}

stop_localstripe() {
    if [ -n "${LOCALSTRIPE_PID:-}" ]; then
        kill "$LOCALSTRIPE_PID" 2>/dev/null || true
    fi
}
