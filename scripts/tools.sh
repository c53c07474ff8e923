# Source me. `ensure_cargo_tool NAME [CRATE]` installs a cargo subcommand from crates.io into a
# tool cache outside the clone (reused between CI runs on one machine) and puts it on PATH.
RECUR_TOOLS="${RECUR_TOOLS:-/var/cache/recur-ci/tools}"
mkdir -p "$RECUR_TOOLS" 2>/dev/null || RECUR_TOOLS="$HOME/.cache/recur-tools"
export PATH="$RECUR_TOOLS/bin:$PATH"

ensure_cargo_tool() {
    local name="$1" crate="${2:-$1}"
    if ! command -v "$name" >/dev/null 2>&1; then
        echo "installing $crate into $RECUR_TOOLS (once per machine)"
        cargo install --quiet --locked --root "$RECUR_TOOLS" "$crate"
    fi
}
