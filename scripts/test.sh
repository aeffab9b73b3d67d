#!/usr/bin/env bash
# Builds everything and runs all tests: the IO core's unit tests (ctest), then the integration tests (pytest)
# against a real local S3 server and proxy that the fixtures start on 127.0.0.1.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 120
exec .venv/bin/python -m pytest test/integration "$@"
