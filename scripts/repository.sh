#!/usr/bin/env bash
# Lays extension files out as a DuckDB extension repository: <out>/<DuckDB version>/<platform>/httpfs2.duckdb_extension
# and its .gz, which `INSTALL httpfs2 FROM '<out>'` reads (a folder, or the same tree served over HTTP). The version
# folder is the one DuckDB looks up, its version as it reports it (v1.5.5, v2.0.1), read with the platform from the
# binary's metadata footer, so each DuckDB finds the build made for it.
# Usage: scripts/repository.sh [extension file | --all] [output folder]; defaults: --all (every version built:
# build/httpfs2.duckdb_extension, build/v<version>/httpfs2.duckdb_extension), build/repository.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/extension_lib.sh
source "$ROOT/scripts/extension_lib.sh"
WHICH="${1:---all}"
OUT="${2:-$ROOT/build/repository}"
list="$(extensions_to_package "$ROOT" "$WHICH" repository)"
mapfile -t extensions <<<"$list"
for extension in "${extensions[@]}"; do
	IFS=/ read -r abi _ version platform magic <<<"$(footer_fields "$extension")"
	if [[ "$magic" != 4 || "$abi" != CPP || -z "$version" || -z "$platform" ]]; then
		echo "[repository] $extension has no DuckDB extension metadata footer" >&2
		exit 1
	fi
	dir="$OUT/$version/$platform"
	mkdir -p "$dir"
	cp -f "$extension" "$dir/httpfs2.duckdb_extension"
	gzip -9 -n -c "$extension" >"$dir/httpfs2.duckdb_extension.gz"
	echo "[repository] $dir/httpfs2.duckdb_extension(.gz) for DuckDB $version"
done
echo "[repository] INSTALL httpfs2 FROM '$OUT'"
