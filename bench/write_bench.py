"""Carries out a writes suite (bench/suites.py Writes; issue 22): TPC-H SF1 lineitem from a local parquet file
written to s3:// through the rig (one parquet file, PARTITION_BY into 21 files, CSV, a DuckLake CREATE TABLE AS),
native httpfs vs httpfs2 vs the same write to a local folder, each run a fresh worker, the network profile on BOTH
directions (toxiproxy's latency downstream, its bandwidth toxic downstream and upstream: an upload pays the
per-connection rate too), and every written dataset read back at lan and checked against the same write done
locally (count and an order-free hash of every column).
"""

import contextlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench import data
from bench.child import run_worker
from bench.configs import CONFIGS
from bench.hosts import BASE_VERSION
from bench.worker import connect
from bench.workload_bench import rig_cpu_since
from rig import S3Rig, ducklake_extension
from rig.s3rig import PROFILES

SOURCE = "read_parquet('{source}')"
BIGBOX_ROWS = 2_090_000  # lineitem rows that make ~256 MiB of CSV


@dataclass(frozen=True)
class Write:
    """A write: the SQL that writes `query` over the source below a run's target folder, and how to read it back."""

    copy_options: str | None  # a COPY's options; None: a DuckLake insert
    leaf: str  # what is written below the run's folder
    query: str = "FROM {src}"

    def sql(self, source: str, target: str, catalog: Path) -> str:
        query = self.query.format(src=source)
        if self.copy_options is None:
            return (
                f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{target}/'); "
                f"CREATE TABLE lake.lineitem AS {query}; DETACH lake"
            )
        return f"COPY ({query}) TO '{target}' ({self.copy_options})"

    def checksum(self, con, target: str, catalog: Path) -> tuple:
        """Count and an order-free hash of every column of what was written, as DuckDB reads it back."""
        if self.copy_options is None:
            con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (READ_ONLY)")
            try:
                return con.execute(CHECK.format(reader="lake.lineitem")).fetchone()
            finally:
                con.execute("DETACH lake")
        kind = "csv" if "csv" in self.copy_options else "parquet"
        if "PARTITION_BY" in self.copy_options:
            reader = f"read_{kind}('{target}/**/*.{kind}', hive_partitioning = false)"
        else:
            reader = f"read_{kind}('{target}')"
        return con.execute(CHECK.format(reader=reader)).fetchone()


WRITES = {
    "parquet": Write("FORMAT parquet", "lineitem.parquet"),
    # 'REG AIR' would be written as the key 'l_shipmode=REG%20AIR/...', which httpfs 1.5.5 cannot read back (it sends
    # the '%' unescaped): the space is replaced, the files and their sizes stay.
    "partitioned": Write(
        "FORMAT parquet, PARTITION_BY (l_shipmode, l_returnflag)",
        "parts",
        "SELECT * REPLACE (replace(l_shipmode, ' ', '_') AS l_shipmode) FROM {src}",
    ),
    "csv": Write("FORMAT csv", "lineitem.csv", "FROM {src} LIMIT 2000000"),
    "ducklake": Write(None, "lake"),
    # bench/peer_bench.py's writes at `bigbox` (issue 31): one object of 256 MiB, and the same rows as 16 files of
    # 16 MiB (a hash of the key spreads the rows evenly; TPC-H's order keys leave half of `l_orderkey % 16` empty).
    "csv-256m": Write("FORMAT csv", "lineitem.csv", f"FROM {{src}} LIMIT {BIGBOX_ROWS}"),
    "csv-16x16m": Write(
        "FORMAT csv, PARTITION_BY (part)",
        "parts",
        f"SELECT *, hash(l_orderkey, l_linenumber) % 16 AS part FROM {{src}} LIMIT {BIGBOX_ROWS}",
    ),
}
CHECK = "SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM {reader}"
# The httpfs2_stats() columns a write's row keeps: its uploads, and what throttling and expired credentials cost it.
STATS_KEPT = ("upload", "throttled", "credentials", "hedges")


def spec(run, rig, config, threads: int) -> dict:
    """A connection for config: its extensions and DuckLake (on the DuckDB a registry serves it for), curl, no file
    cache."""
    lake = [str(ducklake_extension())] if config.duckdb == BASE_VERSION else []
    return {
        "load": run.extensions(config) + lake,
        "file_cache": False,
        "threads": threads,
        "client": "curl",
        "secret_sql": rig.secret_sql(),
        "settings": config.settings or {},
    }


def remove_prefix(rig, prefix: str):
    """Deletes what a run wrote, so that a whole bench run holds one run's objects at a time."""
    listed = rig.s3.list_objects_v2(Bucket=rig.bucket, Prefix=prefix).get("Contents", [])
    for item in listed:
        rig.s3.delete_object(Bucket=rig.bucket, Key=item["Key"])


def abort_open_uploads(rig):
    """Aborts the multipart uploads a failed write left open, so that the next write's check sees its own alone."""
    for upload in rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads", []):
        rig.s3.abort_multipart_upload(Bucket=rig.bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def references(check_con, names, source: str, scratch: Path) -> dict:
    """What each written dataset must read back as: the same write to a local folder, read the same way."""
    expected = {}
    for name in names:
        folder = scratch / "reference" / name
        folder.mkdir(parents=True)
        write = WRITES[name]
        target, catalog = str(folder / write.leaf), folder / "catalog.ducklake"
        check_con.execute(write.sql(source, target, catalog))
        expected[name] = write.checksum(check_con, target, catalog)
    return expected


@contextlib.contextmanager
def rig_cpu(rig, row: dict):
    """Around a write: the CPU seconds versitygw and toxiproxy spent on it, on the cores the write runs on."""
    before = rig.server_cpu_seconds()
    yield
    row.update(rig_cpu_since(rig, before))


class Writer:
    """The writes of one suite run, against one rig, read back by one native connection."""

    def __init__(self, run, rig, source: str, threads: int, timeout: float, watch=None):
        """watch: a context manager around each write's worker, given the row to add to (bench/peer_bench.py); by
        default the rig's CPU (versitygw and toxiproxy share the machine's cores with the write)."""
        self.run, self.rig, self.source, self.threads, self.timeout = run, rig, source, threads, timeout
        self.watch = watch or (lambda row: rig_cpu(rig, row))
        self.check_con = connect(spec(run, rig, CONFIGS["native"], 4))

    def write_once(self, row: dict, config, folder: Path, expected, name=None, spec_extra=None):
        """One write in a fresh worker at the row's profile, read back at lan, checked, then removed. name: the write
        (default: the row's workload); spec_extra: worker spec keys over the write's (bench/pressure_bench.py: the
        secret on its proxy, a rotation, keep_going); with keep_going a failed, wrong or unfinished write is the
        row's `error` (its open uploads aborted), not the run's end."""
        rig, name = self.rig, name or row["workload"]
        write = WRITES[name]
        catalog = folder / "catalog.ducklake"
        key = f"writes/{folder.name}/"
        target = str(folder / write.leaf) if config.local else f"s3://{rig.bucket}/{key}{write.leaf}"
        rig.set_profile(row["profile"], uploads_too=True)
        worker = spec(self.run, rig, config, self.threads) | (spec_extra or {})
        worker["steps"] = [{"name": name, "sql": write.sql(self.source, target, catalog)}]
        with self.watch(row):
            result = run_worker(worker, self.timeout, f"{config.name} write", python=self.run.python(config))
        rig.set_profile("lan")  # read back at LAN speed
        problems = [s["error"] for s in result["steps"] if s.get("error")]
        if not problems:
            got = write.checksum(self.check_con, target, catalog)
            if tuple(got) != tuple(expected):
                problems.append(f"read back {got}, expected {expected}")
        open_uploads = rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads", [])
        if open_uploads:
            problems.append(f"multipart uploads left open: {[u['Key'] for u in open_uploads]}")
        if problems and not worker.get("keep_going"):
            raise RuntimeError(f"{config.name} {name}: {'; '.join(problems)}")
        abort_open_uploads(rig)
        shutil.rmtree(folder)
        remove_prefix(rig, key)
        stats = {k: v for k, v in result["stats"].items() if k.startswith(STATS_KEPT) or k == "files_uploaded"}
        row.update(
            timestamp=datetime.now().isoformat(timespec="seconds"),
            wall_s=result["wall_s"],
            client_cpu_s=result["client_cpu_s"],
            client_sys_s=result["client_sys_s"],
            vm_hwm_mib=result["vm_hwm_mib"],
            settings=json.dumps(config.settings or {}),
            h2_stats=json.dumps(stats),
            error="; ".join(problems),
        )
        self.run.results.write(row)
        print(
            f"[writes] {row['profile']} {name} {config.name} #{row['repeat']}: {result['wall_s']:.2f} s, "
            f"cpu {result['client_cpu_s']:.2f} s, VmHWM {result['vm_hwm_mib']:.0f} MiB {stats}",
            file=sys.stderr,
            flush=True,
        )


def run(suite, run):
    names = run.pick("workloads", suite.workloads, WRITES)
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    configs = run.configs(suite.configs)
    threads = run.numbers("threads", suite.threads)[0]  # one count: the table names it once
    data.ensure(["tpch-sf1"])
    source = SOURCE.format(source=data.folder("tpch-sf1") / "lineitem.parquet")
    scratch = Path(tempfile.mkdtemp(prefix="httpfs2-writes-"))
    try:
        with S3Rig(bucket="bench") as rig:
            writer = Writer(run, rig, source, threads, run.timeout(suite))
            expected = references(writer.check_con, names, source, scratch)
            count = 0
            for profile in profiles:
                for name in names:
                    for repeat in range(run.opts.repeats):
                        for config in configs:
                            count += 1
                            folder = scratch / f"run{count}"
                            folder.mkdir()
                            row = {
                                "suite": run.name,
                                "kind": "write",
                                "profile": profile,
                                "workload": name,
                                "duckdb_threads": threads,
                                "client": "curl",
                                "engine": config.engine,
                                "config": config.name,
                                "repeat": repeat,
                            }
                            writer.write_once(row, config, folder, expected[name])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
