#!/usr/bin/env bash
# Install castd, castc and cast-mpris, the systemd units (system and user; cast-mpris's is a user
# unit), castd.desktop, the sysusers.d entry for the
# castd user and group, the README and, if packaging/castd.toml exists, an example
# /etc/castd/castd.toml (never over an existing one); and the C client library
# (libcastd-client: the shared and static libraries, headers and castd-client.pc, built by
# `make -C clients/c` here if need be) when libprotobuf-c's development files are there.
#
#   scripts/install.sh [--build-dir DIR] [--units-only] [--no-c-client]
#
#   --build-dir DIR   where the built castd, castc and cast-mpris are (default .build/release; build it with
#                     `swift build -c release --static-swift-stdlib -Xlinker -l_FoundationICU`;
#                     or use .build/debug)
#   --units-only      only the units and sysusers.d entry (for scripts/verify-units.sh)
#   --no-c-client     not the C client library
#
# Environment (all optional):
#   DESTDIR     staging root prepended to every path (packaging); the units still name the
#               final paths
#   PREFIX      /usr/local            BINDIR   $PREFIX/bin
#   SYSCONFDIR  /etc                  DOCDIR   $PREFIX/share/doc/castd
#   SYSTEMD_SYSTEM_UNIT_DIR  $PREFIX/lib/systemd/system
#   SYSTEMD_USER_UNIT_DIR    $PREFIX/lib/systemd/user
#   SYSUSERS_DIR             $PREFIX/lib/sysusers.d
#   APPLICATIONS_DIR         $PREFIX/share/applications   (castd.desktop, named by cast-mpris)
#   LIBDIR      $PREFIX/lib           INCLUDEDIR  $PREFIX/include   (the C client)
# systemd looks in the three directories above for PREFIX=/usr and PREFIX=/usr/local; with
# another PREFIX, set them to /usr/local/lib/... or /etc/... yourself.
#
# The units' ExecStart= and Documentation= get BINDIR and DOCDIR in place of @BINDIR@ and
# @DOCDIR@. Nothing is started or enabled: the script says what to run next.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

build_dir=$repo/.build/release
units_only=false
c_client=true
while [ $# -gt 0 ]; do
    case $1 in
        --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
        --build-dir=*) build_dir=${1#*=}; shift ;;
        --units-only) units_only=true; shift ;;
        --no-c-client) c_client=false; shift ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
done

DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
SYSCONFDIR=${SYSCONFDIR:-/etc}
DOCDIR=${DOCDIR:-$PREFIX/share/doc/castd}
SYSTEMD_SYSTEM_UNIT_DIR=${SYSTEMD_SYSTEM_UNIT_DIR:-$PREFIX/lib/systemd/system}
SYSTEMD_USER_UNIT_DIR=${SYSTEMD_USER_UNIT_DIR:-$PREFIX/lib/systemd/user}
SYSUSERS_DIR=${SYSUSERS_DIR:-$PREFIX/lib/sysusers.d}
APPLICATIONS_DIR=${APPLICATIONS_DIR:-$PREFIX/share/applications}

for var in PREFIX BINDIR SYSCONFDIR DOCDIR SYSTEMD_SYSTEM_UNIT_DIR SYSTEMD_USER_UNIT_DIR SYSUSERS_DIR APPLICATIONS_DIR; do
    value=${!var}
    case $value in
        /*) ;;
        *) echo "install.sh: $var must be an absolute path, not '$value'" >&2; exit 64 ;;
    esac
    # The values go into unit files unquoted and through sed: keep them plain.
    if [[ $value =~ [^A-Za-z0-9/._+-] ]]; then
        echo "install.sh: $var='$value': only letters, digits and / . _ + - are supported" >&2
        exit 64
    fi
done

# install(1) that says what it does.
put() {
    local mode=$1 source=$2 target=$3
    install -D -m "$mode" "$source" "$DESTDIR$target"
    echo "  $target"
}

# A unit with @BINDIR@ and @DOCDIR@ replaced.
put_unit() {
    local source=$1 target=$2 tmp
    tmp=$(mktemp)
    sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@DOCDIR@|$DOCDIR|g" "$source" > "$tmp"
    if grep -n '@[A-Z]*@' "$tmp" >&2; then
        rm -f "$tmp"
        echo "install.sh: $source has a placeholder install.sh does not know" >&2
        exit 1
    fi
    put 0644 "$tmp" "$target"
    rm -f "$tmp"
}

echo "==> installing into ${DESTDIR:-/} (PREFIX=$PREFIX)" >&2
if ! $units_only; then
    for program in castd castc cast-mpris; do
        if [ ! -x "$build_dir/$program" ]; then
            echo "install.sh: no $build_dir/$program; build it first (see the README, Installing)" >&2
            echo "  or name another build directory with --build-dir (e.g. .build/debug)" >&2
            exit 1
        fi
    done
    put 0755 "$build_dir/castd" "$BINDIR/castd"
    put 0755 "$build_dir/castc" "$BINDIR/castc"
    put 0755 "$build_dir/cast-mpris" "$BINDIR/cast-mpris"
    put 0644 "$repo/packaging/castd.desktop" "$APPLICATIONS_DIR/castd.desktop"
    put 0644 "$repo/README.md" "$DOCDIR/README.md"
fi

for mode in system user; do
    dir_var=SYSTEMD_${mode^^}_UNIT_DIR
    for unit in castd.socket castd.service; do
        put_unit "$repo/packaging/systemd/$mode/$unit" "${!dir_var}/$unit"
    done
done
put_unit "$repo/packaging/systemd/user/cast-mpris.service" "$SYSTEMD_USER_UNIT_DIR/cast-mpris.service"
put 0644 "$repo/packaging/sysusers.d/castd.conf" "$SYSUSERS_DIR/castd.conf"

if ! $units_only && [ -f "$repo/packaging/castd.toml" ]; then
    if [ -e "$DESTDIR$SYSCONFDIR/castd/castd.toml" ]; then
        echo "  $SYSCONFDIR/castd/castd.toml exists: left as it is (the example is $repo/packaging/castd.toml)"
    else
        put 0644 "$repo/packaging/castd.toml" "$SYSCONFDIR/castd/castd.toml"
    fi
fi

# The C client: LIBDIR/libcastd-client.so.0 (and .a, .so), INCLUDEDIR/castd-client.h and
# castd/v1/*.pb-c.h, LIBDIR/pkgconfig/castd-client.pc.
if ! $units_only && $c_client; then
    if pkg-config --exists libprotobuf-c 2> /dev/null; then
        make --no-print-directory -s -C "$repo/clients/c" all
        make --no-print-directory -s -C "$repo/clients/c" install PREFIX="$PREFIX" DESTDIR="$DESTDIR" \
            LIBDIR="${LIBDIR:-$PREFIX/lib}" INCLUDEDIR="${INCLUDEDIR:-$PREFIX/include}"
        echo "  ${LIBDIR:-$PREFIX/lib}/libcastd-client.so.0, .a, pkgconfig/castd-client.pc; ${INCLUDEDIR:-$PREFIX/include}/castd-client.h"
    else
        echo "note: the C client library (clients/c) is not installed: it needs libprotobuf-c-dev" >&2
    fi
fi

# A binary linked against a toolchain's Swift runtime runs only where that toolchain is.
dynamic=$(! $units_only && command -v readelf > /dev/null && readelf -d "$build_dir/castd" 2> /dev/null || true)
if grep -q 'libswiftCore\.so' <<< "$dynamic"; then
    runpath=$(sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p' <<< "$dynamic")
    echo "note: castd uses the Swift runtime from ${runpath:-the library path}: it runs only where that" >&2
    echo "      is installed. For other machines: swift build -c release --static-swift-stdlib -Xlinker -l_FoundationICU" >&2
fi

$units_only && exit 0
cat << EOF

Installed.${DESTDIR:+ (Staged under $DESTDIR: run the following on the machine it is for.)}

The system daemon (serves /run/castd/castd.sock, runs as the user castd):
  systemd-sysusers                        # creates the user and group castd
  systemctl daemon-reload
  systemctl enable --now castd.socket     # castd starts on the first connection
  usermod -aG castd USER                  # lets USER control it (from USER's next login)
  journalctl -u castd                     # its logs

Or a desktop session's own daemon (serves \$XDG_RUNTIME_DIR/castd/castd.sock), as that user:
  systemctl --user daemon-reload
  systemctl --user enable --now castd.socket
  journalctl --user -u castd

The desktop's media controls (MPRIS2) for Cast devices, as that user:
  systemctl --user enable --now cast-mpris.service
EOF
