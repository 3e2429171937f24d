#!/usr/bin/env bash
# The benchmarks (`make bench`): a release build, the Python peers in a virtualenv, then
# castd-bench, which starts emulated devices and castd and writes BENCHMARKS.md.
#
#   scripts/bench.sh                 every figure (about 5 minutes once built), into BENCHMARKS.md
#   scripts/bench.sh --quick         a smoke run with few samples, into .build/BENCHMARKS-quick.md
#   scripts/bench.sh --only 1,3      some figures; any other castd-bench option passes through
#                                    (.build/release/castd-bench --help lists them)
#
# The virtualenv is .build/venv-bench (pychromecast and catt from benchmarks/requirements.txt,
# and the castd package from ./clients/python for figure 9). Figure 9 also needs the C client
# (make -C clients/c all bench: libprotobuf-c); if either does not build, figure 9 says so.
# Figure 7 needs an Avahi daemon: if none answers, this starts one restricted to loopback
# (scripts/avahi-loopback.sh; root needed) and leaves it running, as scripts/test.sh does.
# Figures 1-4 listen on 127.0.0.3 ports 8009, 8008 and 8443 (the ports of a real device).
set -euo pipefail
cd "$(dirname "$0")/.."

args=("$@")
if [[ " ${args[*]-} " == *" --quick "* && " ${args[*]-} " != *" --output "* ]]; then
    args+=(--output .build/BENCHMARKS-quick.md)
fi

echo "==> make release" >&2
started=$SECONDS
make --no-print-directory release
build_seconds=$((SECONDS - started))

venv=.build/venv-bench
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
fi
echo "==> pip install -r benchmarks/requirements.txt" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt

clients=()
echo "==> make -C clients/c all bench" >&2
if make --no-print-directory -C clients/c all bench; then
    clients+=(--c-client-dir clients/c/build)
else
    echo "the C client did not build: figure 9 will say so" >&2
fi
echo "==> pip install ./clients/python" >&2
if "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ./clients/python; then
    clients+=(--client-python "$venv/bin/python")
else
    echo "the Python client did not install: figure 9 will say so" >&2
fi

if ! avahi-daemon --check 2>/dev/null; then
    state=${CASTD_TEST_STATE:-/tmp/castd-test-avahi}
    mkdir -p "$state"
    scripts/avahi-loopback.sh start "$state" || echo "no Avahi: figure 7 will say so" >&2
fi

echo "==> castd-bench ${args[*]-}" >&2
exec .build/release/castd-bench \
    --bin .build/release \
    --python "$venv/bin/python" --catt "$venv/bin/catt" \
    "${clients[@]}" \
    --swift-version "$(swift --version 2>/dev/null | head -n 1)" \
    --build-info "make release (castc linked statically, see Package.swift); the build step of this run took ${build_seconds} s" \
    "${args[@]}"
