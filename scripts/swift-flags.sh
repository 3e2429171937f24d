# Sourced by the scripts that build: the `swift build` flags of the build they use, in the array
# swift_flags, chosen by $CASTD_SANITIZE:
#
#   (unset)   the plain debug build in .build
#   address   .build-address: AddressSanitizer (with LeakSanitizer), and libFuzzer's coverage
#             instrumentation, so that scripts/fuzz.sh --build address relinks the fuzz targets
#             from this build instead of compiling everything again (what CI does)
#   thread    .build-thread: ThreadSanitizer
#
# A sanitized build has its own scratch path: switching does not rebuild the others.
case "${CASTD_SANITIZE:-}" in
"") swift_flags=() ;;
address)
    swift_flags=(--scratch-path .build-address --sanitize=address
        -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer,address)
    ;;
thread) swift_flags=(--scratch-path .build-thread --sanitize=thread) ;;
*)
    echo "error: CASTD_SANITIZE must be address or thread, not '$CASTD_SANITIZE'" >&2
    exit 64
    ;;
esac

# What a sanitizer does when it finds something: stop with the report, so that the test that
# started the process sees it fail. castd's own processes (castd, castc, cast-emulator, fuzz
# targets) check for leaks at exit, with the suppressions in scripts/sanitizers/lsan.supp;
# Tests/CastTestSupport gives the processes tests start CASTD_CHILD_ASAN_OPTIONS. The test
# runner itself does not check for leaks (CASTD_RUNNER_ASAN_OPTIONS): what a test process
# still holds when it exits (test fixtures, channels a test left open) is not castd's.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0}
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export CASTD_CHILD_ASAN_OPTIONS=$ASAN_OPTIONS
export CASTD_RUNNER_ASAN_OPTIONS=${CASTD_RUNNER_ASAN_OPTIONS:-halt_on_error=1:detect_leaks=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}

# Swift's crash handler reads the crashed process's memory in ways a sanitizer reports as a bug,
# and then hung CI's test process mid-report until CI's time limit. Under a sanitizer, a crash
# is reported by the sanitizer, or by Swift's one-line fatal error message, and the process ends.
if [ -n "${CASTD_SANITIZE:-}" ]; then
    export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
fi

# A sanitized build runs several times slower: the tests' timeouts stretch by this factor
# (Tests/CastTestSupport, testTimeScale). Only timeouts: what never happens still fails.
if [ -n "${CASTD_SANITIZE:-}" ]; then
    export CASTD_TEST_TIME_SCALE=${CASTD_TEST_TIME_SCALE:-4}
fi
