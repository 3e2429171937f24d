#!/bin/sh
# Builds and tests the castd Python package against a real castd and cast-emulator.
#   CASTD_BIN_DIR          where castd, castc and cast-emulator are (default: .build/debug)
#   CASTD_TEST_TIME_SCALE  multiplies every test deadline (slow, sanitized builds)
#   CASTD_VENV             the virtualenv to create or reuse (default: .build/venv-clients)
# Extra arguments go to pytest.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${CASTD_BIN_DIR:=$root/.build/debug}"
: "${CASTD_VENV:=$root/.build/venv-clients}"
export CASTD_BIN_DIR
for tool in castd castc cast-emulator; do
    [ -x "$CASTD_BIN_DIR/$tool" ] || { echo "test.sh: $CASTD_BIN_DIR/$tool is missing (set CASTD_BIN_DIR)" >&2; exit 1; }
done

[ -x "$CASTD_VENV/bin/python" ] || python3 -m venv "$CASTD_VENV"
py="$CASTD_VENV/bin/python"
"$py" -m pip install -q --disable-pip-version-check pytest pytest-asyncio pytest-timeout mypy types-protobuf
# Not editable: the tests run against the installed package, which proves it installs. Built from
# a copy, so that setuptools leaves no build/ or egg-info in the source tree.
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -R "$here/pyproject.toml" "$here/README.md" "$here/src" "$copy/"
"$py" -m pip install -q --disable-pip-version-check "$copy"
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$copy"

cd "$here"
# The installed copy must be the one imported, not ./src.
"$py" -c 'import castd, sys; p = castd.__file__; sys.exit(0 if "site-packages" in p else "castd imported from " + p)'
echo "== mypy --strict"
MYPYPATH="$here/tests" "$py" -m mypy --strict src/castd tests
echo "== pytest"
# A hang fails its test: a per-test limit, scaled like every deadline in the tests.
timeout=${CASTD_TEST_TIMEOUT:-$(awk -v s="${CASTD_TEST_TIME_SCALE:-1}" 'BEGIN { t = 60 * s; if (t < 60) t = 60; printf "%d", t }')}
"$py" -m pytest -v -p no:cacheprovider --timeout="$timeout" tests "$@"
