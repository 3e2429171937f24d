#!/usr/bin/env bash
# Drives the real cast-emulator binary with independent senders from PyPI (pychromecast), so
# that the emulator is checked against what third-party senders expect of a real device.
#
#   scripts/interop-test.sh            build cast-emulator if needed, set up the venv, run pytest
#   scripts/interop-test.sh -k volume  extra arguments go to pytest
#
# The virtualenv lives in .build/venv-interop (ignored by git, reused between runs). The test
# binds 127.0.0.2:8009, :8008 and :8443, the ports of a real device.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/swift-flags.sh

echo "==> swift build --product cast-emulator, castd, castc ${swift_flags[*]}" >&2
for product in cast-emulator castd castc; do swift build "${swift_flags[@]}" --product "$product"; done
bin="$(swift build "${swift_flags[@]}" --product cast-emulator --show-bin-path)/cast-emulator"

venv="$root/.build/venv-interop"
python="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating $venv" >&2
    "$python" -m venv "$venv"
fi
echo "==> pip install -r Tests/interop/requirements.txt" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r Tests/interop/requirements.txt

echo "==> pytest Tests/interop" >&2
CAST_EMULATOR_BIN="$bin" exec "$venv/bin/python" -m pytest -v -p no:cacheprovider Tests/interop "$@"
