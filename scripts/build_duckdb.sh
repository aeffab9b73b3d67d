#!/usr/bin/env bash
# Builds DuckDB's static library (the part of DuckDB an extension links) once per machine.
# The result lives outside the clone, keyed by DuckDB version and build flags, so later clones and
# CI on the same machine reuse it. Prints the build directory on stdout.
# Usage: [DUCKDB_VERSION=1.5.5|1.5.6|2.0.1] [HTTPFS2_JOBS=N] scripts/build_duckdb.sh (default 1.5.5), into
# ~/.cache/httpfs2/duckdb-<version>-<flags key>/. Sources: the PyPI sdist of duckdb==<version>, sha256-pinned in
# scripts/cache_lib.sh:
#   1.5.5 72f33ee57ca7595b23957671a2cc7f7fe2be0ecc2d68f63abedcfcaa3a5c1238 (key 171b6ee3f0c2)
#   1.5.6 166a91dbfacfc0c9f08cc76c0243cb6d3d4296bfab5bad72a3cfb63140a5b7c8
#   2.0.1 5b3f493140e35b75298ee0fc606d98e3065e8601e64fe81b09326de7a6fd68e0 (duckdb_static only: no dummy loader in 2.x)
set -euo pipefail
log() { echo "[build_duckdb] $*" >&2; }
# shellcheck source=scripts/cache_lib.sh
source "$(dirname "$0")/cache_lib.sh"

CMAKE_FLAGS=(
	"${DUCKDB_STATIC_FLAGS[@]}"
	-DBUILD_EXTENSIONS=
	"-DCMAKE_CXX_FLAGS=-fvisibility=hidden -fvisibility-inlines-hidden"
	"-DCMAKE_C_FLAGS=-fvisibility=hidden"
)
TARGETS=(duckdb_static dummy_static_extension_loader)
# Per version, only what it needs. The sdists have no git history, so without OVERRIDE_GIT_DESCRIBE DuckDB calls itself
# v0.0.1 (1.5.x) or v2.0.0-dev0 (2.x). 1.5.5 stays as first built (v0.0.1): its flags, hence its cache key, unchanged.
case "$DUCKDB_VERSION" in
1.5.5) ;;
1.5.*) CMAKE_FLAGS+=("-DOVERRIDE_GIT_DESCRIBE=v$DUCKDB_VERSION") ;;
2.*)
	# 2.x has no dummy_static_extension_loader; DISABLE_BUILTIN_EXTENSIONS is deprecated there but still accepted.
	CMAKE_FLAGS+=("-DOVERRIDE_GIT_DESCRIBE=v$DUCKDB_VERSION")
	TARGETS=(duckdb_static)
	;;
esac
FLAGS_KEY=$(printf '%s\n' "${CMAKE_FLAGS[@]}" | sha256sum | cut -c1-12)
BUILD_DIR="$CACHE_ROOT/duckdb-$DUCKDB_VERSION-$FLAGS_KEY"

cache_lock "duckdb-$DUCKDB_VERSION"
fetch_duckdb_sdist

if [[ ! -f "$BUILD_DIR/.complete" ]]; then
	log "building ${TARGETS[*]} in $BUILD_DIR (cold: ~17 min on 2 cores)"
	start=$(date +%s)
	mkdir -p "$BUILD_DIR"
	run_logged "$BUILD_DIR/cmake.log" cmake -S "$DUCKDB_TREE" -B "$BUILD_DIR" "${CMAKE_FLAGS[@]}"
	run_logged "$BUILD_DIR/ninja.log" ninja -C "$BUILD_DIR" -j"$JOBS" "${TARGETS[@]}"
	echo "$DUCKDB_TREE" >"$BUILD_DIR/source_dir"
	touch "$BUILD_DIR/.complete"
	log "${TARGETS[*]} built in $(($(date +%s) - start)) s"
fi
echo "$BUILD_DIR"
