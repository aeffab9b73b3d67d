"""httpfs's own S3 test files against the rig: unpack duckdb-httpfs, start versitygw as its minio, run each file in
its own process (runner.py), natively or with httpfs2 loaded too.

    .venv/bin/python test/httpfs_suite/suite.py [--httpfs2 [--mode split_reads]] [--log-requests] [FILE ...]

runs the given files (paths inside duckdb-httpfs, default: every file that needs the S3 server) and prints one
line per file; exit status 1 when one fails. The lists beside this file say which files are left out natively
(native_excluded.txt) and which differ with httpfs2 by design (expected_differences.txt), each with its reason; in
DuckDB 2.0.x the files of httpfs main run, with the lists named _2.0."""

import argparse
import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

from server import MinioStandIn  # noqa: E402

from rig.http_server import serve_http  # noqa: E402
from rig.paths import REPO_ROOT  # noqa: E402
from rig.s3rig import count_requests  # noqa: E402

# The httpfs whose files run (../shared/vendor/README.md): that of the DuckDB running this, its v1.5 branch for
# DuckDB 1.5.x, main for 2.0.x (the host's httpfs built from it: HTTPFS2_HOST_HTTPFS).
DUCKDB_MAJOR = importlib.metadata.version("duckdb").split(".")[0]
HTTPFS_ARCHIVE = "duckdb-httpfs-3fb3fc9.tar.gz" if DUCKDB_MAJOR == "1" else "duckdb-httpfs-2a6481d.tar.gz"
# The lists beside this file for those files (see main's docstring).
LISTS = "" if DUCKDB_MAJOR == "1" else "_2.0"
VENDOR = Path(os.environ.get("HTTPFS2_VENDOR", REPO_ROOT.parent / "shared" / "vendor"))
# The marker of files that need the S3 test server (scripts/set_s3_test_server_variables.sh).
NEEDS_S3 = "require-env S3_TEST_SERVER_AVAILABLE"
FILE_TIMEOUT = 120  # seconds for one file
# httpfs2's modes the suite runs in: its defaults (on the rig's LAN latency, read-ahead and split reads stay off), and
# with its read mechanisms on whatever the latency (what a user far from the store gets).
MODES = {
    "defaults": "",
    "split_reads": "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_min_latency_ms = 0",
}
# Some files read DuckDB's own test data (duckdb/data/... inside the httpfs tree, a git submodule the archive lacks):
# a folder holding DuckDB's `data/` (a checkout of duckdb/duckdb) given here; without it those files skip.
DUCKDB_DATA = os.environ.get("HTTPFS2_DUCKDB_DATA")
# Where files download DuckDB's test data from GitHub (no internet here): served from DUCKDB_DATA on 127.0.0.1.
GITHUB_DATA = "https://raw.githubusercontent.com/duckdb/duckdb/main/"


def httpfs_archive() -> Path:
    archive = VENDOR / HTTPFS_ARCHIVE
    if not archive.exists():
        raise FileNotFoundError(f"{archive} not found (set HTTPFS2_VENDOR to the folder that holds it)")
    return archive


def unpack_httpfs(into: Path) -> Path:
    """The duckdb-httpfs tree from the vendored archive, unpacked under `into`."""
    with tarfile.open(httpfs_archive()) as tar:
        tar.extractall(into, filter="data")
    (tree,) = [p for p in into.iterdir() if p.is_dir()]
    if DUCKDB_DATA:
        (tree / "duckdb" / "data").symlink_to(Path(DUCKDB_DATA).resolve() / "data")
    return tree


def s3_files() -> list[str]:
    """The .test files (not .test_slow) of the archive that need the S3 server, as paths inside its tree."""
    found = []
    with tarfile.open(httpfs_archive()) as tar:
        for member in tar:
            path = member.name.split("/", 1)[-1]
            if member.isfile() and path.startswith("test/") and path.endswith(".test"):
                if NEEDS_S3 in tar.extractfile(member).read().decode(errors="replace"):
                    found.append(path)
    return sorted(found)


def read_list(name: str) -> dict:
    """The list `name` (native_excluded, expected_differences) for the files that run: `key reason` lines, `#`
    comments: {key: reason}."""
    entries = {}
    for line in (HERE / f"{name}{LISTS}.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, reason = line.partition(" ")
            entries[key] = reason.strip()
    return entries


@contextlib.contextmanager
def url_map():
    """{URL prefix in the files: where the rig serves it}: DuckDB's data on GitHub from DUCKDB_DATA, if given."""
    if not DUCKDB_DATA:
        yield {}
        return
    with serve_http(Path(DUCKDB_DATA)) as base_url:
        yield {GITHUB_DATA: base_url + "/"}


# What the setup of minio_s3.yml shares as presigned URLs (s3_presigned_read.test), from DuckDB's data.
PRESIGNED = {
    "S3_SMALL_CSV_PRESIGNED_URL": ("presigned/phonenumbers.csv", "data/csv/phonenumbers.csv"),
    "S3_SMALL_PARQUET_PRESIGNED_URL": ("presigned/t1.parquet", "data/parquet-testing/glob/t1.parquet"),
}


def share_presigned(server: MinioStandIn):
    """The presigned URLs the files may require, where DuckDB's data is given."""
    if DUCKDB_DATA:
        for variable, (key, source) in PRESIGNED.items():
            server.put_presigned(variable, key, (Path(DUCKDB_DATA) / source).read_bytes())


def _with_hosts(hosts_file: str, args: list) -> list:
    """args run in a mount namespace of their own where hosts_file is /etc/hosts: the machine's stays as it is."""
    unshare = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--mount", "--map-root-user"]
    return [*unshare, "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"', hosts_file, *args]


def run_one(
    tree: Path,
    file: str,
    server: MinioStandIn,
    with_httpfs2: bool,
    on_init: str = "",
    log_requests: bool = False,
    urls: dict | None = None,
) -> dict:
    """runner.py on one file in a new process: its outcome {file, status, reason, line}."""
    text = (tree / file).read_text()
    needs_data = ["duckdb/data/", GITHUB_DATA, *(f"require-env {variable}" for variable in PRESIGNED)]
    if any(marker in text for marker in needs_data) and not DUCKDB_DATA:
        return {"file": file, "status": "skip", "reason": "reads DuckDB's data/: set HTTPFS2_DUCKDB_DATA"}
    env = server.environment
    args = [sys.executable, str(HERE / "runner.py"), "--httpfs-tree", str(tree), file]
    args += [f"--env={name}={value}" for name, value in env.items()]
    if with_httpfs2:
        args.append("--httpfs2")
    if on_init:
        args.append(f"--on-init={on_init}")
    if log_requests:
        args.append("--log-requests")
    args += [f"--url-map={old}={new}" for old, new in (urls or {}).items()]
    # Only the rig's AWS_* variables: none of this process's credentials reach httpfs.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DUCKDB_S3", "S3_"))}
    log = server.access_log_path
    offset = log.stat().st_size if log.exists() else 0
    try:
        done = subprocess.run(
            _with_hosts(server.hosts_file(), args), capture_output=True, text=True, timeout=FILE_TIMEOUT, env=clean
        )
    except subprocess.TimeoutExpired:
        return {"file": file, "status": "fail", "reason": f"timed out after {FILE_TIMEOUT} s", "line": 0}
    if done.returncode != 0 or not done.stdout.strip():
        return {"file": file, "status": "fail", "reason": f"runner exit {done.returncode}: {done.stderr[-2000:]}"}
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    time.sleep(0.2)  # versitygw writes a request's log line after its answer
    outcome["server_requests"] = count_requests(log, offset) if log.exists() else {}
    return outcome


def main() -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--httpfs2", action="store_true", help="load httpfs2 (HTTPFS2_EXTENSION) after httpfs")
    parser.add_argument("--mode", choices=MODES, default="defaults", help="httpfs2's settings (with --httpfs2)")
    parser.add_argument("--on-init", default="", help="SQL run on each new connection, instead of the mode's")
    parser.add_argument(
        "--log-requests",
        action="store_true",
        help="set DuckDB's HTTP log (on from the start) beside what the server served, per file: a diagnostic; "
        "files that count the log themselves then see more and fail",
    )
    parser.add_argument("files", nargs="*")
    options = parser.parse_args()
    on_init = options.on_init or (MODES[options.mode] if options.httpfs2 else "")
    with tempfile.TemporaryDirectory(prefix="httpfs-tree-") as scratch, MinioStandIn() as server, url_map() as urls:
        tree = unpack_httpfs(Path(scratch))
        share_presigned(server)
        failed = False
        for file in options.files or s3_files():
            outcome = run_one(tree, file, server, options.httpfs2, on_init, options.log_requests, urls)
            failed |= outcome["status"] == "fail"
            line = f" line {outcome['line']}" if outcome.get("line") else ""
            print(f"{outcome['status'].upper():4} {file}{line}", flush=True)
            print(
                "     served: " + ", ".join(f"{op} {n}" for op, n in sorted(outcome.get("server_requests", {}).items()))
            )
            if outcome.get("logged_requests") is not None:
                print("     logged: " + ", ".join(f"{m} {n}" for m, n in sorted(outcome["logged_requests"].items())))
            if outcome.get("reason"):
                print("     " + outcome["reason"].replace("\n", "\n     "), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
