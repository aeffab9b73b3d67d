#!/usr/bin/env bash
# Builds DuckDB's static library (the part of DuckDB an extension links) once per machine.
# The result lives outside the clone, keyed by DuckDB version and build flags, so later clones and
# CI on the same machine reuse it. Prints the build directory on stdout.
set -euo pipefail

DUCKDB_VERSION=1.5.5
DUCKDB_SDIST_SHA256=72f33ee57ca7595b23957671a2cc7f7fe2be0ecc2d68f63abedcfcaa3a5c1238
CACHE_ROOT="${HTTPFS2_CACHE_DIR:-$HOME/.cache/httpfs2}"
CMAKE_FLAGS=(
	-G Ninja
	-DCMAKE_BUILD_TYPE=Release
	-DEXTENSION_STATIC_BUILD=1
	-DBUILD_SHELL=0
	-DBUILD_UNITTESTS=0
	-DDISABLE_BUILTIN_EXTENSIONS=1
	-DENABLE_SANITIZER=0
	-DENABLE_UBSAN=0
	-DBUILD_EXTENSIONS=
	"-DCMAKE_CXX_FLAGS=-fvisibility=hidden -fvisibility-inlines-hidden"
	"-DCMAKE_C_FLAGS=-fvisibility=hidden"
)
FLAGS_KEY=$(printf '%s\n' "${CMAKE_FLAGS[@]}" | sha256sum | cut -c1-12)
SRC_DIR="$CACHE_ROOT/duckdb-$DUCKDB_VERSION-src"
BUILD_DIR="$CACHE_ROOT/duckdb-$DUCKDB_VERSION-$FLAGS_KEY"
log() { echo "[build_duckdb] $*" >&2; }

mkdir -p "$CACHE_ROOT"
# One build at a time per machine: a second caller waits, then finds the cache warm.
exec 9>"$CACHE_ROOT/.lock-duckdb-$DUCKDB_VERSION"
flock 9

if [[ ! -f "$SRC_DIR/.complete" ]]; then
	log "fetching duckdb==$DUCKDB_VERSION sdist"
	tmp=$(mktemp -d)
	python3 -m pip download --quiet --no-deps --no-binary duckdb "duckdb==$DUCKDB_VERSION" -d "$tmp" >&2
	sdist=$(ls "$tmp"/duckdb-*.tar.gz)
	echo "$DUCKDB_SDIST_SHA256  $sdist" | sha256sum -c --quiet - >&2 || {
		log "sha256 mismatch for $sdist"
		exit 1
	}
	rm -rf "$SRC_DIR" && mkdir -p "$SRC_DIR"
	tar -xzf "$sdist" -C "$SRC_DIR" --strip-components=1
	rm -rf "$tmp"
	touch "$SRC_DIR/.complete"
fi

DUCKDB_TREE="$SRC_DIR/external/duckdb"
if [[ ! -f "$BUILD_DIR/.complete" ]]; then
	log "building duckdb_static in $BUILD_DIR (cold: ~17 min on 2 cores)"
	start=$(date +%s)
	mkdir -p "$BUILD_DIR"
	cmake -S "$DUCKDB_TREE" -B "$BUILD_DIR" "${CMAKE_FLAGS[@]}" >"$BUILD_DIR/cmake.log" 2>&1 || {
		tail -50 "$BUILD_DIR/cmake.log" >&2
		exit 1
	}
	ninja -C "$BUILD_DIR" -j"$(nproc)" duckdb_static dummy_static_extension_loader >"$BUILD_DIR/ninja.log" 2>&1 || {
		tail -50 "$BUILD_DIR/ninja.log" >&2
		exit 1
	}
	echo "$DUCKDB_TREE" >"$BUILD_DIR/source_dir"
	touch "$BUILD_DIR/.complete"
	log "duckdb_static built in $(($(date +%s) - start)) s"
fi
echo "$BUILD_DIR"
