#!/usr/bin/env bash
# The whole test suite: what CI runs, and what a developer runs before pushing.
#
#   scripts/test.sh                 build, then run every Swift test, the pychromecast interop and
#                                   the C and Python clients' tests (scripts/test-clients.sh)
#   scripts/test.sh --filter NAME   only Swift tests matching NAME (no interop)
#   CASTD_SANITIZE=address scripts/test.sh    the same under AddressSanitizer (what CI runs), or
#   CASTD_SANITIZE=thread scripts/test.sh     ThreadSanitizer; each in a build of its own
#                                             (scripts/swift-flags.sh), and a plain castd for
#                                             the memory tests (CASTD_PLAIN_BIN_DIR)
#
# The end-to-end and discovery tests need an Avahi daemon. If none answers, this starts one
# restricted to loopback (scripts/avahi-loopback.sh; needs root) and leaves it running for the
# next run. Warnings in this package's own code fail the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/swift-flags.sh

# What the suite uses that a fresh Debian 12 machine lacks (the list CI and scripts/demo.sh share).
scripts/install-packages.sh test

state=${CASTD_TEST_STATE:-/tmp/castd-test-avahi}
if ! avahi-daemon --check 2>/dev/null; then
    mkdir -p "$state"
    scripts/avahi-loopback.sh start "$state"
fi

echo "==> swift build --build-tests ${swift_flags[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift build --build-tests "${swift_flags[@]}" 2>&1 | tee "$log"; then
    exit 1
fi
# SwiftPM prints each warning several times; our code must have none.
if grep -E "^$PWD/(Sources|Tests|Fuzz)/.*: warning:" "$log" | sort -u | grep .; then
    echo "error: the warnings above are in castd's own code" >&2
    exit 1
fi

# Under a sanitizer, also a castd without one: the tests of resident memory and glibc's malloc
# arenas run it (plainCastd in Tests/CastTestSupport), since a sanitizer's allocator replaces
# glibc's. Only castd and what it uses, in the plain build's .build.
if [ -n "${CASTD_SANITIZE:-}" ] && [ -z "${CASTD_PLAIN_BIN_DIR:-}" ]; then
    echo "==> swift build --product castd (without a sanitizer, for the memory tests)" >&2
    if ! swift build --product castd 2>&1 | tee "$log"; then
        exit 1
    fi
    export CASTD_PLAIN_BIN_DIR=$PWD/.build/debug
fi

tests=$(mktemp)
skipped=$(mktemp)
trap 'rm -f "$log" "$tests" "$skipped"' EXIT

# Each phase of swift test ends by this many seconds (a phase takes minutes, sanitized): a test
# process that hangs fails the run with the tests it was in, rather than CI's own time limit.
phase_limit=${CASTD_TEST_PHASE_LIMIT:-1800}

# run_tests ARGS...: swift test with ARGS; on a failure, the issues it recorded, and exit.
run_tests() {
    echo "==> swift test $*" >&2
    local status=0
    ASAN_OPTIONS=$CASTD_RUNNER_ASAN_OPTIONS timeout --kill-after=30 "$phase_limit" \
        swift test --skip-build "${swift_flags[@]}" "$@" 2>&1 | tee "$tests" || status=$?
    # What Swift Testing skipped, and why (said again at the end).
    grep -E "^➜ (Test|Suite) .* skipped" "$tests" >>"$skipped" || true
    if [ $status -ne 0 ]; then
        if [ $status -eq 124 ] || [ $status -eq 137 ]; then
            echo "==> swift test did not end within $phase_limit s (CASTD_TEST_PHASE_LIMIT)" >&2
        fi
        # Parallel tests print their failures among hundreds of other lines; CI logs are often read
        # from the end. Say again what failed, with the lines that follow each issue.
        echo "==> swift test failed (exit $status); the issues it recorded:" >&2
        grep -A6 -E "recorded an issue|Fatal error|ERROR: AddressSanitizer|WARNING: ThreadSanitizer" "$tests" | head -300 >&2 || true
        # A crash or a hang ends the run without a word from the tests it was in: name them.
        echo "==> the tests that started and did not end:" >&2
        sed -n -E '/Test (case passing|run )/d; s/^.*Test (.*) started\.$/\1/p' "$tests" | sort -u >"$tests.started"
        sed -n -E '/Test (case passing|run )/d; s/^.*Test (.*) (passed|failed|skipped).*$/\1/; T; s/ with [0-9]+ test cases?$//; p' \
            "$tests" | sort -u >"$tests.ended"
        comm -23 "$tests.started" "$tests.ended" >&2 || true
        rm -f "$tests.started" "$tests.ended"
        exit $status
    fi
}

if [ $# -eq 0 ]; then
    # Three phases, each in parallel within itself:
    # 1. the suites tagged .cpuBound (Tests/CastTestSupport/StallCheck.swift): tests that compute
    #    for seconds without awaiting. Beside tests that wait with deadlines they would hold the
    #    threads of Swift's cooperative pool (one per core) and stall them;
    # 2. every other suite but the mDNS floods;
    # 3. the floods, the LAN and the long queues, one test at a time: each flood keeps Avahi busy for a minute or
    #    two (thousands of services), which would slow every other test that waits for Avahi,
    #    and Avahi's cache holds about 1,350 services at once; each LAN test starts a dozen
    #    processes (Avahi, D-Bus, castd, emulators) and runs castc, which under a sanitizer took
    #    the CPU from the tests that wait with deadlines beside them.
    cpu_bound=$(scripts/cpu-bound-suites.sh)
    # Suites that keep this process's emulators computing for seconds (a 2,500- or 1,000-item
    # queue loaded, churned and fetched), and the README's commands (56 castc processes one after
    # another, 81 s of the two cores under ASan, which beside the floods of phase 2 kept an
    # in-process emulator from answering castd's device authentication within its 10 s): with
    # the floods, one at a time.
    apart="HostileQueueChurnTests|LongQueueLoadTests|ReadmeCommandsTests"
    run_tests --filter "$cpu_bound"
    run_tests --skip "$cpu_bound" --skip MDNSFlood --skip LANTests --skip "$apart"
    run_tests --filter "MDNSFlood|LANTests|$apart" --no-parallel
else
    run_tests "$@"
fi

if [ -s "$skipped" ]; then
    echo "==> the tests skipped, and why (in CI, CI=true, the tests that need a privilege run and fail instead):" >&2
    sort -u "$skipped" >&2
fi

if [ $# -eq 0 ]; then
    scripts/interop-test.sh
    # The C and Python clients (clients/), and every kind of client on one device.
    scripts/test-clients.sh
fi
