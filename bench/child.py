"""Runs a bench worker in a fresh Python process, so every measurement starts with a cold DuckDB."""

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent  # not from rig: its package imports boto3


def run_module(module: str, args: list, timeout: float, what: str) -> str:
    """`python -m module *args` from the repository root; its stdout, or SystemExit with its output on failure."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise SystemExit(f"[bench] {what} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-4000:]}")
    return done.stdout
