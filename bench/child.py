"""Starts the bench's children in fresh Python processes: bench/worker.py (every measurement begins with a cold
DuckDB) and bench/peers.py (another S3 client); the CPU a child reports is its own."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent  # not from rig: its package imports boto3


def _worker(
    args: list, spec: dict, spec_path: Path | None, timeout: float, what: str, module="bench.worker", python=None
) -> dict:
    # The spec goes in a file, not argv: the 22 TPC-H answers exceed the kernel's limit for one argument.
    with tempfile.TemporaryDirectory() as tmp:
        path = spec_path or Path(tmp) / "worker-spec.json"
        path.write_text(json.dumps(spec))
        done = subprocess.run(
            [python or sys.executable, "-m", module, *args, f"@{path}"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode != 0:
        raise SystemExit(f"[bench] {what} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_worker(spec: dict, timeout: float, what: str, spec_path: Path | None = None, python=None) -> dict:
    """The worker's result for spec (bench/worker.py says what both hold); SystemExit with its output on failure.
    spec_path keeps the spec where a run's output can show it; python: the interpreter of the DuckDB version measured
    (bench/hosts.py; default: this one's, 1.5.5)."""
    return _worker([], spec, spec_path, timeout, what, python=python)


def run_peer(spec: dict, timeout: float, what: str) -> dict:
    """bench/peers.py's result for spec: another S3 client in a fresh process; SystemExit with its output on failure."""
    return _worker([], spec, None, timeout, what, module="bench.peers")


def build_settings(load: list) -> dict:
    """{name: default} of every httpfs2 setting of the build, as DuckDB itself lists them with those extensions
    loaded; the bench never restates them."""
    return _worker(["--settings"], {"load": [str(e) for e in load]}, None, 120, f"reading the settings of {load[-1]}")
