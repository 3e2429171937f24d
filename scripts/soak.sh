#!/usr/bin/env bash
# The soak test (`make soak`, issue 7): a release build of castd and castd-bench, then
# `castd-bench soak`, which hosts two emulated devices whose links drop every few seconds, runs
# castd as a process and 64 clients × 10,000 mixed requests and 8 watchers against it, and
# writes SOAK.md. It exits non-zero when a criterion fails (a lost or duplicated reply, watchers
# that disagree, resident memory grown by 5 % or more, file descriptors not back where they were).
#
#   scripts/soak.sh                  the full soak (a few minutes once built), into SOAK.md
#   scripts/soak.sh --quick          a smoke run (about 20 s), into .build/SOAK-quick.md
#   scripts/soak.sh --clients 16     any other castd-bench soak option passes through
#                                    (.build/release/castd-bench soak --help lists them)
#
# The build is the one scripts/bench.sh makes (`make release` builds each product on its own;
# castd links the Swift runtime statically in release builds, see Package.swift), limited to
# the two products the soak runs.
set -euo pipefail
cd "$(dirname "$0")/.."

args=("$@")
if [[ " ${args[*]-} " == *" --quick "* && " ${args[*]-} " != *" --output "* ]]; then
    args+=(--output .build/SOAK-quick.md)
fi

started=$SECONDS
for product in castd castd-bench; do
    echo "==> swift build -c release --product $product" >&2
    swift build -c release --product "$product"
done
build_seconds=$((SECONDS - started))

echo "==> castd-bench soak ${args[*]-}" >&2
exec .build/release/castd-bench soak \
    --bin .build/release \
    --swift-version "$(swift --version 2>/dev/null | head -n 1)" \
    --build-info "swift build -c release --product castd, then castd-bench (castd linked statically, see Package.swift); the build step of this run took ${build_seconds} s" \
    "${args[@]}"
