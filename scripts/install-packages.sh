#!/usr/bin/env bash
# The Debian packages castd needs, in one list, and what installs the missing ones. The README's
# two commands and CI call it, each for what it runs:
#
#   scripts/install-packages.sh demo    building and running castd, castc and cast-emulator
#                                       (scripts/demo.sh)
#   scripts/install-packages.sh test    everything the whole suite uses besides (scripts/test.sh,
#                                       .ci/run)
#   scripts/install-packages.sh --list test    print the list and install nothing
#
# Installs only what dpkg does not list as installed, with `apt-get update` first; as root, or
# through sudo.
set -euo pipefail

# Building: Avahi's client library (discovery), libsystemd (sd-bus, sd-event, the journal, socket
# activation); running: Avahi's daemon, D-Bus, systemd's tools.
demo=(avahi-daemon avahi-utils dbus libavahi-client-dev libsystemd-dev systemd)
# Testing, besides: protoc and protoc-c (scripts/generate-protos.sh --check), iproute2 (the LAN of
# network namespaces), gcc, make, pkg-config, libprotobuf-c and valgrind (clients/c), python3-venv
# (clients/python and the pychromecast interop), playerctl (cast-mpris; dbus-daemon and
# dbus-monitor come with dbus), curl (an HTTP client independent of castd, for its media server),
# ffmpeg (audio files with real tags for castd's tag reader).
test=("${demo[@]}" protobuf-compiler protobuf-c-compiler libprotobuf-c-dev iproute2 pkg-config make gcc
    valgrind python3-venv playerctl curl ffmpeg)

list=false
if [ "${1:-}" = "--list" ]; then
    list=true
    shift
fi
case "${1:-}" in
demo) packages=("${demo[@]}") ;;
test) packages=("${test[@]}") ;;
*)
    echo "usage: scripts/install-packages.sh [--list] demo|test" >&2
    exit 64
    ;;
esac
if $list; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "==> installing the Debian packages castd's $1 needs: ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: installing ${missing[*]} needs root (or sudo)" >&2; exit 1; }
    sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
