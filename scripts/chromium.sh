# Sourced by scripts/test: makes sure Debian's Chromium and its WebDriver are installed for the
# browser tests (tests/browser). Installs them with apt when missing (needs root).

ensure_chromium() {
    if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
        return 0
    fi
    echo "Chromium or chromedriver missing; installing Debian's chromium and chromium-driver…" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
}
