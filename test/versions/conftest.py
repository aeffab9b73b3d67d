"""Fixtures of the smoke suite: the S3 rig, the repository of every httpfs2 built, and the DuckDB hosts to run in."""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from rig import REPO_ROOT, S3Rig

# The DuckDB versions whose hosts the suite runs in; scripts/test.sh sets them, builds httpfs2 and the hosts' httpfs
# for each, and installs the hosts (scripts/setup_host.sh).
HOST_VERSIONS = os.environ.get("HTTPFS2_HOST_VERSIONS", "2.0.1 1.5.6").split()


@dataclass
class Host:
    version: str
    # The python of the venv with the stock duckdb==version (scripts/setup_host.sh).
    python: Path
    # httpfs built for this DuckDB (scripts/build_host_httpfs.sh; no registry serves it).
    httpfs: Path
    # What `make DUCKDB_VERSION=version` built.
    extension: Path

    @property
    def cli(self) -> Path | None:
        """The host's duckdb CLI (duckdb-cli), where the registry has one (the 1.5 line; no 2.0 CLI is on any)."""
        path = self.python.parent / "duckdb"
        return path if path.exists() else None


@pytest.fixture(scope="session")
def rig():
    with S3Rig(bucket="smoke") as started:
        yield started


@pytest.fixture(scope="session")
def repository(tmp_path_factory) -> Path:
    """Every version built, laid out by the script `make repository` runs."""
    out = tmp_path_factory.mktemp("repository")
    subprocess.run(["bash", str(REPO_ROOT / "scripts" / "repository.sh"), "--all", str(out)], check=True)
    return out


@pytest.fixture(scope="session", params=HOST_VERSIONS)
def host(request) -> Host:
    version = request.param
    python = REPO_ROOT / f".venv-duckdb-{version}" / "bin" / "python"
    extension = REPO_ROOT / "build" / f"v{version}" / "httpfs2.duckdb_extension"
    if not python.exists():
        pytest.fail(f"{python} not found: run scripts/setup_host.sh {version}")
    if not extension.exists():
        pytest.fail(f"{extension} not found: run make DUCKDB_VERSION={version}")
    # A cache hit once scripts/test.sh (or the script by hand) built it: prints the binary's path.
    built = subprocess.run(
        ["bash", str(REPO_ROOT / "scripts" / "build_host_httpfs.sh")],
        env={**os.environ, "DUCKDB_VERSION": version},
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return Host(version, python, Path(built.stdout.strip()), extension)
