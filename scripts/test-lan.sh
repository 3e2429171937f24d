#!/usr/bin/env bash
# A home LAN in network namespaces, for tests and by hand: a switch (a bridge in a namespace of
# its own), a "desktop" where castd runs and TVs where cast-emulators run, each joined to the
# switch by a veth pair (its cable), each with its own hostname, system D-Bus and avahi-daemon on
# its eth0. Private addresses, inside the namespaces only: nothing touches the host's network.
#
#   scripts/test-lan.sh check                 exit 0 when namespaces can be made here, else say why
#   scripts/test-lan.sh up DIR [TVS]          build it (1 TV by default); DIR keeps its state
#   scripts/test-lan.sh exec DIR NODE CMD...  run CMD in NODE (desktop, tv1, tv2, …)
#   scripts/test-lan.sh address DIR NODE      print NODE's address
#   scripts/test-lan.sh cable DIR NODE up|down  plug NODE's cable in, or pull it (at the switch)
#   scripts/test-lan.sh renumber DIR NODE     give NODE a new address, as a DHCP renewal may; prints it
#   scripts/test-lan.sh down DIR              remove it all
#
# By hand:
#   scripts/test-lan.sh up /tmp/lan 1
#   scripts/test-lan.sh exec /tmp/lan tv1 .build/debug/cast-emulator --name "LAN TV" \
#       --host "$(scripts/test-lan.sh address /tmp/lan tv1)" --port 8009 --publish &
#   scripts/test-lan.sh exec /tmp/lan desktop .build/debug/castd --mode user --socket /tmp/lan/castd.sock &
#   CASTD_SOCKET=/tmp/lan/castd.sock .build/debug/castc devices
#   scripts/test-lan.sh down /tmp/lan
#
# TEST_LAN_IMPAIR="tv1=100:5" at `up`: tv1's cable delays every frame 100 ms and drops 5 %, each
# way (scripts/lan-impair.py, two TAP devices and a forwarder: this kernel has no netem).
#
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), iproute2, util-linux, dbus, avahi-daemon and python3.
set -euo pipefail

readonly DEADLINE_SECONDS=${TEST_LAN_TIMEOUT:-20}

usage() {
    sed -n '\|^#   scripts/test-lan.sh check|,\|^#   scripts/test-lan.sh down|p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

die() {
    echo "test-lan: $*" >&2
    exit 1
}

# wait_until SECONDS COMMAND...: COMMAND every 0.1 s until it succeeds or SECONDS pass.
wait_until() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

check() {
    [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces)"
    local tool
    for tool in ip unshare nsenter dbus-daemon avahi-daemon; do
        command -v "$tool" >/dev/null || die "needs $tool"
    done
    local probe="cprobe$$"
    ip netns add "$probe" 2>/dev/null || die "cannot make a network namespace here (ip netns add failed)"
    ip netns del "$probe"
}

# The state of DIR: its namespaces' prefix, its subnet and its nodes.
load() {
    local dir=$1
    [[ -f "$dir/lan.env" ]] || die "$dir holds no LAN (scripts/test-lan.sh up $dir)"
    # shellcheck disable=SC1091
    source "$dir/lan.env"
}

node_pid() {
    local dir=$1 node=$2
    [[ -f "$dir/$node.pid" ]] || die "no node $node in $dir (nodes: ${NODES:-})"
    cat "$dir/$node.pid"
}

# A node: its namespace, its cable to the switch, its address, and in a mount and UTS
# namespace of its own a hostname, a system D-Bus and an avahi-daemon on eth0. The node's
# process (sleep) holds those namespaces; `exec` joins them.
start_node() {
    local dir=$1 node=$2 number=$3
    local ns="$PREFIX-$node" address="$SUBNET.$number"
    ip netns add "$ns"
    local impairment
    impairment=$(tr ' ' '\n' <<<"${TEST_LAN_IMPAIR:-}" | sed -n "s/^$node=//p")
    if [[ -n $impairment ]]; then
        # The cable: two TAP devices in the switch's namespace and a forwarder between them.
        rm -f "$dir/$node.impair"
        ip netns exec "$PREFIX-sw" python3 "$(dirname "$0")/lan-impair.py" \
            --delay-ms "${impairment%%:*}" --loss-percent "${impairment##*:}" --ready "$dir/$node.impair" \
            "$PREFIX$number" "${PREFIX}s$number" </dev/null >"$dir/$node.impair.log" 2>&1 &
        wait_until "$DEADLINE_SECONDS" test -s "$dir/$node.impair" || die "$node's impaired cable did not start"
        ip -n "$PREFIX-sw" link set "$PREFIX$number" netns "$ns"
    else
        ip link add "$PREFIX$number" type veth peer name "${PREFIX}s$number"
        ip link set "$PREFIX$number" netns "$ns"
        ip link set "${PREFIX}s$number" netns "$PREFIX-sw"
    fi
    ip -n "$PREFIX-sw" link set "${PREFIX}s$number" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$PREFIX$number" name eth0
    ip -n "$ns" addr add "$address/24" dev eth0
    ip -n "$ns" link set eth0 up
    echo "$address" >"$dir/$node.address"
    cat >"$dir/$node.avahi.conf" <<EOF
[server]
host-name=$node
use-ipv4=yes
use-ipv6=no
allow-interfaces=eth0
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
EOF
    rm -f "$dir/$node.ready"
    # ip netns exec and unshare (without --fork) exec: $! is the node's shell, then its sleep.
    ip netns exec "$ns" unshare --mount --uts --propagation private sh -c '
        set -e
        hostname "$1"
        mount -t tmpfs castd-lan /run/dbus 2>/dev/null || { mkdir -p /run/dbus; mount -t tmpfs castd-lan /run/dbus; }
        mkdir -p /run/avahi-daemon
        mount -t tmpfs castd-lan /run/avahi-daemon
        dbus-daemon --system --fork --print-pid >"$2/$1.dbus.pid"
        avahi-daemon --no-drop-root --no-rlimits --no-chroot -f "$2/$1.avahi.conf" -D
        touch "$2/$1.ready"
        exec sleep infinity
    ' sh "$node" "$dir" </dev/null >"$dir/$node.log" 2>&1 &
    echo $! >"$dir/$node.pid"
}

up() {
    local dir=$1 tvs=${2:-1}
    check
    mkdir -p "$dir"
    [[ ! -f "$dir/lan.env" ]] || die "$dir holds a LAN already (scripts/test-lan.sh down $dir)"
    local prefix subnet
    prefix="cl$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
    subnet="10.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))"
    local nodes="desktop"
    local i
    for ((i = 1; i <= tvs; i++)); do nodes="$nodes tv$i"; done
    printf 'PREFIX=%s\nSUBNET=%s\nNODES="%s"\n' "$prefix" "$subnet" "$nodes" >"$dir/lan.env"
    load "$dir"
    ip netns add "$PREFIX-sw"
    ip -n "$PREFIX-sw" link add br0 type bridge
    ip -n "$PREFIX-sw" link set br0 up
    start_node "$dir" desktop 1
    for ((i = 1; i <= tvs; i++)); do start_node "$dir" "tv$i" $((10 + i)); done
    local node
    for node in $NODES; do
        if ! wait_until "$DEADLINE_SECONDS" test -f "$dir/$node.ready"; then
            cat "$dir/$node.log" >&2 || true
            die "node $node did not start within ${DEADLINE_SECONDS}s"
        fi
        if ! wait_until "$DEADLINE_SECONDS" run_in "$dir" "$node" avahi-daemon --check; then
            die "node $node's avahi-daemon did not answer within ${DEADLINE_SECONDS}s"
        fi
    done
    echo "test-lan: $NODES on $SUBNET.0/24 (namespaces $PREFIX-*)" >&2
}

# run_in DIR NODE CMD...: CMD in NODE's namespaces (network, mount, hostname).
run_in() {
    local dir=$1 node=$2
    shift 2
    load "$dir"
    local pid
    pid=$(node_pid "$dir" "$node")
    nsenter --target "$pid" --net --mount --uts --wd="$PWD" -- "$@"
}

cable() {
    local dir=$1 node=$2 state=$3
    load "$dir"
    [[ $state == up || $state == down ]] || usage
    ip -n "$PREFIX-sw" link set "${PREFIX}s$(node_number "$node")" "$state"
}

node_number() {
    case $1 in
    desktop) echo 1 ;;
    tv*) echo $((10 + ${1#tv})) ;;
    *) die "no node $1" ;;
    esac
}

renumber() {
    local dir=$1 node=$2
    load "$dir"
    local number old new
    number=$(node_number "$node")
    old=$(cat "$dir/$node.address")
    new="$SUBNET.$((${old##*.} < 100 ? ${old##*.} + 100 : ${old##*.} - 100))"
    ip -n "$PREFIX-$node" addr flush dev eth0 scope global
    ip -n "$PREFIX-$node" addr add "$new/24" dev eth0
    echo "$new" >"$dir/$node.address"
    echo "$new"
}

down() {
    local dir=$1
    [[ -f "$dir/lan.env" ]] || return 0
    load "$dir"
    local ns
    local pid
    for pid in $(cat "$dir"/*.impair 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    for ns in $(ip netns list | awk '{print $1}' | grep "^$PREFIX-" || true); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -f "$dir/lan.env"
}

[[ $# -ge 1 ]] || usage
command=$1
shift
case $command in
check) check ;;
up) [[ $# -ge 1 ]] || usage; up "$@" ;;
exec)
    [[ $# -ge 3 ]] || usage
    dir=$1 node=$2
    shift 2
    load "$dir"
    exec nsenter --target "$(node_pid "$dir" "$node")" --net --mount --uts --wd="$PWD" -- "$@"
    ;;
address) [[ $# -eq 2 ]] || usage; cat "$1/$2.address" ;;
cable) [[ $# -eq 3 ]] || usage; cable "$@" ;;
renumber) [[ $# -eq 2 ]] || usage; renumber "$@" ;;
down) [[ $# -eq 1 ]] || usage; down "$1" ;;
*) usage ;;
esac
