# Sourced by scripts/test: makes sure Debian's poppler-utils (pdftotext, pdftoppm) is installed
# for the tests that read the invoice PDFs back as text and as an image (tests/api/invoice_pdf.rs).
# Installs it with apt when missing (needs root).

ensure_poppler() {
    if command -v pdftotext >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1; then
        return 0
    fi
    echo "pdftotext or pdftoppm missing; installing Debian's poppler-utils…" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null
}
