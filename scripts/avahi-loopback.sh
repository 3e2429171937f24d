#!/usr/bin/env bash
# Avahi on loopback only, for tests and demos on machines without systemd as PID 1
# (see MDNS-RECIPE.md).
#
#   scripts/avahi-loopback.sh start  DIR   # private system D-Bus (if none answers) + avahi-daemon on lo
#   scripts/avahi-loopback.sh stop   DIR   # stop what `start DIR` started (by pid file)
#   scripts/avahi-loopback.sh status DIR   # exit 0 when avahi-daemon answers
#
# Idempotent: `start` reuses a D-Bus system bus or an avahi-daemon that already runs, and `stop`
# only kills processes whose pid files are in DIR. mDNS never leaves loopback: the daemon this
# script starts has `allow-interfaces=lo`. Needs root (the system bus and /run/avahi-daemon).
set -euo pipefail

readonly BUS_SOCKET=/run/dbus/system_bus_socket
readonly AVAHI_RUNTIME_PID=/run/avahi-daemon/pid
readonly DEADLINE_SECONDS=${AVAHI_LOOPBACK_TIMEOUT:-15}

usage() {
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2
}

log() { echo "avahi-loopback: $*" >&2; }

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds or SECONDS pass.
wait_until() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            return 1
        fi
        sleep 0.1
    done
}

# A pid is alive when it exists and is not a zombie (PID 1 here reaps late).
alive() {
    local pid=$1 state
    [[ -n "$pid" ]] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

dead() { ! alive "$1"; }

# The first number in a pid file; nothing (and success) when there is no such file.
pid_from() {
    [[ -r "$1" ]] || return 0
    head -n 1 "$1" | tr -dc '0-9'
}

bus_answers() {
    dbus-send --system --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}

avahi_answers() { avahi-daemon --check >/dev/null 2>&1; }

start_dbus() {
    local dir=$1
    if bus_answers; then
        log "system D-Bus already answers at $BUS_SOCKET; reusing it"
        return 0
    fi
    mkdir -p /run/dbus
    rm -f /run/dbus/pid # a stale pid file stops dbus-daemon from starting
    if [[ -S "$BUS_SOCKET" ]]; then
        rm -f "$BUS_SOCKET" # nobody answers on it: stale
    fi
    dbus-daemon --system --fork --print-pid >"$dir/dbus.pid"
    if ! wait_until "$DEADLINE_SECONDS" bus_answers; then
        log "system D-Bus did not answer within ${DEADLINE_SECONDS}s"
        return 1
    fi
    log "started system D-Bus (pid $(pid_from "$dir/dbus.pid"))"
}

write_avahi_conf() {
    cat >"$1" <<'CONF'
[server]
host-name=castci
use-ipv4=yes
use-ipv6=no
allow-interfaces=lo
enable-dbus=yes
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
CONF
}

start_avahi() {
    local dir=$1
    if avahi_answers; then
        local pid
        pid=$(pid_from "$AVAHI_RUNTIME_PID")
        if [[ "$pid" == "$(pid_from "$dir/avahi.pid")" ]]; then
            log "avahi-daemon already running (pid $pid, started from $dir)"
        else
            log "avahi-daemon already running (pid $pid) but not started from $dir;" \
                "reusing it: make sure it is restricted to lo (allow-interfaces=lo)"
        fi
        return 0
    fi
    # A pid file left by a daemon that died (or is an unreaped zombie) makes `-D` refuse to start.
    if [[ -f "$AVAHI_RUNTIME_PID" ]] && ! alive "$(pid_from "$AVAHI_RUNTIME_PID")"; then
        rm -f "$AVAHI_RUNTIME_PID"
    fi
    write_avahi_conf "$dir/avahi.conf"
    avahi-daemon --no-drop-root --no-rlimits -f "$dir/avahi.conf" -D
    if ! wait_until "$DEADLINE_SECONDS" avahi_answers; then
        log "avahi-daemon did not come up within ${DEADLINE_SECONDS}s"
        return 1
    fi
    pid_from "$AVAHI_RUNTIME_PID" >"$dir/avahi.pid"
    log "started avahi-daemon on lo only (pid $(pid_from "$dir/avahi.pid"), config $dir/avahi.conf)"
}

# stop_pid NAME PIDFILE: SIGTERM, wait with a deadline, then SIGKILL.
stop_pid() {
    local name=$1 pidfile=$2 pid
    pid=$(pid_from "$pidfile")
    if [[ -z "$pid" ]]; then
        return 0
    fi
    if alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_until "$DEADLINE_SECONDS" dead "$pid"; then
            log "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        log "stopped $name (pid $pid)"
    fi
    rm -f "$pidfile"
}

cmd_start() {
    local dir=$1
    mkdir -p "$dir"
    start_dbus "$dir"
    start_avahi "$dir"
}

cmd_stop() {
    local dir=$1
    stop_pid avahi-daemon "$dir/avahi.pid"
    # The daemon removes its own pid file when it exits cleanly; after SIGKILL it cannot.
    if [[ -f "$AVAHI_RUNTIME_PID" ]] && ! alive "$(pid_from "$AVAHI_RUNTIME_PID")"; then
        rm -f "$AVAHI_RUNTIME_PID"
    fi
    stop_pid dbus-daemon "$dir/dbus.pid"
    if [[ -f /run/dbus/pid ]] && ! alive "$(pid_from /run/dbus/pid)"; then
        rm -f /run/dbus/pid "$BUS_SOCKET"
    fi
}

cmd_status() {
    local dir=$1 rc=0
    if bus_answers; then echo "dbus: answering at $BUS_SOCKET"; else echo "dbus: not answering"; rc=1; fi
    if avahi_answers; then
        echo "avahi-daemon: running (pid $(pid_from "$AVAHI_RUNTIME_PID"))"
    else
        echo "avahi-daemon: not running"
        rc=1
    fi
    for f in dbus.pid avahi.pid; do
        if [[ -f "$dir/$f" ]]; then echo "$dir/$f: $(pid_from "$dir/$f")"; fi
    done
    return $rc
}

[[ $# -eq 2 ]] || usage
case "$1" in
    start) cmd_start "$2" ;;
    stop) cmd_stop "$2" ;;
    status) cmd_status "$2" ;;
    *) usage ;;
esac
