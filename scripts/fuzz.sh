#!/usr/bin/env bash
# Fuzzes castd's parsers with libFuzzer (Fuzz/: one executable per target).
#
#   scripts/fuzz.sh [SECONDS] [TARGET…]    each target for SECONDS (default 60); all targets by default
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 36000 CastTXTFuzzer   stop at a number of executions instead
#   FUZZ_OPTIONS="-max_len=1300" scripts/fuzz.sh 60 CastTXTFuzzer   more libFuzzer options
#   scripts/fuzz.sh --build address 60     fuzz from the test suite's address-sanitizer build (CI)
#   scripts/fuzz.sh --replay [TARGET…]     no fuzzing: replay Fuzz/Corpus through the plain build
#
# A fuzz build is the targets compiled with coverage instrumentation and AddressSanitizer and
# linked with libFuzzer's driver; a target without the driver replays its arguments instead
# (Fuzz/FuzzSupport). `--build release` (the default) is an optimised build
# in .build-fuzz (or $CASTD_FUZZ_SCRATCH); `--build address` relinks the targets of the debug
# build `CASTD_SANITIZE=address scripts/test.sh` made (scripts/swift-flags.sh), which already has
# the instrumentation, so CI compiles nothing twice.
#
# A long run needs a core of its own. libFuzzer's per-input timeout (10 s) is wall time: a run
# paused with SIGSTOP, or starved at nice 19 beside a busy build, ends with a "timeout" whose input
# replays in milliseconds.
#
# Each target runs on its working corpus SCRATCH/fuzz/corpus/TARGET (new inputs land there; not
# committed), seeded from Fuzz/Corpus/TARGET. Prints executions and executions per second per
# target. Fails if a target crashes, leaks, times out or breaks a property, naming the reproducer:
# replay it with `swift run TARGET FILE` (a normal build), and add it to Fuzz/Corpus/TARGET with a
# regression test (Fuzz/Findings/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

all=(CastFrameFuzzer CastPayloadFuzzer DeviceAuthFuzzer CastdRequestFuzzer CastTXTFuzzer CastdConfigFuzzer
    CastdStateFuzzer ClientFrameFuzzer)
# ClientFrameFuzzer is the C client's frame reader (clients/c/fuzz/frame_fuzzer.c, seeds in
# clients/c/fuzz/corpus): C built by make with the Swift toolchain's clang and its libFuzzer,
# AddressSanitizer and UBSan, whatever --build says.
c_target=ClientFrameFuzzer
c_fuzzer=clients/c/build/frame-fuzzer
build_c_fuzzer() {
    make --no-print-directory -C clients/c build/frame-fuzzer FUZZ_CC="$(dirname "$(command -v swiftc)")/clang" >&2
}
seeds() { # target
    if [ "$1" = "$c_target" ]; then echo clients/c/fuzz/corpus; else echo "Fuzz/Corpus/$1"; fi
}

if [ "${1:-}" = "--replay" ]; then
    shift
    targets=("$@")
    [ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
    source scripts/swift-flags.sh
    swift build --quiet "${swift_flags[@]}"
    bin=$(swift build "${swift_flags[@]}" --show-bin-path)
    for target in "${targets[@]}"; do
        if [ "$target" = "$c_target" ]; then
            build_c_fuzzer
            "$c_fuzzer" -runs=0 "$(seeds "$target")"
        else
            "$bin/$target" "Fuzz/Corpus/$target"
        fi
    done
    exit 0
fi

build=release
if [ "${1:-}" = "--build" ]; then
    build=${2:?--build needs release or address}
    shift 2
fi
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

case "$build" in
release)
    # -sanitize=fuzzer links libFuzzer (its own main is not used: SwiftPM links an executable's
    # main to the target's @main) and -u takes its driver from the archive; -DFUZZING makes a
    # target without the driver fail instead of replaying (Fuzz/FuzzSupport).
    scratch=${CASTD_FUZZ_SCRATCH:-.build-fuzz}
    # lld links: gold stops with an internal error (format_file_lineno) on this build's debug
    # information. ld.lld comes with the Swift toolchain.
    flags=(-c release --scratch-path "$scratch" -Xswiftc -use-ld=lld -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
        -Xswiftc -DFUZZING -Xlinker -u -Xlinker LLVMFuzzerRunDriver)
    ;;
address)
    # The test build has the instrumentation (scripts/swift-flags.sh) but links no libFuzzer:
    # relink the targets with its driver, which needs the C++ library.
    CASTD_SANITIZE=address
    source scripts/swift-flags.sh
    scratch=.build-address
    resources=$(swiftc -print-target-info | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')
    libfuzzer=$resources/clang/lib/linux/libclang_rt.fuzzer_no_main-$(uname -m).a
    if [ ! -f "$libfuzzer" ]; then
        echo "error: libFuzzer is not where this Swift toolchain keeps it ($libfuzzer)" >&2
        exit 1
    fi
    flags=("${swift_flags[@]}" -Xlinker -u -Xlinker LLVMFuzzerRunDriver -Xlinker "$libfuzzer" -Xlinker -lstdc++)
    ;;
*)
    echo "error: --build takes release or address, not '$build'" >&2
    exit 64
    ;;
esac

started=$SECONDS
for target in "${targets[@]}"; do
    echo "==> building $target (libFuzzer, address sanitizer, $build)" >&2
    mkdir -p "$scratch/fuzz"
    if [ "$target" = "$c_target" ]; then
        build_c_fuzzer || { echo "error: cannot build $target" >&2; exit 1; }
        continue
    fi
    if ! swift build "${flags[@]}" --product "$target" >"$scratch/fuzz/build-$target.log" 2>&1; then
        grep -E "error:" "$scratch/fuzz/build-$target.log" | sort -u | head -n 20 >&2 || tail -n 20 "$scratch/fuzz/build-$target.log" >&2
        echo "error: cannot build $target (log: $scratch/fuzz/build-$target.log)" >&2
        exit 1
    fi
done
bin=$(swift build "${flags[@]}" --show-bin-path)
echo "==> built in $((SECONDS - started)) s" >&2

failed=()
summary=()
for target in "${targets[@]}"; do
    work="$scratch/fuzz/corpus/$target"
    artifacts="$scratch/fuzz/artifacts/$target"
    log="$scratch/fuzz/$target.log"
    mkdir -p "$work" "$artifacts"
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$artifacts/")
    [ -n "${FUZZ_RUNS:-}" ] && options+=(-runs="$FUZZ_RUNS")
    # shellcheck disable=SC2206 # split on purpose: one or more -flag=value words
    [ -n "${FUZZ_OPTIONS:-}" ] && options+=($FUZZ_OPTIONS)
    [ -f "Fuzz/Dictionaries/$target.dict" ] && options+=(-dict="Fuzz/Dictionaries/$target.dict")
    # libFuzzer checks for leaks after each input whose mallocs and frees do not balance. The
    # verifier runs on Swift's concurrency pool, which frees some of an input's memory after the
    # input returns, so every input would get a whole-heap leak check: 34 executions/s instead of
    # about a thousand. The one leak that check found (65 bytes per signature) is swift-crypto's
    # (scripts/sanitizers/lsan.supp); castd's processes are checked for leaks at exit by the tests.
    [ "$target" = DeviceAuthFuzzer ] && options+=(-detect_leaks=0)
    executable=$bin/$target
    # A frame is at most 4 MiB; inputs of up to 64 KiB reach every state of the reader.
    [ "$target" = "$c_target" ] && executable=$c_fuzzer && options+=(-max_len=65536)
    echo "==> $target for up to ${seconds} s${FUZZ_RUNS:+ or $FUZZ_RUNS runs} (log: $log)" >&2
    status=0
    "$executable" "${options[@]}" "$work" "$(seeds "$target")" >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    line=$(printf "%-20s %12s executions %8s exec/s  corpus %s" "$target" "${runs:-?}" "${rate:-?}" "$(ls "$work" | wc -l)")
    summary+=("$line")
    echo "$line" >&2
    if [ "$status" -ne 0 ]; then
        reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        echo "error: $target failed (exit $status): $(grep -m1 -E "ERROR|fuzz property|Fatal error" "$log" || true)" >&2
        replay="swift run $target"
        [ "$target" = "$c_target" ] && replay=$c_fuzzer
        echo "       reproducer: ${reproducer:-see $log}; replay: $replay ${reproducer:-FILE}" >&2
        failed+=("$target")
    fi
done

echo "==> fuzzing summary (${seconds} s per target${FUZZ_RUNS:+, at most $FUZZ_RUNS runs})"
printf '%s\n' "${summary[@]}"
echo "==> total $((SECONDS - started)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "error: ${failed[*]} found a crash; see above" >&2
    exit 1
fi
