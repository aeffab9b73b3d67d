"""httpfs2 loads in stock DuckDB 1.5.5 (Python and CLI) beside httpfs in any order and wraps its filesystems."""

import subprocess

import duckdb
import pytest

from helpers import HOST_READ_CUT, blob_sha, needs_registry_package, sha256, stats
from rig import HTTPFS2_EXTENSION, azure_extension, duckdb_connect, httpfs_extension, load_httpfs
from rig.paths import duckdb_cli

WRAPPED = {"HTTPFileSystem", "S3FileSystem", "HuggingFaceFileSystem"}


@pytest.mark.parametrize("order", ["httpfs_first", "httpfs2_first"])
def test_load_order_wraps_and_reads_exact_bytes(rig, big_object, order):
    key, data = big_object
    con = duckdb_connect(rig, order=order)
    con.execute("SET enable_external_file_cache = false; SET httpfs2_parallel_read_enabled = true")
    assert blob_sha(con, rig.url(key)) == sha256(data)
    rows = {r[0] for r in con.execute("SELECT filesystem FROM httpfs2_stats()").fetchall()}
    assert WRAPPED <= rows
    # Through httpfs2: split in DuckDB 1.5; DuckDB 2.0 cuts the read into 2 MiB reads of its own, under a chunk.
    assert stats(con)["reads_split" if HOST_READ_CUT is None else "reads"] >= 1


def test_httpfs_loaded_after_httpfs2_is_wrapped(rig, big_object):
    key, data = big_object
    con = duckdb_connect(rig, order="httpfs2_only")
    assert con.execute("SELECT count(*) FROM httpfs2_stats()").fetchone()[0] == 0
    load_httpfs(con)
    con.execute(rig.secret_sql())
    con.execute("SET enable_external_file_cache = false")
    assert blob_sha(con, rig.url(key)) == sha256(data)
    assert stats(con)["reads"] >= 1


def test_disabled_filesystems_still_applies(rig, big_object):
    con = duckdb_connect(rig)
    con.execute("SET disabled_filesystems = 'S3FileSystem'")
    with pytest.raises(duckdb.Error, match="S3FileSystem"):
        blob_sha(con, rig.url(big_object[0]))


def test_install_then_load_by_name(rig, big_object, tmp_path):
    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "extension_directory": str(tmp_path),
            "autoload_known_extensions": "false",
        }
    )
    con.execute(f"LOAD '{httpfs_extension()}'")
    con.execute(f"INSTALL '{HTTPFS2_EXTENSION}'")
    con.execute("LOAD httpfs2")
    loaded = "SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'httpfs2' AND loaded"
    assert con.execute(loaded).fetchone()[0] == 1


@needs_registry_package("duckdb-extension-azure")
def test_azure_filesystems_are_wrapped_when_azure_loads(rig):
    con = duckdb_connect(rig)
    con.execute(f"LOAD '{azure_extension()}'")
    rows = {r[0] for r in con.execute("SELECT filesystem FROM httpfs2_stats()").fetchall()}
    assert any(name.startswith("Azure") for name in rows), rows


@needs_registry_package("a DuckDB CLI (duckdb-cli)")
def test_cli_loads_beside_httpfs_and_reads(rig, big_object):
    key, data = big_object
    sql = (
        ";\n".join(
            [
                f"LOAD '{HTTPFS2_EXTENSION}'",
                f"LOAD '{httpfs_extension()}'",
                rig.secret_sql(),
                "SET enable_external_file_cache = false",
                "SET httpfs2_parallel_read_enabled = true",
                f"SELECT sha256(content) FROM read_blob('{rig.url(key)}')",
                "SELECT reads_split > 0 FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'",
            ]
        )
        + ";\n"
    )
    result = subprocess.run(
        [str(duckdb_cli()), "-unsigned", "-csv", "-noheader"], input=sql, text=True, capture_output=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert sha256(data) in lines
    assert lines[-1] == "true"
