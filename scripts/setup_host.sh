#!/usr/bin/env bash
# Installs a Python test host of DuckDB <version> (1.5.6, 2.0.1): a venv at .venv-duckdb-<version>/ (git-ignored) with
# the pinned duckdb==<version> from the package registry, nothing else. The smoke suite (test/versions) runs httpfs2
# in it beside the host's httpfs, which scripts/build_host_httpfs.sh builds. Idempotent: a second run only checks the
# stamp. Prints the host's python.
# Usage: scripts/setup_host.sh <version>
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${1:?usage: scripts/setup_host.sh <DuckDB version, e.g. 2.0.1>}"
VENV="$ROOT/.venv-duckdb-$VERSION"
log() { echo "[setup_host] $*" >&2; }

if [[ "$(cat "$VENV/.duckdb-version" 2>/dev/null)" != "$VERSION" || ! -x "$VENV/bin/python" ]]; then
	log "installing duckdb==$VERSION into $VENV"
	rm -rf "$VENV"
	python3 -m venv "$VENV"
	"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "duckdb==$VERSION" </dev/null
	echo "$VERSION" >"$VENV/.duckdb-version"
fi
echo "$VENV/bin/python"
