#!/usr/bin/env bash
# Builds httpfs2, runs the short benchmark (bench suite demo: at the `region` network profile, 25 ms + ~90 MiB/s
# per connection, native vs httpfs2 on a parquet projection, a glob of 64 small files and the 22 TPC-H queries,
# then a COPY to s3:// (bench/write_bench.py); 4.6-5.5 min measured on 2 cores for the reads, ~1 min for the write,
# plus ~2 min once per machine to generate TPC-H SF1) against a local S3 rig that it starts and stops, and prints a
# short table of both: native, httpfs2 and local seconds and the speed-up per workload (bench/report_demo.py), with
# the paths of the full tables (report.md) and of a plot of the short one (demo.png) in the run's results folder.
# Arguments go to the bench runner (`python -m bench`, see bench/README.md) as options of the demo suite, so
# `bash scripts/demo.sh --repeats 1` is a quicker look (`--mode SUITE` picks another suite: its full tables print).
# Never reads stdin.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh </dev/null
bash scripts/build.sh </dev/null
# The runner stops the rig on SIGTERM too, so the guard leaves nothing running behind it.
csv="$(timeout "${HTTPFS2_DEMO_TIMEOUT:-1800}" .venv/bin/python -m bench "$@" </dev/null)"
# A write beside the reads: one parquet file COPYed to s3:// at the same profile, upstream capped as well.
echo "[demo] writes: COPY lineitem TO s3:// at region, DuckDB threads 4, native vs httpfs2 vs a local file" >&2
writes="$(timeout "${HTTPFS2_DEMO_TIMEOUT:-1800}" .venv/bin/python -m bench run writes --profiles region \
	--workloads parquet --out "$(dirname "$csv")/writes" </dev/null)"
.venv/bin/python -m bench report "$csv" "$writes" --compare
echo "[demo] results.csv and meta.json (and plot.png for blob sweeps) in $(dirname "$csv") and $(dirname "$writes")" >&2
