#!/usr/bin/env bash
# Writes a Python wheel of an extension file, shaped as the official duckdb-extension-* wheels are: package
# duckdb_extension_httpfs2 with the binary at extensions/<DuckDB version>/httpfs2.duckdb_extension, requiring that
# duckdb, tagged py3-none-manylinux_<the oldest glibc (with its libstdc++) the binary runs on>_x86_64; its load(con)
# loads httpfs and httpfs2.
# The sources are in packaging/python/ (build_wheel.py, standard library only).
# Usage: scripts/wheel.sh [extension file] [output folder]; defaults: build/httpfs2.duckdb_extension, dist.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EXTENSION="${1:-$ROOT/build/httpfs2.duckdb_extension}"
OUT="${2:-$ROOT/dist}"
if [[ ! -f "$EXTENSION" ]]; then
	echo "[wheel] $EXTENSION not found: run make first" >&2
	exit 1
fi
WHEEL="$(python3 "$ROOT/packaging/python/build_wheel.py" "$EXTENSION" "$OUT")"
echo "[wheel] $WHEEL: pip install '$WHEEL'" >&2
