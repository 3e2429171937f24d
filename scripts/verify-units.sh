#!/usr/bin/env bash
# Check castd's systemd units as scripts/install.sh installs them: `systemd-analyze verify` on
# the system units and on the user units, then `systemd-analyze security --offline` on both
# services. Fails on anything systemd-analyze says about our units. Needs no running systemd
# (it works in a container where systemd is installed but is not PID 1).
#
#   scripts/verify-units.sh [--bindir DIR]
#
# verify checks that ExecStart= names an executable file, so the units are installed with
# @BINDIR@ pointing at a castd that exists: DIR, else the first of .build/debug, .build/release
# and .build-address/debug of this checkout that has castd and cast-mpris, else (nothing built yet) a stand-in script in the temporary directory. castd is
# never run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# The most exposure `systemd-analyze security` may find, in its tenths (14 = "1.4 OK"): the
# system service is at 1.4 and the user service, without what a user manager cannot apply,
# at 6.4 (systemd 252; both would be 0.1 lower with SystemCallFilter=~@resources, which
# libdispatch needs). A lost hardening setting raises them. Raise these only with a reason.
system_threshold=14
user_threshold=64
# cast-mpris's user unit, with the same hardening as castd's user unit.
mpris_threshold=64

bindir=
while [ $# -gt 0 ]; do
    case $1 in
        --bindir) bindir=${2:?--bindir needs a directory}; shift 2 ;;
        --bindir=*) bindir=${1#*=}; shift ;;
        *) echo "verify-units.sh: unknown argument '$1'" >&2; exit 64 ;;
    esac
done

if ! command -v systemd-analyze > /dev/null; then
    echo "verify-units.sh: systemd-analyze is missing (apt-get install systemd)" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "$bindir" ]; then
    # A build with every program the units start (a sanitized run's .build/debug holds only
    # the plain castd that scripts/test.sh builds for the memory tests).
    for dir in "$repo/.build/debug" "$repo/.build/release" "$repo/.build-address/debug"; do
        if [ -x "$dir/castd" ] && [ -x "$dir/cast-mpris" ]; then bindir=$dir; break; fi
    done
fi
if [ -z "$bindir" ]; then
    bindir=$work/bin
    mkdir -p "$bindir"
    for program in castd cast-mpris; do
        printf '#!/bin/sh\necho "a stand-in for %s, for systemd-analyze verify" >&2\nexit 1\n' "$program" > "$bindir/$program"
        chmod +x "$bindir/$program"
    done
    echo "note: no castd built; the units point at a stand-in (verify only checks it is executable)" >&2
else
    for program in castd cast-mpris; do
        if [ ! -x "$bindir/$program" ]; then
            echo "verify-units.sh: no executable $bindir/$program" >&2
            exit 1
        fi
    done
fi
bindir=$(cd "$bindir" && pwd)

if ! out=$(PREFIX=$work/prefix BINDIR=$bindir DESTDIR= "$repo/scripts/install.sh" --units-only 2>&1); then
    printf '%s\n' "$out" >&2
    exit 1
fi
system_dir=$work/prefix/lib/systemd/system
user_dir=$work/prefix/lib/systemd/user

# The user manager needs a runtime directory even to load units (%t); CI has no session.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
    export XDG_RUNTIME_DIR=$work/runtime
    mkdir -m 0700 "$XDG_RUNTIME_DIR"
fi

failed=0
last_output=

# Runs systemd-analyze; fails on a non-zero status or on any line about our units. Other lines
# are about units of this host that ours refer to (sockets.target, avahi-daemon.service, …):
# shown, not counted.
analyze() {
    local what=$1 dir=$2
    shift 2
    local out status=0
    out=$(cd "$work" && systemd-analyze "$@" 2>&1) || status=$?
    last_output=$out
    # `security` prints a table, one row per setting ("+ NoNewPrivileges=   Service …", or
    # with ✓/✗), and an "Overall exposure level" line: not findings, and not about a file.
    local findings ours others
    findings=$(grep -vE '^[^ ]*[ ]+[A-Z][A-Za-z]*[=/]|^[^ ]* *Overall exposure level|^ +NAME +DESCRIPTION|^ *$' <<< "$out" || true)
    ours=$(grep -E "castd\.(socket|service)|cast-mpris\.service|$dir" <<< "$findings" || true)
    others=$(grep -vE "castd\.(socket|service)|cast-mpris\.service|$dir" <<< "$findings" || true)
    if [ "$status" -ne 0 ] || [ -n "$ours" ]; then
        echo "FAIL: $what (systemd-analyze exited $status)" >&2
        printf '%s\n' "$out" >&2
        failed=1
    else
        echo "ok: $what" >&2
    fi
    if [ -n "$others" ]; then
        echo "  (about other units, not counted:)" >&2
        printf '    %s\n' "$others" >&2
    fi
}

echo "==> systemd-analyze verify (units in $work/prefix, ExecStart= in $bindir)" >&2
# --recursive-errors=no: a non-zero status for warnings about the units named, not for those
# about other units they pull in. --man=no: our units name no man pages; do not need man(1).
analyze "system units verify" "$system_dir" \
    --system verify --man=no --recursive-errors=no "$system_dir/castd.socket" "$system_dir/castd.service"
analyze "user units verify" "$user_dir" \
    --user verify --man=no --recursive-errors=no "$user_dir/castd.socket" "$user_dir/castd.service" \
    "$user_dir/cast-mpris.service"

echo "==> systemd-analyze security --offline" >&2
# It exits non-zero when the exposure is above the threshold.
exposure() { grep -o 'Overall exposure level.*' <<< "$last_output" | sed 's/^/  /' >&2 || true; }
analyze "system service security (threshold $system_threshold)" "$system_dir" \
    --system security --offline=yes --threshold="$system_threshold" "$system_dir/castd.service"
exposure
analyze "user service security (threshold $user_threshold)" "$user_dir" \
    --user security --offline=yes --threshold="$user_threshold" "$user_dir/castd.service"
exposure
analyze "cast-mpris user service security (threshold $mpris_threshold)" "$user_dir" \
    --user security --offline=yes --threshold="$mpris_threshold" "$user_dir/cast-mpris.service"
exposure

echo "==> systemd-sysusers --dry-run" >&2
sysusers_out=$(systemd-sysusers --root="$work/sysroot" --dry-run "$work/prefix/lib/sysusers.d/castd.conf" 2>&1) || {
    echo "FAIL: sysusers.d/castd.conf" >&2
    failed=1
}
if grep -q "Creating group 'castd'" <<< "$sysusers_out" && grep -q "Creating user 'castd'" <<< "$sysusers_out"; then
    echo "ok: sysusers.d/castd.conf creates the user and group castd" >&2
else
    printf '%s\n' "$sysusers_out" >&2
    echo "FAIL: sysusers.d/castd.conf does not create both the user and the group castd" >&2
    failed=1
fi

# The sockets are where castd itself would serve: castd, run with the service's ExecStart=
# arguments and --print-socket-path, must name the socket unit's ListenStream=. Needs a built
# castd, not the stand-in.
if [ "$bindir" != "$work/bin" ]; then
    echo "==> socket paths agree with castd --print-socket-path" >&2
    has_mode=true
    help=$("$bindir/castd" --help 2>&1 || true)
    if ! grep -q -- '--mode' <<< "$help"; then
        # Before castd had --mode, the environment alone chose the path.
        echo "note: $bindir/castd has no --mode, which ExecStart= passes: these units need a newer castd" >&2
        has_mode=false
    fi
    runtime=/run/user/4242
    check_path() {
        local what=$1 dir=$2
        shift 2
        local -a args
        # ExecStart=BINARY ARGS…: the arguments (plain words; the units quote nothing).
        read -r -a args <<< "$(sed -n 's/^ExecStart=[^ ]*//p' "$dir/castd.service")"
        if ! $has_mode; then
            local -a kept=()
            local i=0
            while [ $i -lt ${#args[@]} ]; do
                if [ "${args[$i]}" = --mode ]; then i=$((i + 2)); continue; fi
                kept+=("${args[$i]}")
                i=$((i + 1))
            done
            args=("${kept[@]}")
        fi
        local expected listen
        expected=$(env -i PATH=/usr/bin:/bin "$@" "$bindir/castd" "${args[@]}" --print-socket-path 2>&1) || {
            echo "FAIL: $what: castd${args[*]:+ ${args[*]}} --print-socket-path: $expected" >&2
            failed=1
            return
        }
        # The RPC socket, then its files socket beside it (rpc.proto, "The files socket").
        listen=$(sed -n 's/^ListenStream=//p' "$dir/castd.socket" | sed "s|%t|$runtime|" | paste -sd ' ')
        if [ "$listen" = "$expected $expected.files" ]; then
            echo "ok: $what sockets $listen, as castd${args[*]:+ ${args[*]}} says" >&2
        else
            echo "FAIL: $what: castd.socket listens on '$listen', castd${args[*]:+ ${args[*]}} would serve '$expected' and '$expected.files'" >&2
            failed=1
        fi
    }
    check_path "system" "$system_dir"
    check_path "user" "$user_dir" XDG_RUNTIME_DIR=$runtime
fi

if [ "$failed" -ne 0 ]; then
    echo "error: castd's units have the problems above" >&2
    exit 1
fi
