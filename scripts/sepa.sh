# Sourced by scripts/test: the official ISO 20022 schemas for SEPA files, as the `sepaxml`
# package (PyPI) ships them, and the `xmlschema` validator (PyPI), installed into a virtualenv
# in the tool cache once per machine. Exports RECUR_TEST_SEPA_PYTHON (the virtualenv's python)
# and RECUR_TEST_PAIN008_XSD (pain.008.001.08.xsd) for the tests that validate collection files.

ensure_sepa_validator() {
    local venv="${RECUR_TOOLS:-$HOME/.cache/recur-tools}/sepa-venv"
    if ! "$venv/bin/python" -c 'import sepaxml, xmlschema' >/dev/null 2>&1; then
        echo "installing sepaxml and xmlschema into $venv (once per machine)" >&2
        if ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
            echo "python3-venv missing; installing Debian's python3-venv…" >&2
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        fi
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q sepaxml xmlschema
    fi
    RECUR_TEST_SEPA_PYTHON="$venv/bin/python"
    RECUR_TEST_PAIN008_XSD=$("$RECUR_TEST_SEPA_PYTHON" -c \
        'import os, sepaxml; print(os.path.join(os.path.dirname(sepaxml.__file__), "schemas", "pain.008.001.08.xsd"))')
    test -f "$RECUR_TEST_PAIN008_XSD"
    export RECUR_TEST_SEPA_PYTHON RECUR_TEST_PAIN008_XSD
}
