#!/usr/bin/env bash
# Lays an extension file out as a DuckDB extension repository: <out>/<duckdb version>/<platform>/httpfs2.duckdb_extension
# and its .gz, which `INSTALL httpfs2 FROM '<out>'` reads (a folder, or the same tree served over HTTP).
# Usage: scripts/repository.sh [extension file] [output folder]; defaults: build/httpfs2.duckdb_extension, build/repository.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EXTENSION="${1:-$ROOT/build/httpfs2.duckdb_extension}"
OUT="${2:-$ROOT/build/repository}"
# The version and platform the extension was built for, as CMake has them (CMakeLists.txt's defaults otherwise).
cmake_value() {
	local name=$1 value
	value="$(sed -n "s/^$name:STRING=//p" "$ROOT/build/CMakeCache.txt" 2>/dev/null || true)"
	if [[ -z "$value" ]]; then
		value="$(sed -n "s/^set($name \"\([^\"]*\)\".*/\1/p" "$ROOT/CMakeLists.txt")"
	fi
	echo "$value"
}
VERSION="$(cmake_value DUCKDB_VERSION)"
PLATFORM="$(cmake_value DUCKDB_PLATFORM)"
if [[ ! -f "$EXTENSION" ]]; then
	echo "[repository] $EXTENSION not found: run make first" >&2
	exit 1
fi
DIR="$OUT/$VERSION/$PLATFORM"
mkdir -p "$DIR"
cp -f "$EXTENSION" "$DIR/httpfs2.duckdb_extension"
gzip -9 -n -c "$EXTENSION" >"$DIR/httpfs2.duckdb_extension.gz"
echo "[repository] $DIR/httpfs2.duckdb_extension(.gz): INSTALL httpfs2 FROM '$OUT'"
