#!/usr/bin/env bash
# Installs what tests and benchmarks need into git-ignored folders, pinned: Python packages into .venv/,
# versitygw and toxiproxy into .tools/bin/, Azurite into .tools/azurite/. Idempotent: a second run only checks stamps.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
TOOLS="$ROOT/.tools/bin"
VERSITYGW_VERSION=v1.8.0
TOXIPROXY_VERSION=v2.12.0
log() { echo "[setup_env] $*" >&2; }

if [[ ! -x "$VENV/bin/python" ]]; then
	log "creating $VENV"
	python3 -m venv "$VENV"
fi
stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$ROOT/requirements.txt" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
	log "installing pinned Python packages"
	"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements.txt"
	echo "$want" >"$stamp"
fi

mkdir -p "$TOOLS"
install_go_tool() { # name module version binary-name-after-install
	local name=$1 module=$2 version=$3 built=$4
	local stamp="$TOOLS/.$name.version"
	if [[ -x "$TOOLS/$name" && "$(cat "$stamp" 2>/dev/null)" == "$version" ]]; then
		return
	fi
	log "go install $module@$version"
	GOBIN="$TOOLS" go install "$module@$version"
	if [[ "$built" != "$name" ]]; then
		mv -f "$TOOLS/$built" "$TOOLS/$name"
	fi
	echo "$version" >"$stamp"
}
install_go_tool versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" versitygw
install_go_tool toxiproxy-server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION" server

# Azurite (Azure Blob Storage emulator) for the az:// tests and bench/azure_matrix.py: npm package, pinned,
# into .tools/azurite/ (rig/azurite.py checks the same version stamp).
AZURITE_VERSION=3.37.0
AZURITE_DIR="$ROOT/.tools/azurite"
if [[ ! -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" || "$(cat "$AZURITE_DIR/.version" 2>/dev/null)" != "$AZURITE_VERSION" ]]; then
	if ! command -v npm >/dev/null; then
		log "npm not found: install node and npm (Debian: apt-get install nodejs npm), then run this again"
		exit 1
	fi
	log "npm install azurite@$AZURITE_VERSION"
	mkdir -p "$AZURITE_DIR"
	npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --loglevel=error --save-exact "azurite@$AZURITE_VERSION"
	echo "$AZURITE_VERSION" >"$AZURITE_DIR/.version"
fi
