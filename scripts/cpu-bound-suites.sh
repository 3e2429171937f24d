#!/usr/bin/env bash
# Prints a `swift test --filter`/`--skip` pattern matching every suite tagged .cpuBound in Tests/
# (`@Suite(.tags(.cpuBound))` or `@Suite("…", .tags(.cpuBound))`): Module.Suite, anchored, so a
# suite of the same name in another module is not matched. scripts/test.sh runs them apart.
set -euo pipefail
cd "$(dirname "$0")/.."
names=$(grep -rl --include='*.swift' 'tags(\.cpuBound)' Tests | sort | xargs awk '
    /@Suite\(.*\.tags\(\.cpuBound\)/ { want = 1 }
    want && match($0, /(struct|class) [A-Za-z0-9_]+/) {
        split(FILENAME, path, "/")
        name = substr($0, RSTART, RLENGTH); sub(/^(struct|class) /, "", name)
        print path[2] "\\." name
        want = 0
    }' | paste -sd'|')
[ -n "$names" ] || { echo "cpu-bound-suites: no suite is tagged .cpuBound" >&2; exit 1; }
echo "^($names)(/|\$)"
