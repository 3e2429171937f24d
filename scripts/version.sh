#!/usr/bin/env bash
# castd's version has one source, the file VERSION at the top of the repository. This writes it
# where each build needs it written out, in the one line of each that holds it:
#
#   Sources/CastdSupport/CastdVersion.swift  every program's --version, DaemonInfo.version (Swift cannot read a file
#                                  at build time without a build plugin)
#   clients/python/pyproject.toml  the Python package's version (setuptools reads no file
#                                  outside the package's folder)
#   clients/c/Makefile             libcastd-client's version (its file name and castd-client.pc)
#
#   scripts/version.sh          write VERSION's version into each
#   scripts/version.sh --check  fail, naming the file, where one differs (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d '[:space:]' <VERSION)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([~+-][0-9A-Za-z.~+-]+)?$ ]] || {
    echo "error: VERSION holds '$version', not a version such as 1.2.3" >&2
    exit 1
}

# file, a sed pattern that finds the line, the line as it must be
copies=(
    "Sources/CastdSupport/CastdVersion.swift|^    public static let current = |    public static let current = \"$version\""
    "clients/python/pyproject.toml|^version = |version = \"$version\""
    "clients/c/Makefile|^VERSION  *:= |VERSION      := $version"
)
check=false
[ "${1:-}" = "--check" ] && check=true
status=0
for copy in "${copies[@]}"; do
    IFS='|' read -r file pattern line <<<"$copy"
    current=$(grep -E -m1 "$pattern" "$file" || true)
    [ -n "$current" ] || { echo "error: $file has no line matching '$pattern'" >&2; exit 1; }
    [ "$current" = "$line" ] && continue
    if $check; then
        echo "error: $file says '$current', but VERSION says $version: run scripts/version.sh" >&2
        status=1
    else
        escaped=$(printf '%s' "$line" | sed 's/[&|]/\\&/g')
        sed -i -E "0,/$pattern/s|$pattern.*|$escaped|" "$file"
        echo "$file: $line"
    fi
done
exit $status
