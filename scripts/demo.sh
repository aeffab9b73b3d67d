#!/usr/bin/env bash
# Builds httpfs2, runs the short benchmark (bench mode demo, ~5 min on 2 cores) against a local S3 rig that it
# starts and stops, and prints httpfs2 vs native. Arguments go to bench/runner.py (see bench/README.md), so
# `bash scripts/demo.sh --latencies 50 --repeats 1` is a quicker look. Never reads stdin.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh </dev/null
bash scripts/build.sh </dev/null
# The runner stops the rig on SIGTERM too, so the guard leaves nothing running behind it.
csv="$(timeout "${HTTPFS2_DEMO_TIMEOUT:-1800}" .venv/bin/python -m bench.runner "$@" </dev/null)"
.venv/bin/python bench/summarize.py "$csv" --compare
echo "[demo] results, plot.png and meta.json in $(dirname "$csv")" >&2
