"""httpfs2 in the DuckDB versions beside 1.5.5 (2.0.1, 1.5.6), as their users run it: in a fresh process of the stock
Python duckdb, `INSTALL httpfs2 FROM` the repository `make repository` lays out, LOAD beside the httpfs built for that
DuckDB, then read through versitygw (a multi-MiB blob's sha256, a Parquet aggregate against the local file's), write
with COPY through httpfs2's uploader and read it back byte-exact, a setting set and one rejected out of range, and
httpfs2_stats() counting it all. Run by scripts/test.sh, which builds what it needs first."""

import hashlib
import json
import os
import subprocess

import duckdb
import pytest

# Runs in the host's python: one JSON line of what it saw.
SCRIPT = """
import hashlib, json, sys
import duckdb

spec = json.loads(sys.argv[1])
got = {"duckdb": duckdb.__version__}
con = duckdb.connect(
    config={
        "allow_unsigned_extensions": "true",
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }
)
con.execute(f"SET extension_directory = '{spec['extensions']}'")
con.execute(f"INSTALL httpfs2 FROM '{spec['repository']}'")
con.execute(f"LOAD '{spec['httpfs']}'")
con.execute("LOAD httpfs2")
got["installed"] = con.execute(
    "SELECT installed_from, install_mode, install_path FROM duckdb_extensions() "
    "WHERE extension_name = 'httpfs2' AND loaded"
).fetchone()
con.execute(spec["secret"])
con.execute("SET enable_external_file_cache = false")  # every read reaches the store
con.execute("SET httpfs2_parallel_read_enabled = true")


def stats():
    row = con.execute(
        "SELECT reads, bytes_read, files_uploaded, upload_parts, bytes_written, uploads_aborted "
        "FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'"
    ).fetchone()
    names = ["reads", "bytes_read", "files_uploaded", "upload_parts", "bytes_written", "uploads_aborted"]
    return dict(zip(names, row))


got["stats_before"] = stats()
got["blob_sha256"] = con.execute("SELECT sha256(content) FROM read_blob(?)", [spec["blob"]]).fetchone()[0]
aggregate = "SELECT count(*), sum(k), sum(length(s)), min(v), max(v) FROM read_parquet(?)"
got["parquet_remote"] = [str(x) for x in con.execute(aggregate, [spec["parquet"]]).fetchone()]
got["parquet_local"] = [str(x) for x in con.execute(aggregate, [spec["parquet_local"]]).fetchone()]

con.execute("SET httpfs2_write_part_size_bytes = 5242880")  # an object of several parts
rows = "SELECT i, md5(i::VARCHAR) AS h FROM range(500000) t(i)"
con.execute(f"COPY ({rows}) TO '{spec['written']}' (FORMAT csv)")
con.execute(f"COPY ({rows}) TO '{spec['written_local']}' (FORMAT csv)")
got["written_sha256"] = con.execute("SELECT sha256(content) FROM read_blob(?)", [spec["written"]]).fetchone()[0]
got["stats_after"] = stats()
# A COPY that fails after several parts went out: its upload is aborted, nothing is left behind.
failing = "SELECT CASE WHEN i < 500000 THEN md5(i::VARCHAR) ELSE error('boom at ' || i) END FROM range(600000) t(i)"
try:
    con.execute(f"COPY ({failing}) TO '{spec['failed']}' (FORMAT csv)")
    got["failed"] = None
except duckdb.Error as error:
    got["failed"] = str(error)
got["stats_failed"] = stats()

try:
    con.execute("SET httpfs2_write_part_size_bytes = 1")
    got["rejected"] = None
except duckdb.Error as error:
    got["rejected"] = str(error)
got["part_size"] = con.execute("SELECT current_setting('httpfs2_write_part_size_bytes')").fetchone()[0]
print(json.dumps(got))
"""

BLOB_BYTES = 24 * 1024 * 1024 + 12345


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def blob(rig):
    key = "smoke/blob.bin"
    data = os.urandom(BLOB_BYTES)
    rig.put_object(key, data)
    return rig.url(key), data


@pytest.fixture(scope="module")
def parquet(rig, tmp_path_factory):
    """A Parquet file of several row groups, written locally by this process's DuckDB, and the same bytes on S3."""
    path = tmp_path_factory.mktemp("parquet") / "table.parquet"
    duckdb.execute(
        f"COPY (SELECT i AS k, i % 977 AS v, repeat('x', (i % 50)::INTEGER) AS s FROM range(1500000) t(i)) "
        f"TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 100000)"
    )
    key = "smoke/table.parquet"
    rig.put_object(key, path.read_bytes())
    return rig.url(key), path


def test_install_read_write_settings_stats(host, rig, repository, blob, parquet, tmp_path):
    blob_url, blob_data = blob
    parquet_url, parquet_path = parquet
    written_key = f"smoke/written-{host.version}.csv"
    failed_key = f"smoke/failed-{host.version}.csv"
    spec = {
        "extensions": str(tmp_path / "extensions"),
        "repository": str(repository),
        "httpfs": str(host.httpfs),
        "secret": rig.secret_sql(),
        "blob": blob_url,
        "parquet": parquet_url,
        "parquet_local": str(parquet_path),
        "written": rig.url(written_key),
        "written_local": str(tmp_path / "written.csv"),
        "failed": rig.url(failed_key),
    }
    done = subprocess.run(
        [str(host.python), "-c", SCRIPT, json.dumps(spec)], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])

    assert got["duckdb"] == host.version
    # Installed from the repository, from the folder of its own version, the binary `make` built for it.
    installed_from, mode, install_path = got["installed"]
    assert (installed_from, mode) == (str(repository), "REPOSITORY"), got["installed"]
    laid_out = repository / f"v{host.version}" / "linux_amd64" / "httpfs2.duckdb_extension"
    assert laid_out.read_bytes() == host.extension.read_bytes()
    assert open(install_path, "rb").read() == host.extension.read_bytes()

    # Reads: byte-exact, the Parquet aggregate the local file gives, through httpfs2.
    assert got["blob_sha256"] == sha256(blob_data)
    assert got["parquet_remote"] == got["parquet_local"], got
    before, after = got["stats_before"], got["stats_after"]
    # (DuckDB 2.0 cuts a large remote read into 2 MiB reads of its own, under what httpfs2 splits: reads_split may
    # stay 0 there.)
    assert after["reads"] > before["reads"] and after["bytes_read"] >= BLOB_BYTES, got

    # The write went through httpfs2's uploader, in several parts, and the object is the local file's bytes.
    local = (tmp_path / "written.csv").read_bytes()
    stored = (rig.bucket_folder / written_key).read_bytes()
    assert len(local) > 3 * 5 * 1024 * 1024
    assert stored == local
    assert got["written_sha256"] == sha256(local)
    assert after["files_uploaded"] == before["files_uploaded"] + 1, got
    assert after["upload_parts"] - before["upload_parts"] >= 2, got
    assert after["bytes_written"] - before["bytes_written"] == len(local), got

    # The failed COPY: its parts went out, then the upload was aborted; no object, no multipart upload left.
    assert got["failed"] is not None and "boom at 500000" in got["failed"], got
    failed = got["stats_failed"]
    assert failed["upload_parts"] > after["upload_parts"], got
    assert failed["uploads_aborted"] == after["uploads_aborted"] + 1, got
    assert failed["files_uploaded"] == after["files_uploaded"], got
    assert not (rig.bucket_folder / failed_key).exists()
    assert rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads", []) == []

    # A setting set holds; one out of range is rejected naming the setting and its range, and changes nothing.
    assert got["rejected"] is not None and "httpfs2_write_part_size_bytes" in got["rejected"], got
    assert "between 5242880 and" in got["rejected"], got
    assert str(got["part_size"]) == "5242880", got


def test_the_cli_installs_and_reads(host, rig, repository, blob, tmp_path):
    """The CLI of the host's version (started with -unsigned) installs httpfs2 from the repository, loads it beside the
    host's httpfs, reads a blob byte-exact through it and rejects a setting out of range naming it."""
    if host.cli is None:
        pytest.skip(f"no duckdb CLI {host.version} on a registry")
    blob_url, blob_data = blob
    setup = (
        f"SET extension_directory = '{tmp_path / 'extensions'}'; INSTALL httpfs2 FROM '{repository}'; "
        f"LOAD '{host.httpfs}'; LOAD httpfs2; {rig.secret_sql()}; SET enable_external_file_cache = false; "
        "SET httpfs2_parallel_read_enabled = true;"
    )
    read = (
        f"SELECT sha256(content) FROM read_blob('{blob_url}'); "
        f"SELECT reads > 0 AND bytes_read >= {len(blob_data)} FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem';"
    )
    done = subprocess.run(
        [str(host.cli), "-unsigned", "-csv", "-noheader", "-c", setup + read],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == [sha256(blob_data), "true"], done.stdout  # (CREATE SECRET prints a line first)
    rejected = subprocess.run(
        [str(host.cli), "-unsigned", "-c", setup + "SET httpfs2_write_part_size_bytes = 1;"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert rejected.returncode != 0
    assert "httpfs2_write_part_size_bytes" in rejected.stderr, rejected.stderr
