"""Where the rig's binaries and the extensions live."""

import importlib.metadata
import importlib.util
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS_BIN = REPO_ROOT / ".tools" / "bin"
HTTPFS2_EXTENSION = Path(os.environ.get("HTTPFS2_EXTENSION", REPO_ROOT / "build" / "httpfs2.duckdb_extension"))
# The DuckDB of the Python running this (.venv/'s 1.5.5, or a host's: the integration suite on 2.0.1), as DuckDB names
# its version folders.
DUCKDB_VERSION = "v" + importlib.metadata.version("duckdb")
# httpfs for a DuckDB no registry serves it for (1.5.6, 2.0.x): the file scripts/build_host_httpfs.sh built.
HOST_HTTPFS = os.environ.get("HTTPFS2_HOST_HTTPFS")


def _wheel_extension(package: str, name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"Python package {package} is missing: run scripts/setup_env.sh")
    path = Path(list(spec.submodule_search_locations)[0]) / "extensions" / DUCKDB_VERSION / f"{name}.duckdb_extension"
    if not path.exists():
        raise RuntimeError(f"{path} not found")
    return path


def httpfs_extension() -> Path:
    if HOST_HTTPFS:
        return Path(HOST_HTTPFS)
    return _wheel_extension("duckdb_extension_httpfs", "httpfs")


def azure_extension() -> Path:
    return _wheel_extension("duckdb_extension_azure", "azure")


def ducklake_extension() -> Path:
    return _wheel_extension("duckdb_extension_ducklake", "ducklake")


def tpch_extension() -> Path:
    return _wheel_extension("duckdb_extension_tpch", "tpch")


def iceberg_extensions() -> list:
    """avro first: iceberg needs it, and nothing is autoloaded in the bench."""
    return [_wheel_extension("duckdb_extension_avro", "avro"), _wheel_extension("duckdb_extension_iceberg", "iceberg")]


def delta_extension() -> Path:
    return _wheel_extension("duckdb_extension_delta", "delta")


def duckdb_cli() -> Path:
    """The duckdb binary of the duckdb-cli wheel, installed into the venv's bin folder."""
    import sys

    path = Path(sys.executable).parent / "duckdb"
    if not path.exists():
        raise RuntimeError(f"{path} not found: run scripts/setup_env.sh")
    return path
