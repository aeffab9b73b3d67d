"""The DuckDB a configuration runs in. The bench's own Python (.venv/) is DuckDB 1.5.5 with the registry's httpfs;
another version runs in its stock Python host (scripts/setup_host.sh: .venv-duckdb-<version>/) beside the httpfs built
for it (scripts/build_host_httpfs.sh, cached per machine) and httpfs2 built for it (scripts/build.sh with
DUCKDB_VERSION: build/v<version>/). A run asks for a host once and copies its httpfs2 into the run's folder, as it
does 1.5.5's, so a rebuild during the run changes nothing measured.
"""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rig import REPO_ROOT, httpfs_extension

BASE_VERSION = "1.5.5"  # the DuckDB of .venv/ and of build/httpfs2.duckdb_extension


@dataclass(frozen=True)
class Host:
    version: str
    python: str  # the interpreter whose duckdb package is this version
    httpfs: Path
    httpfs2: Path | None  # the build of httpfs2 for this version (None: not built)


def _script(name: str, version: str, *args, variant: str = "") -> str:
    """The last line a setup script printed (the path it made); SystemExit with its output when it fails."""
    done = subprocess.run(
        ["bash", str(REPO_ROOT / "scripts" / name), *args],
        env=dict(os.environ, DUCKDB_VERSION=version, HTTPFS_VARIANT=variant),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise SystemExit(f"[bench] scripts/{name} for DuckDB {version} failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def snapshot(extension: Path, out: Path) -> Path | None:
    """A copy of a build in `out`: a rebuild during the run must not change what is measured (or break LOAD)."""
    if not extension.exists():
        return None
    out.mkdir(parents=True, exist_ok=True)
    copy = out / extension.name
    shutil.copyfile(extension, copy)
    return copy


def prepare(version: str, out: Path, base_httpfs2: Path | None, variant: str = "") -> Host:
    """The host of DuckDB `version`, set up (idempotent: a warm machine only checks stamps) and its httpfs2 copied
    into out/v<version>/; base_httpfs2 is the run's copy of the 1.5.5 build; variant: the httpfs variant it runs
    (scripts/build_host_httpfs.sh)."""
    if version == BASE_VERSION:
        return Host(version, sys.executable, httpfs_extension(), base_httpfs2)
    print(
        f"[bench] preparing the DuckDB {version} host (scripts/setup_host.sh, build_host_httpfs.sh, build.sh)",
        file=sys.stderr,
        flush=True,
    )
    python = _script("setup_host.sh", version, version)
    httpfs = Path(_script("build_host_httpfs.sh", version, variant=variant))
    _script("build.sh", version)
    httpfs2 = snapshot(REPO_ROOT / "build" / f"v{version}" / "httpfs2.duckdb_extension", out / f"v{version}")
    return Host(version, python, httpfs, httpfs2)
