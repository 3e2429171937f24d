#!/usr/bin/env bash
# The whole test suite: what CI runs, and what a developer runs before pushing.
#
#   scripts/test.sh                 build, then run every Swift test and the pychromecast interop
#   scripts/test.sh --filter NAME   only Swift tests matching NAME (no interop)
#
# The end-to-end and discovery tests need an Avahi daemon. If none answers, this starts one
# restricted to loopback (scripts/avahi-loopback.sh; needs root) and leaves it running for the
# next run. Warnings in this package's own code fail the build.
set -euo pipefail
cd "$(dirname "$0")/.."

state=${CASTD_TEST_STATE:-/tmp/castd-test-avahi}
if ! avahi-daemon --check 2>/dev/null; then
    mkdir -p "$state"
    scripts/avahi-loopback.sh start "$state"
fi

echo "==> swift build --build-tests" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift build --build-tests 2>&1 | tee "$log"; then
    exit 1
fi
# SwiftPM prints each warning several times; our code must have none.
if grep -E "^$PWD/(Sources|Tests)/.*: warning:" "$log" | sort -u | grep .; then
    echo "error: the warnings above are in castd's own code" >&2
    exit 1
fi

echo "==> swift test" >&2
swift test --skip-build "$@"

if [ $# -eq 0 ]; then
    scripts/interop-test.sh
fi
