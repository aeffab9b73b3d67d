#!/usr/bin/env bash
# Installs a Python test host of DuckDB <version> (1.5.6, 2.0.1): a venv at .venv-duckdb-<version>/ (git-ignored) with
# the pinned duckdb==<version> from the package registry, and the integration suite's own packages at requirements.txt's
# pins (pytest, pytest-timeout, boto3) so that suite can run in it too, and the CLI duckdb-cli==<version> where the
# registry has one (the 1.5 line; there is no 2.0 CLI on any). The smoke suite (test/versions) runs httpfs2
# in it beside the host's httpfs, which scripts/build_host_httpfs.sh builds. Idempotent: a second run only checks the
# stamp. Prints the host's python.
# Usage: scripts/setup_host.sh <version>
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION="${1:?usage: scripts/setup_host.sh <DuckDB version, e.g. 2.0.1>}"
VENV="$ROOT/.venv-duckdb-$VERSION"
log() { echo "[setup_host] $*" >&2; }

mapfile -t pins < <(grep -E '^(pytest|pytest-timeout|boto3)==' "$ROOT/requirements.txt")
if [[ "$VERSION" == 1.5.* ]]; then
	pins+=("duckdb-cli==$VERSION")
fi
want="$(printf '%s\n' "duckdb==$VERSION" "${pins[@]}")"
if [[ "$(cat "$VENV/.requirements" 2>/dev/null)" != "$want" || ! -x "$VENV/bin/python" ]]; then
	log "installing duckdb==$VERSION ${pins[*]} into $VENV"
	rm -rf "$VENV"
	python3 -m venv "$VENV"
	"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "duckdb==$VERSION" "${pins[@]}" </dev/null
	echo "$want" >"$VENV/.requirements"
fi
echo "$VENV/bin/python"
