#!/usr/bin/env bash
# The clients of castd.v1 in C and Python (clients/), against the castd, castc and cast-emulator
# of this checkout's build, then the test in which every kind of client shares one device.
#
#   scripts/test-clients.sh                      after scripts/test.sh has built (it runs this)
#   CASTD_SANITIZE=address scripts/test-clients.sh   against the sanitized build (what CI does)
#
# 1. C: `make -C clients/c check` (the tests under AddressSanitizer and UBSan) and
#    `make -C clients/c valgrind` (the same tests under valgrind: 0 errors, 0 leaks);
# 2. Python: clients/python/test.sh (installs the package into .build/venv-clients, mypy
#    --strict, pytest);
# 3. the README's C and Python examples, built (and the Python one checked by mypy --strict);
# 4. EveryClientTests (Tests/CastdServerTests): castc, the Swift CastClient, castd-c-watch and
#    `python3 -m castd watch` watch one device while each of them sends commands; and the
#    README's examples run against castd.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/swift-flags.sh

bin=$(swift build "${swift_flags[@]}" --show-bin-path)
for tool in castd castc cast-emulator; do
    [ -x "$bin/$tool" ] || { echo "error: $bin/$tool is missing: run scripts/test.sh (it builds first)" >&2; exit 1; }
done
export CASTD_BIN_DIR=$bin

echo "==> make -C clients/c check (AddressSanitizer, UBSan)" >&2
make --no-print-directory -C clients/c all check
echo "==> make -C clients/c valgrind" >&2
make --no-print-directory -C clients/c valgrind

echo "==> clients/python/test.sh" >&2
clients/python/test.sh

# The README's C and Python examples, as a reader would build them: EveryClientTests runs them.
examples=$PWD/.build/readme-examples
mkdir -p "$examples"
block() { # language: the first ```language block after "### From C and Python", unindented
    awk -v lang="$1" '/^### From C and Python/ { on = 1 } on && $0 ~ "^ *```" lang "$" { inside = 1; next }
        inside && /^ *```$/ { exit } inside { sub(/^  /, ""); print }' README.md
}
block c >"$examples/pause.c"
block python >"$examples/watch.py"
[ -s "$examples/pause.c" ] && [ -s "$examples/watch.py" ] || { echo "error: no C or Python example in the README" >&2; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -Iclients/c/include -Iclients/c/generated "$examples/pause.c" -o "$examples/pause" \
    -Lclients/c/build -lcastd-client -lprotobuf-c -Wl,-rpath,"$PWD/clients/c/build"
.build/venv-clients/bin/python -m mypy --strict "$examples/watch.py"

echo "==> every kind of client on one device (EveryClientTests)" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ASAN_OPTIONS=$CASTD_RUNNER_ASAN_OPTIONS CASTD_C_CLIENT_DIR=$PWD/clients/c/build \
    CASTD_PYTHON=$PWD/.build/venv-clients/bin/python CASTD_README_EXAMPLES=$examples \
    swift test --skip-build "${swift_flags[@]}" --filter EveryClientTests 2>&1 | tee "$log"
# The tests are skipped where the clients are not built; here each must have run and passed (a
# skipped test is also counted in "Test run with 2 tests … passed").
for test in castcSwiftCAndPythonWatchOneDeviceAndSeeTheSameEventsInOneOrder theReadmesCAndPythonExamplesRun; do
    grep -q -E "✔ Test $test\(\) passed after" "$log" || {
        echo "error: EveryClientTests.$test did not run and pass (skipped, or missing)" >&2
        exit 1
    }
done
