#!/usr/bin/env bash
# Proof that the suite is steady: run the README's test command N times in a row and report each
# run (passed or failed, seconds, the tests that failed). Stops at nothing: every run is reported.
#
#   scripts/steady.sh 10                                   ten runs of scripts/test.sh
#   CASTD_SANITIZE=address scripts/steady.sh --hog 3       three sanitized runs beside
#                                                          `stress-ng --cpu 2` (both cores busy)
#
# Logs go to ${CASTD_STEADY_LOGS:-/tmp/castd-steady}/run-N.log; the summary is printed and kept
# in summary.txt there. Exits non-zero when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

hog=false
if [ "${1:-}" = "--hog" ]; then hog=true; shift; fi
runs=${1:?usage: scripts/steady.sh [--hog] RUNS}
logs=${CASTD_STEADY_LOGS:-/tmp/castd-steady}
mkdir -p "$logs"
summary=$logs/summary.txt
: >"$summary"

# Each run reports its stalls (Tests/CastTestSupport/StallCheck.swift): a run that fails on a
# deadline then says whether the test process computed, waited for a CPU, or slept meanwhile.
export CASTD_TEST_STALL_CHECK=${CASTD_TEST_STALL_CHECK:-1}

hog_pid=
if $hog; then
    command -v stress-ng >/dev/null || { echo "steady: --hog needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
    stress-ng --cpu 2 --quiet &
    hog_pid=$!
    trap 'kill $hog_pid 2>/dev/null' EXIT
fi

failed=0
for i in $(seq 1 "$runs"); do
    start=$SECONDS
    if scripts/test.sh >"$logs/run-$i.log" 2>&1; then
        line="run $i: passed in $((SECONDS - start)) s"
    else
        failed=$((failed + 1))
        which=$(grep -oE 'Test [^ ]+\(\)? (failed|recorded an issue)|Test "[^"]+" (failed|recorded an issue)|error: .*' "$logs/run-$i.log" | sort -u | head -5 | tr '\n' ';')
        line="run $i: FAILED in $((SECONDS - start)) s: $which (log: $logs/run-$i.log)"
    fi
    echo "$line" | tee -a "$summary"
done
echo "steady: $((runs - failed)) of $runs runs passed${hog:+$($hog && echo ' beside stress-ng --cpu 2')}" | tee -a "$summary"
[ $failed -eq 0 ]
