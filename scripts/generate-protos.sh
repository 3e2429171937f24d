#!/usr/bin/env bash
# Regenerates the committed Swift code for protos/. Run after editing a .proto file:
#   scripts/generate-protos.sh            # regenerate
#   scripts/generate-protos.sh --check    # fail if the committed code is stale (CI)
# Needs Debian's protoc (protobuf-compiler). protoc-gen-swift is built once from the
# swift-protobuf version this package depends on and cached under ~/.cache/castd.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT_PROTOBUF_VERSION=1.39.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/castd/protoc-gen-swift-$SWIFT_PROTOBUF_VERSION"
plugin="$cache/protoc-gen-swift"

command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
if [ ! -x "$plugin" ]; then
  echo "building protoc-gen-swift $SWIFT_PROTOBUF_VERSION (once, ~2 min)…" >&2
  src="$cache/src"
  rm -rf "$src" && mkdir -p "$cache"
  git clone -q --depth 1 --branch "$SWIFT_PROTOBUF_VERSION" https://github.com/apple/swift-protobuf.git "$src"
  swift build -c release --package-path "$src" --product protoc-gen-swift >&2
  cp "$src/.build/release/protoc-gen-swift" "$plugin"
fi

out_root=$(mktemp -d)
trap 'rm -rf "$out_root"' EXIT
gen() { # proto_dir out_dir files…
  local dir=$1 out=$2; shift 2
  mkdir -p "$out_root/$out"
  protoc --plugin=protoc-gen-swift="$plugin" -I "$dir" \
    --swift_out="$out_root/$out" --swift_opt=Visibility=Public,FileNaming=DropPath "$@"
}
gen protos Sources/CastProtocol/Generated cast_channel.proto
gen protos Sources/CastdAPI/Generated castd/v1/rpc.proto castd/v1/cast.proto

status=0
for out in Sources/CastProtocol/Generated Sources/CastdAPI/Generated; do
  if [ "${1:-}" = "--check" ]; then
    for f in "$out_root/$out"/*.swift; do
      cmp -s "$f" "$out/$(basename "$f")" || { echo "stale: $out/$(basename "$f")" >&2; status=1; }
    done
  else
    mkdir -p "$out"
    cp "$out_root/$out"/*.swift "$out/"
  fi
done
[ "${1:-}" = "--check" ] && [ $status -eq 0 ] && echo "generated code is up to date"
exit $status
