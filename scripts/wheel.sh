#!/usr/bin/env bash
# Writes Python wheels of extension files, shaped as the official duckdb-extension-* wheels are: package
# duckdb_extension_httpfs2 with the binary at extensions/<DuckDB version>/httpfs2.duckdb_extension, versioned as the
# DuckDB it is for (httpfs2's own version as the local label: 2.0.1+httpfs2.0.1.0) and requiring that duckdb, tagged
# py3-none-manylinux_<the oldest glibc (with its libstdc++) the binary runs on>_x86_64; its load(con) loads httpfs and
# httpfs2. One wheel per DuckDB version built.
# The sources are in packaging/python/ (build_wheel.py, standard library only).
# Usage: scripts/wheel.sh [extension file | --all] [output folder]; defaults: --all (every version built, as
# scripts/repository.sh), dist.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/extension_lib.sh
source "$ROOT/scripts/extension_lib.sh"
WHICH="${1:---all}"
OUT="${2:-$ROOT/dist}"
list="$(extensions_to_package "$ROOT" "$WHICH" wheel)"
mapfile -t extensions <<<"$list"
for extension in "${extensions[@]}"; do
	WHEEL="$(python3 "$ROOT/packaging/python/build_wheel.py" "$extension" "$OUT")"
	echo "[wheel] $WHEEL: pip install '$WHEEL'" >&2
done
