"""httpfs2 installed as DuckDB users install extensions: `INSTALL httpfs2 FROM '<repository>'` in fresh processes
(Python and the CLI), from a folder and from an HTTP server, then used to read an object byte-exactly."""

import json
import os
import subprocess
import sys

import pytest

from helpers import sha256
from rig import HTTPFS2_EXTENSION, REPO_ROOT, httpfs_extension, serve_http

# Runs in a fresh Python: installs from the repository into its own extension directory, loads, reads one object.
SCRIPT = """
import json, sys
import duckdb
spec = json.loads(sys.argv[1])
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"SET extension_directory = '{spec['extensions']}'")
con.execute(f"INSTALL httpfs2 FROM '{spec['repository']}'")
con.execute("LOAD httpfs2")
con.execute(f"LOAD '{spec['httpfs']}'")
con.execute(spec["secret"])
con.execute("SET httpfs2_parallel_read_enabled = true")
row = con.execute(
    "SELECT installed_from, install_mode FROM duckdb_extensions() WHERE extension_name = 'httpfs2' AND loaded"
).fetchone()
digest = con.execute("SELECT sha256(content) FROM read_blob(?)", [spec["url"]]).fetchone()[0]
reads = con.execute("SELECT reads FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'").fetchone()[0]
print(json.dumps({"installed_from": row[0], "mode": row[1], "sha256": digest, "reads": reads}))
"""


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """The extension under test (HTTPFS2_EXTENSION: the release build, or the sanitizer one) laid out by the script
    `make repository` runs."""
    out = tmp_path_factory.mktemp("repository")
    subprocess.run(["bash", str(REPO_ROOT / "scripts" / "repository.sh"), str(HTTPFS2_EXTENSION), str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def blob(rig):
    key = "install/blob.bin"
    data = os.urandom(3 << 20)
    rig.put_object(key, data)
    return rig.url(key), data


def install_and_read(rig, tmp_path, repository: str, url: str) -> dict:
    spec = {
        "extensions": str(tmp_path / "extensions"),
        "repository": repository,
        "httpfs": str(httpfs_extension()),
        "secret": rig.secret_sql(),
        "url": url,
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(spec)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_repository_layout_is_what_install_reads(repository):
    folder = repository / "v1.5.5" / "linux_amd64"
    assert sorted(p.name for p in folder.iterdir()) == ["httpfs2.duckdb_extension", "httpfs2.duckdb_extension.gz"]
    assert (folder / "httpfs2.duckdb_extension").read_bytes() == HTTPFS2_EXTENSION.read_bytes()


def test_install_from_a_folder_in_a_fresh_process(rig, blob, repository, tmp_path):
    url, data = blob
    got = install_and_read(rig, tmp_path, str(repository), url)
    assert got["installed_from"] == str(repository) and got["mode"] == "REPOSITORY", got
    assert got["sha256"] == sha256(data)
    assert got["reads"] > 0, got  # the read went through httpfs2


def test_install_from_an_http_server(rig, blob, repository, tmp_path):
    url, data = blob
    with serve_http(repository) as base_url:
        got = install_and_read(rig, tmp_path, base_url, url)
    assert got["installed_from"] == base_url, got
    assert got["sha256"] == sha256(data)


def test_install_in_the_cli_needs_unsigned(repository, tmp_path):
    cli = REPO_ROOT / ".venv" / "bin" / "duckdb"
    sql = (
        f"SET extension_directory = '{tmp_path / 'extensions'}'; INSTALL httpfs2 FROM '{repository}'; LOAD httpfs2; "
        "SELECT value FROM duckdb_settings() WHERE name = 'httpfs2_write_enabled';"
    )
    loaded = subprocess.run([str(cli), "-unsigned", "-csv", "-c", sql], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["value", "true"], loaded.stdout
    refused = subprocess.run([str(cli), "-csv", "-c", sql], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "signature" in refused.stderr.lower() or "unsigned" in refused.stderr.lower(), refused.stderr
