"""httpfs2 installed as DuckDB users install extensions: `INSTALL httpfs2 FROM '<repository>'` in fresh processes
(Python and the CLI), from a folder and from an HTTP server, and `pip install` of the wheel into a fresh venv, then
used to read an object byte-exactly."""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import needs_registry_package, sha256
from rig import HTTPFS2_EXTENSION, REPO_ROOT, httpfs_extension, serve_http
from rig.paths import DUCKDB_VERSION

# The end of SCRIPT and WHEEL_SCRIPT, once they loaded httpfs2 into `con`: reads the rig's object, prints `got` with
# what the tests check of the read.
READ = """
con.execute(spec["secret"])
con.execute("SET httpfs2_parallel_read_enabled = true")
got["sha256"] = con.execute("SELECT sha256(content) FROM read_blob(?)", [spec["url"]]).fetchone()[0]
got["reads"] = con.execute("SELECT reads FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'").fetchone()[0]
print(json.dumps(got))
"""

# Runs in a fresh Python: installs from the repository into its own extension directory, loads.
SCRIPT = """
import json, sys
import duckdb
spec = json.loads(sys.argv[1])
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"SET extension_directory = '{spec['extensions']}'")
con.execute(f"INSTALL httpfs2 FROM '{spec['repository']}'")
con.execute("LOAD httpfs2")
con.execute(f"LOAD '{spec['httpfs']}'")
row = con.execute(
    "SELECT installed_from, install_mode FROM duckdb_extensions() WHERE extension_name = 'httpfs2' AND loaded"
).fetchone()
got = {"installed_from": row[0], "mode": row[1]}
"""

# In the venv the wheel was installed into: its helper loads httpfs and httpfs2. The extension directory is empty and
# nothing is installed on demand, so httpfs can only come from the duckdb-extension-httpfs package.
WHEEL_SCRIPT = """
import json, sys
import duckdb
import duckdb_extension_httpfs2
spec = json.loads(sys.argv[1])
con = duckdb.connect(
    config={
        "allow_unsigned_extensions": "true",
        "extension_directory": spec["extensions"],
        "autoinstall_known_extensions": "false",
    }
)
duckdb_extension_httpfs2.load(con)
modes = con.execute("SELECT extension_name, install_mode FROM duckdb_extensions() WHERE loaded").fetchall()
got = {"path": str(duckdb_extension_httpfs2.extension_path()), "modes": dict(modes)}
"""

# The helper on a connection that loads only signed extensions.
UNSIGNED_SCRIPT = """
import json
import duckdb
import duckdb_extension_httpfs2
try:
    duckdb_extension_httpfs2.load(duckdb.connect())
    got = {"message": None}
except duckdb_extension_httpfs2.UnsignedExtensionsDisabledError as error:
    got = {"message": str(error), "cause": str(error.__cause__), "io": isinstance(error, duckdb.IOException)}
print(json.dumps(got))
"""

# The duckdb and duckdb-extension-httpfs wheels the venv test installs, downloaded from PyPI once per machine.
WHEEL_CACHE = Path(os.environ.get("HTTPFS2_CACHE_DIR", Path.home() / ".cache" / "httpfs2")) / "wheels"


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """The extension under test (HTTPFS2_EXTENSION: the release build, or the sanitizer one) laid out by the script
    `make repository` runs."""
    out = tmp_path_factory.mktemp("repository")
    subprocess.run(["bash", str(REPO_ROOT / "scripts" / "repository.sh"), str(HTTPFS2_EXTENSION), str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The extension under test packaged by the script `make wheel` runs."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["bash", str(REPO_ROOT / "scripts" / "wheel.sh"), str(HTTPFS2_EXTENSION), str(out)], check=True)
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory, wheel) -> Path:
    """The python of a fresh venv (without the system's packages) into which pip installed the wheel, the duckdb it
    requires and duckdb-extension-httpfs, from WHEEL_CACHE and the wheel's folder only."""
    version = DUCKDB_VERSION.removeprefix("v")
    python_tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    wanted = [f"duckdb-{version}-{python_tag}-*.whl", f"duckdb_extension_httpfs-{version}-*.whl"]
    if not all(any(WHEEL_CACHE.glob(pattern)) for pattern in wanted):
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--quiet", "--no-deps"]
        subprocess.run(
            [*pip, "--dest", str(WHEEL_CACHE), f"duckdb=={version}", f"duckdb-extension-httpfs=={version}"], check=True
        )
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet", "--no-index"]
    sources = ["--find-links", str(WHEEL_CACHE), "--find-links", str(wheel.parent)]
    subprocess.run([*install, *sources, "duckdb_extension_httpfs2", "duckdb-extension-httpfs"], check=True)
    return python


@pytest.fixture(scope="module")
def blob(rig):
    key = "install/blob.bin"
    data = os.urandom(3 << 20)
    rig.put_object(key, data)
    return rig.url(key), data


def run_script(python, script: str, spec: dict) -> dict:
    """Runs `script` in a fresh process of `python` with `spec` as its argument; returns the JSON it printed last."""
    done = subprocess.run(
        [str(python), "-c", script, json.dumps(spec)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def install_and_read(rig, tmp_path, repository: str, url: str) -> dict:
    spec = {
        "extensions": str(tmp_path / "extensions"),
        "repository": repository,
        "httpfs": str(httpfs_extension()),
        "secret": rig.secret_sql(),
        "url": url,
    }
    return run_script(sys.executable, SCRIPT + READ, spec)


def test_repository_layout_is_what_install_reads(repository):
    folder = repository / DUCKDB_VERSION / "linux_amd64"
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


@needs_registry_package("a DuckDB CLI (duckdb-cli)")
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


def test_wheel_is_shaped_as_the_official_ones(wheel):
    with zipfile.ZipFile(wheel) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    dist_info = next(name.split("/")[0] for name in files if name.endswith(".dist-info/WHEEL"))
    assert files[f"duckdb_extension_httpfs2/extensions/{DUCKDB_VERSION}/httpfs2.duckdb_extension"] == (
        HTTPFS2_EXTENSION.read_bytes()
    )
    assert f"Requires-Dist: duckdb=={DUCKDB_VERSION.removeprefix('v')}" in files[f"{dist_info}/METADATA"].decode()
    # The tag claims no glibc older than the binary needs, nor one whose distributions' libstdc++ lacks what it needs
    # (GCC 12's GLIBCXX_3.4.30 is first in manylinux_2_35).
    (tag,) = re.findall(r"^Tag: (.*)$", files[f"{dist_info}/WHEEL"].decode(), re.MULTILINE)
    assert wheel.name.endswith(f"-{tag}.whl"), wheel.name
    major, minor = re.fullmatch(r"py3-none-manylinux_([0-9]+)_([0-9]+)_x86_64", tag).groups()
    symbols = subprocess.run(["objdump", "-T", str(HTTPFS2_EXTENSION)], capture_output=True, text=True, check=True)
    needed = [tuple(int(part) for part in v.split("."))[:2] for v in re.findall(r"\bGLIBC_([0-9.]+)", symbols.stdout)]
    if "GLIBCXX_3.4.30" in symbols.stdout:
        needed.append((2, 35))
    assert (int(major), int(minor)) >= max(needed), tag
    # RECORD lists every other file with its sha256 and size (what pip installs and uninstalls by).
    record = [line.split(",") for line in files[f"{dist_info}/RECORD"].decode().splitlines()]
    assert {name for name, _, _ in record} == set(files)
    for name, digest, size in record:
        if name != f"{dist_info}/RECORD":
            expected = base64.urlsafe_b64encode(hashlib.sha256(files[name]).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={expected}", len(files[name])), name


@needs_registry_package("duckdb-extension-httpfs")
def test_wheel_in_a_fresh_venv_loads_with_its_helper(rig, blob, wheel_python, tmp_path):
    url, data = blob
    spec = {"extensions": str(tmp_path / "extensions"), "secret": rig.secret_sql(), "url": url}
    got = run_script(wheel_python, WHEEL_SCRIPT + READ, spec)
    assert Path(got["path"]).is_relative_to(wheel_python.parent.parent), got  # the venv's copy of the binary
    assert got["modes"]["httpfs"] == got["modes"]["httpfs2"] == "NOT_INSTALLED", got  # both loaded from files
    assert got["sha256"] == sha256(data)
    assert got["reads"] > 0, got  # the read went through httpfs2


@needs_registry_package("duckdb-extension-httpfs")
def test_wheel_helper_says_how_to_allow_unsigned_extensions(wheel_python):
    got = run_script(wheel_python, UNSIGNED_SCRIPT, {})
    assert got["message"] is not None, "loaded without allow_unsigned_extensions"
    assert "duckdb.connect(config={'allow_unsigned_extensions': 'true'})" in got["message"], got
    assert "signature" in got["cause"] and got["io"], got
