#!/usr/bin/env bash
# castd's main job, end to end, with no Chromecast needed:
#
#   scripts/demo.sh         install what is missing, build, start an emulated "Living Room TV"
#                           published over mDNS and castd, then drive it with castc
#   scripts/demo.sh stop    stop what the demo started
#
# Everything it starts keeps running afterwards, so you can go on with castc yourself.
# State and logs: .castd-demo/ in this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
demo=$root/.castd-demo
bin=$root/.build/debug

stop_pidfile() {
    local file=$1
    [ -f "$file" ] || return 0
    local pid
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$file"
}

if [ "${1:-}" = "stop" ]; then
    stop_pidfile "$demo/castd.pid"
    stop_pidfile "$demo/emulator.pid"
    [ -d "$demo/avahi" ] && scripts/avahi-loopback.sh stop "$demo/avahi" || true
    echo "demo stopped"
    exit 0
fi

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
show() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@"; }

# 1. What a fresh Debian 12 machine lacks (one list for the demo, the tests and CI).
scripts/install-packages.sh demo

# 2. Build (the first build compiles the dependencies: a few minutes).
say "Building castd, castc and cast-emulator"
swift build

# 3. mDNS: the system's Avahi if it runs, else one restricted to loopback.
mkdir -p "$demo"
if ! avahi-daemon --check 2>/dev/null; then
    say "Starting Avahi on loopback only"
    scripts/avahi-loopback.sh start "$demo/avahi"
fi

# 4. An emulated device, published over mDNS like a real Chromecast. Its device authentication
#    root (made once, kept in .castd-demo/authority/) is what castd is told to trust.
stop_pidfile "$demo/emulator.pid"
rm -f "$demo/emulator.json"
"$bin/cast-emulator" --name "Living Room TV" --port 0 --publish --authority "$demo/authority" \
    --ready-file "$demo/emulator.json" --log "$demo/emulator-messages.jsonl" \
    >"$demo/emulator.log" 2>&1 &
echo $! >"$demo/emulator.pid"
for _ in $(seq 100); do [ -s "$demo/emulator.json" ] && break; sleep 0.1; done
[ -s "$demo/emulator.json" ] || { cat "$demo/emulator.log"; exit 1; }

# 5. castd, on the socket castc finds by default. Its state (the session it would rejoin) starts
#    empty: the emulated device started above is a new device, with an id and a port of its own,
#    and a session saved by an earlier demo would have castd retry a device that is gone.
socket=$("$bin/castd" --print-socket-path)
stop_pidfile "$demo/castd.pid"
rm -rf "$demo/state"
# castd does not run as root in system mode (the machine's castd runs as its own user castd):
# run as root, the demo's castd is a daemon for root alone, on the same socket.
mode=()
[ "$(id -u)" = 0 ] && mode=(--mode user --socket "$socket")
"$bin/castd" "${mode[@]}" --state-directory "$demo/state" --trust-root "$demo/authority/root.pem" \
    >"$demo/castd.log" 2>&1 &
echo $! >"$demo/castd.pid"
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { cat "$demo/castd.log"; exit 1; }

# 6. The show.
export PATH="$bin:$PATH"
say "castd found the emulated device over mDNS:"
for _ in $(seq 100); do castc devices 2>/dev/null | grep -q "Living Room TV" && break; sleep 0.1; done
show castc devices
say "Connect, load a video, pause, resume:"
show castc connect "Living Room TV"
show castc load https://example.com/big_buck_bunny.mp4 --content-type video/mp4 --title "Big Buck Bunny"
show castc pause
show castc status
show castc play
show castc seek 120
show castc status

cat <<MSG

castd and the emulated device keep running (logs in .castd-demo/).
  Try:        export PATH="$bin:\$PATH"; castc watch     (then castc pause in another terminal)
  Stop:       scripts/demo.sh stop
  Real TVs:   stop the demo, make sure the system's avahi-daemon runs on your network, and run
              castd; or point it at a device: castd --device 192.168.1.20
              (real devices authenticate with Google's Cast roots, which castd ships)
MSG
