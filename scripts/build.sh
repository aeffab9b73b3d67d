#!/usr/bin/env bash
# Builds httpfs2.duckdb_extension (and the core's unit tests) into build/. DuckDB's static library comes from
# the machine-wide cache of scripts/build_duckdb.sh, so only a fresh machine pays its cold build.
# HTTPFS2_SANITIZER=address builds the extension alone, instrumented, into build/extension-address/ (scripts/test.sh).
# DUCKDB_VERSION=1.5.6 or 2.0.1 builds the extension alone for that DuckDB into build/v<version>/ (default: 1.5.5,
# into build/ with the unit tests); its DuckDB build is one more cold build per machine (scripts/build_duckdb.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DUCKDB_VERSION="${DUCKDB_VERSION:-1.5.5}"
export DUCKDB_VERSION
DUCKDB_BUILD_DIR="$("$ROOT/scripts/build_duckdb.sh")"
DUCKDB_SOURCE_DIR="$(cat "$DUCKDB_BUILD_DIR/source_dir")"
BUILD_DIR="$ROOT/build"
BUILD_TYPE="${HTTPFS2_BUILD_TYPE:-Release}"
SANITIZER="${HTTPFS2_SANITIZER:-}"
options=(-DDUCKDB_VERSION="v$DUCKDB_VERSION")
if [[ "$DUCKDB_VERSION" != 1.5.5 ]]; then
	BUILD_DIR="$ROOT/build/v$DUCKDB_VERSION"
	options+=(-DHTTPFS2_BUILD_UNIT_TESTS=OFF)
fi
if [[ -n "$SANITIZER" ]]; then
	BUILD_DIR="$ROOT/build/extension-$SANITIZER"
	BUILD_TYPE=RelWithDebInfo
	options+=(-DHTTPFS2_SANITIZER="$SANITIZER" -DHTTPFS2_BUILD_UNIT_TESTS=OFF)
fi
mkdir -p "$BUILD_DIR"

cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${options[@]}" \
	-DDUCKDB_BUILD_DIR="$DUCKDB_BUILD_DIR" -DDUCKDB_SOURCE_DIR="$DUCKDB_SOURCE_DIR" >"$BUILD_DIR/cmake.log" 2>&1 || {
	cat "$BUILD_DIR/cmake.log" >&2
	exit 1
}
ninja -C "$BUILD_DIR" -j"$(nproc)" >"$BUILD_DIR/ninja.log" 2>&1 || {
	cat "$BUILD_DIR/ninja.log" >&2
	exit 1
}
echo "[build] $BUILD_DIR/httpfs2.duckdb_extension" >&2
