"""The seed's Azure benchmark (docs/azure.md) on the local rig: az:// and s3://, each native and with httpfs2.

    .venv/bin/python -m bench run azure                          # full matrix (~40-60 min on 2 cores)
    .venv/bin/python -m bench run azure --rows 5000 50000 --profiles lan --repeats 1      # a quick look
    .venv/bin/python -m bench report bench/results/azure-<timestamp>                     # tables again

The seed ("DuckDB on Azure: direct az:// vs S3-compatible proxy") ran one SQL script against real Azure: a
synthetic table (id, id % 97 AS k, md5(id::VARCHAR) AS s, random() AS r) at 5k, 50k, 500k and 2M rows, written as
one parquet file and as 10 partitions, then read cold, warm (the same query again in the same session), with a
selective filter, and as a glob over the 10 files. Here the same steps run against Azurite (az://) and versitygw
(s3://), each behind its own toxiproxy with the same network profile (`lan`: 0 ms toxic; `region`: 25 ms first
byte + 90 MiB/s per connection), for four paths:

    az            azure extension 1.5.5 alone
    az+httpfs2    httpfs + azure + httpfs2, httpfs2_parallel_read_enabled = true (other httpfs2 settings at defaults;
                  httpfs for its HTTP client, which httpfs2's az:// uploads need)
    s3            httpfs 1.5.5 alone
    s3+httpfs2    httpfs + httpfs2, httpfs2_parallel_read_enabled = true

DuckDB threads = 1 and DuckDB's defaults otherwise (external file cache on, as the seed had). Every measurement
is a fresh worker (bench/worker.py), per repeat in the seed's order:

    1. write single   CREATE TABLE t (untimed), then COPY t TO '<single>.parquet'
    2. cold + warm    right after 1 (as in the seed: the blob is seconds old): the scan query, then the same again
    3. selective      the scan restricted to 1000 ids (row-group statistics prune the rest)
    4. write 10 part. COPY (SELECT *, id % 10 AS p FROM t) TO '<dir_r>' (FORMAT parquet, PARTITION_BY (p))
    5. glob           the scan over '<dir_r>/*/*.parquet' (10 files)
and after the repeats, once the single file is more than 11 s old:
    6. cold + warm (aged)  the same as 2: DuckDB's external file cache trusts a Last-Modified only after 10 s
                           when the filesystem gives no version tag (the azure extension gives none)

Scan query: SELECT count(*), sum(k), max(s) FROM read_parquet(...) (its result is checked against DuckDB's own
computation from range(); a wrong row stops the run). Reported: p50 seconds of the timed statement, p50 client
CPU seconds (user + sys of the worker process, all threads), bytes through the proxy (toxiproxy's rchar: the
request and response bytes it read) and CPU seconds per GiB of those bytes; the seed's figures beside them.
Results: bench/results/<timestamp>/results.csv (git-ignored); bench/report_azure.py prints the tables.
"""

import json
import sys
import time
from datetime import datetime

import duckdb

from bench.answers import normalize_rows
from bench.child import run_worker
from bench.configs import CONFIGS
from rig import S3Rig, azure_extension, httpfs_extension
from rig.s3rig import PROFILES

STEPS = ("write_single", "write_part", "cold", "warm", "cold_aged", "warm_aged", "selective", "glob")
STEP_TITLES = {
    "write_single": "WRITE single file",
    "write_part": "WRITE 10 partitions",
    "cold": "READ cold (full scan)",
    "warm": "READ warm (same session, blob seconds old)",
    "cold_aged": "READ cold (blob > 10 s old)",
    "warm_aged": "READ warm (blob > 10 s old)",
    "selective": "READ selective (1000 ids)",
    "glob": "READ glob (10 files)",
}
# The seed's "Full results table" (DuckDB 1.5.1, real Azure over a home connection): (s3proxy, az://) seconds.
SEED = {
    "write_single": {5_000: (0.65, 1.05), 50_000: (0.46, 1.54), 500_000: (3.06, 7.84), 2_000_000: (17.5, 26.7)},
    "write_part": {5_000: (1.09, 5.71), 50_000: (2.21, 11.17), 500_000: (6.31, 17.3), 2_000_000: (24.4, 38.6)},
    "cold": {5_000: (0.19, 0.23), 50_000: (0.40, 0.37), 500_000: (1.81, 1.45), 2_000_000: (4.40, 23.9)},
    "warm": {5_000: (0.001, 0.22), 50_000: (0.003, 0.11), 500_000: (0.003, 0.11), 2_000_000: (0.006, 0.32)},
    "selective": {5_000: (0.06, 0.26), 50_000: (1.66, 0.72), 500_000: (1.43, 0.73), 2_000_000: (2.22, 1.36)},
    "glob": {5_000: (0.42, 0.49), 50_000: (0.42, 0.41), 500_000: (0.34, 0.71), 2_000_000: (0.35, 0.62)},
}
TABLE_SQL = (
    "CREATE TABLE t AS SELECT range AS id, range % 97 AS k, md5(range::VARCHAR) AS s, random() AS r FROM range({rows})"
)
SCAN_SQL = "SELECT count(*), sum(k), max(s) FROM read_parquet('{url}')"
SELECTIVE_SQL = "SELECT count(*), sum(k), max(s) FROM read_parquet('{url}') WHERE id BETWEEN {lo} AND {hi}"
AGE_S = 11.0  # DuckDB trusts an unchanged Last-Modified only when it is more than 10 s old


class Targets:
    """The two rigs and how each path connects to them."""

    def __init__(self, azure_rig, s3_rig, httpfs2_ext):
        self.azure_rig, self.s3_rig, self.httpfs2_ext = azure_rig, s3_rig, httpfs2_ext
        self.profile = None

    def spec(self, path: str, httpfs2) -> dict:
        azure = path.startswith("az")
        rig = self.azure_rig if azure else self.s3_rig
        load = [str(azure_extension() if azure else httpfs_extension())]
        if httpfs2.settings is not None:
            # httpfs2's az:// uploads (and version lookups) go through httpfs's HTTP client: DuckDB's built-in one
            # cannot PUT, and httpfs2 users load httpfs anyway.
            load = ([str(httpfs_extension())] if azure else []) + load + [str(self.httpfs2_ext)]
        return {
            "load": load,
            "threads": 1,
            "secret_sql": rig.secret_sql(),
            "settings": httpfs2.settings or {},
            "watch": {"proxy_pid": rig.toxiproxy.pid, "server_pid": (rig.azurite if azure else rig.versitygw).pid},
        }

    def url(self, path: str, key: str) -> str:
        # Each profile and path writes its own files, so no run ever reads another's.
        prefix = f"{self.profile}/{path.replace('+', '-')}"
        return self.azure_rig.url(f"{prefix}/{key}") if path.startswith("az") else self.s3_rig.url(f"{prefix}/{key}")


def expected_rows(rows: int) -> dict:
    con = duckdb.connect()
    gen = f"(SELECT range AS id, range % 97 AS k, md5(range::VARCHAR) AS s FROM range({rows}))"
    lo = rows // 2
    scan = con.execute(f"SELECT count(*), sum(k), max(s) FROM {gen}").fetchall()
    selective = con.execute(f"SELECT count(*), sum(k), max(s) FROM {gen} WHERE id BETWEEN {lo} AND {lo + 999}")
    return {"scan": normalize_rows(scan), "selective": normalize_rows(selective.fetchall()), "lo": lo, "hi": lo + 999}


def config_of(path: str):
    return CONFIGS["httpfs2" if path.endswith("+httpfs2") else "native"]


def measure_point(run, targets: Targets, path: str, rows: int, aged: bool, timeout: float):
    httpfs2 = run.resolve(config_of(path))
    expect = expected_rows(rows)
    spec = targets.spec(path, httpfs2)
    single = targets.url(path, f"r{rows}/single.parquet")
    scan = {"sql": SCAN_SQL.format(url=single), "expect": expect["scan"]}
    point = {"suite": run.name, "kind": "azure", "profile": targets.profile, "config": path, "rows": rows}

    def measure(steps, repeat, setup=()):
        result = run_worker({**spec, "steps": steps, "setup": list(setup)}, timeout, f"{path} {steps[0]['name']}")
        for step in result["steps"]:
            row = dict(point, step=step.pop("name"), repeat=repeat, engine=httpfs2.engine, duckdb_threads=1, **step)
            row.update(settings=json.dumps(spec["settings"]), timestamp=datetime.now().isoformat(timespec="seconds"))
            if result["stats"] and step is result["steps"][-1]:
                row["h2_stats"] = json.dumps({k: result["stats"][k] for k in ("reads", "reads_split", "sub_reads")})
            run.results.write(row)
            print(
                f"  {row['profile']:6} {path:11} {rows:>9,} {row['step']:12} {row['wall_s']:8.3f} s  "
                f"cpu {row['client_cpu_s']:6.3f} s  {row['fetched_bytes'] / 2**20:8.1f} MiB",
                file=sys.stderr,
                flush=True,
            )

    table = [TABLE_SQL.format(rows=rows)]
    last_write = 0.0
    for repeat in range(run.opts.repeats):
        measure([{"name": "write_single", "sql": f"COPY t TO '{single}' (FORMAT parquet)"}], repeat, setup=table)
        last_write = time.monotonic()
        measure([{"name": "cold", **scan}, {"name": "warm", **scan}], repeat)
        selective = SELECTIVE_SQL.format(url=single, lo=expect["lo"], hi=expect["hi"])
        measure([{"name": "selective", "sql": selective, "expect": expect["selective"]}], repeat)
        part_dir = targets.url(path, f"r{rows}/part{repeat}")
        partitioned = f"COPY (SELECT *, id % 10 AS p FROM t) TO '{part_dir}' (FORMAT parquet, PARTITION_BY (p))"
        measure([{"name": "write_part", "sql": partitioned}], repeat, setup=table)
        glob = SCAN_SQL.format(url=f"{part_dir}/*/*.parquet")
        measure([{"name": "glob", "sql": glob, "expect": expect["scan"]}], repeat)
    if aged:
        time.sleep(max(0.0, AGE_S - (time.monotonic() - last_write)))
        for repeat in range(run.opts.repeats):
            measure([{"name": "cold_aged", **scan}, {"name": "warm_aged", **scan}], repeat)


def run(suite, run):
    from rig.azurite import AZURITE_VERSION, AzuriteRig

    rows = run.numbers("rows", suite.rows)
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    paths = run.pick("configs", suite.paths, suite.paths)
    for path in paths:  # before the rigs start: a build without a setting stops the run here
        run.resolve(config_of(path))
    run.save_meta(duckdb=duckdb.__version__, azurite=AZURITE_VERSION, rows=rows, profiles=profiles, paths=paths)
    with AzuriteRig(container="bench") as azure_rig, S3Rig(bucket="bench") as s3_rig:
        targets = Targets(azure_rig, s3_rig, run.extension)
        for profile in profiles:
            targets.profile = profile
            # Writes are steps of the matrix: the cap applies to uploads too.
            azure_rig.set_profile(profile, uploads_too=True)
            s3_rig.set_profile(profile, uploads_too=True)
            for n, path in ((n, p) for n in rows for p in paths):
                measure_point(run, targets, path, n, not run.opts.no_aged, run.timeout(suite))
