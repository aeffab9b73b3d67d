"""The seed's Azure benchmark (docs/azure.md) on the local rig: az:// and s3://, each native and with httpfs2.

    .venv/bin/python -m bench.azure_matrix                       # full matrix (~40-60 min on 2 cores)
    .venv/bin/python -m bench.azure_matrix --rows 5000 50000 --profiles lan --repeats 1    # a quick look
    .venv/bin/python -m bench.azure_matrix --report bench/results/azure-<timestamp>        # tables again

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
is a fresh process (python -m bench.azure_matrix --worker ...), per repeat in the seed's order:

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
Results: bench/results/azure-<timestamp>/results.jsonl and table.md (git-ignored).
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

PATHS = ("az", "az+httpfs2", "s3", "s3+httpfs2")
ROWS = (5_000, 50_000, 500_000, 2_000_000)
PROFILES = ("lan", "region", "far")
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


# --- worker: one fresh process, timed statements ---


def _proc_io_rchar(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker(spec: dict) -> dict:
    import duckdb

    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "autoload_known_extensions": "false",
            "autoinstall_known_extensions": "false",
            "threads": "1",
        }
    )
    for extension in spec["load"]:
        con.execute(f"LOAD '{extension}'")
    con.execute(spec["secret_sql"])
    for name, value in spec.get("settings", {}).items():
        con.execute(f"SET {name} = {value}")
    for sql in spec.get("setup", []):
        con.execute(sql)
    if spec.get("httpfs2"):
        con.execute("CALL httpfs2_reset_stats()")
    proxy, server = spec["proxy_pid"], spec["server_pid"]
    results = []
    for step in spec["steps"]:
        rchar0, pcpu0, scpu0 = _proc_io_rchar(proxy), _proc_cpu(proxy), _proc_cpu(server)
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        rows = con.execute(step["sql"]).fetchall()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        record = {
            "step": step["name"],
            "seconds": wall,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "proxy_bytes": _proc_io_rchar(proxy) - rchar0,
            "proxy_cpu_s": _proc_cpu(proxy) - pcpu0,
            "server_cpu_s": _proc_cpu(server) - scpu0,
        }
        if "expect" in step:
            got = [list(row) for row in rows]
            if got != step["expect"]:
                raise SystemExit(f"WRONG RESULT for {step['name']} ({step['sql']}): {got} != {step['expect']}")
        results.append(record)
    if spec.get("httpfs2"):
        row = con.execute("SELECT sum(reads), sum(reads_split), sum(sub_reads) FROM httpfs2_stats()").fetchone()
        results[-1]["httpfs2"] = dict(zip(("reads", "reads_split", "sub_reads"), row, strict=True))
    return {"results": results}


# --- driver ---


class Targets:
    """The two rigs and how each path connects to them."""

    def __init__(self, azure_rig, s3_rig):
        from rig.paths import HTTPFS2_EXTENSION, azure_extension, httpfs_extension

        self.azure_rig, self.s3_rig = azure_rig, s3_rig
        self.azure_ext, self.httpfs_ext, self.httpfs2_ext = str(azure_extension()), str(httpfs_extension()), None
        if any(path.endswith("+httpfs2") for path in PATHS):
            self.httpfs2_ext = str(HTTPFS2_EXTENSION)

    def spec(self, path: str) -> dict:
        azure = path.startswith("az")
        rig = self.azure_rig if azure else self.s3_rig
        load = [self.azure_ext if azure else self.httpfs_ext]
        with_httpfs2 = path.endswith("+httpfs2")
        if with_httpfs2:
            # httpfs2's az:// uploads (and version lookups) go through httpfs's HTTP client: DuckDB's built-in one
            # cannot PUT, and httpfs2 users load httpfs anyway.
            load = ([self.httpfs_ext] if azure else []) + load + [self.httpfs2_ext]
        return {
            "load": load,
            "secret_sql": rig.secret_sql(),
            "httpfs2": with_httpfs2,
            "settings": {"httpfs2_parallel_read_enabled": "true"} if with_httpfs2 else {},
            "proxy_pid": rig.toxiproxy.pid,
            "server_pid": (rig.azurite if azure else rig.versitygw).pid,
        }

    def url(self, path: str, key: str) -> str:
        # Each profile and path writes its own files, so no run ever reads another's.
        prefix = f"{self.profile}/{path.replace('+', '-')}"
        return self.azure_rig.url(f"{prefix}/{key}") if path.startswith("az") else self.s3_rig.url(f"{prefix}/{key}")


def run_worker(spec: dict, timeout: float) -> list[dict]:
    from bench.child import run_module

    stdout = run_module("bench.azure_matrix", ["--worker", json.dumps(spec)], timeout, "worker")
    return json.loads(stdout.strip().splitlines()[-1])["results"]


def expected_rows(rows: int) -> dict:
    import duckdb

    con = duckdb.connect()
    gen = f"(SELECT range AS id, range % 97 AS k, md5(range::VARCHAR) AS s FROM range({rows}))"
    lo = rows // 2
    scan = [list(r) for r in con.execute(f"SELECT count(*), sum(k), max(s) FROM {gen}").fetchall()]
    selective = [
        list(r)
        for r in con.execute(
            f"SELECT count(*), sum(k), max(s) FROM {gen} WHERE id BETWEEN {lo} AND {lo + 999}"
        ).fetchall()
    ]
    return {"scan": scan, "selective": selective, "lo": lo, "hi": lo + 999}


def measure_point(targets: Targets, path: str, rows: int, repeats: int, timeout: float, aged: bool, log) -> list[dict]:
    expect = expected_rows(rows)
    spec = targets.spec(path)
    single = targets.url(path, f"r{rows}/single.parquet")
    scan = {"sql": SCAN_SQL.format(url=single), "expect": expect["scan"]}
    records = []

    def run(steps, setup=(), label=""):
        got = run_worker({**spec, "steps": steps, "setup": list(setup)}, timeout)
        for record in got:
            record.update(path=path, rows=rows, profile=targets.profile)
            records.append(record)
            log(record)
        return got

    table = [TABLE_SQL.format(rows=rows)]
    last_write = 0.0
    for repeat in range(repeats):
        run([{"name": "write_single", "sql": f"COPY t TO '{single}' (FORMAT parquet)"}], setup=table)
        last_write = time.monotonic()
        run([{"name": "cold", **scan}, {"name": "warm", **scan}])
        run(
            [
                {
                    "name": "selective",
                    "sql": SELECTIVE_SQL.format(url=single, lo=expect["lo"], hi=expect["hi"]),
                    "expect": expect["selective"],
                }
            ]
        )
        part_dir = targets.url(path, f"r{rows}/part{repeat}")
        run(
            [
                {
                    "name": "write_part",
                    "sql": f"COPY (SELECT *, id % 10 AS p FROM t) TO '{part_dir}' (FORMAT parquet, PARTITION_BY (p))",
                }
            ],
            setup=table,
        )
        run([{"name": "glob", "sql": SCAN_SQL.format(url=f"{part_dir}/*/*.parquet"), "expect": expect["scan"]}])
    if aged:
        wait = AGE_S - (time.monotonic() - last_write)
        if wait > 0:
            time.sleep(wait)
        for _ in range(repeats):
            run([{"name": "cold_aged", **scan}, {"name": "warm_aged", **scan}])
    return records


# --- report ---


def _p50(values):
    return statistics.median(values) if values else None


def summarize(records: list[dict]) -> dict:
    groups = {}
    for record in records:
        groups.setdefault((record["profile"], record["step"], record["rows"], record["path"]), []).append(record)
    summary = {}
    for key, group in groups.items():
        seconds = _p50([r["seconds"] for r in group])
        cpu = _p50([r["cpu_s"] for r in group])
        nbytes = _p50([r["proxy_bytes"] for r in group])
        summary[key] = {
            "seconds": seconds,
            "cpu_s": cpu,
            "bytes": nbytes,
            "n": len(group),
            "cpu_per_gib": cpu / (nbytes / 2**30) if nbytes and nbytes > (1 << 20) else None,
            "proxy_cpu_s": _p50([r["proxy_cpu_s"] for r in group]),
            "server_cpu_s": _p50([r["server_cpu_s"] for r in group]),
        }
    return summary


def _fmt_s(value):
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _time_cell(point: dict) -> str:
    return f"{_fmt_s(point['seconds'])} ({_fmt_s(point['cpu_s'])})"


def _traffic_cell(point: dict) -> str:
    per_gib = f"{point['cpu_per_gib']:.2f}" if point["cpu_per_gib"] is not None else "-"
    return f"{point['bytes'] / 2**20:.1f} MiB, {per_gib}, srv {point['server_cpu_s']:.2f}"


def _table_rows(summary: dict, profile: str, steps, rows_list, paths, cell):
    """(step, rows, cells) for every step and size that some path measured; `cell` formats a measured point."""
    for step in steps:
        for rows in rows_list:
            points = [summary.get((profile, step, rows, path)) for path in paths]
            if any(points):
                yield step, rows, [cell(point) if point else "-" for point in points]


def markdown(summary: dict, paths, rows_list, profiles, meta: dict) -> str:
    out = []
    for profile in profiles:
        out.append(f"### Profile `{profile}`: p50 seconds (client CPU seconds)\n")
        header = ["step", "rows"] + list(paths) + ["seed s3proxy / az://"]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        for step, rows, cells in _table_rows(summary, profile, STEPS, rows_list, paths, _time_cell):
            seed = SEED.get(step, {}).get(rows)
            seed_cell = f"{seed[0]} / {seed[1]}" if seed else ""
            out.append(f"| {STEP_TITLES[step]} | {rows:,} | " + " | ".join(cells) + f" | {seed_cell} |")
        out.append("")
        out.append(
            f"### Profile `{profile}`: MiB through the proxy, client CPU s per GiB of them, server CPU s "
            f"(Azurite or versitygw) during the step\n"
        )
        header = ["step", "rows"] + list(paths)
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        traffic_steps = ("write_single", "write_part", "cold", "warm", "warm_aged", "selective", "glob")
        for step, rows, cells in _table_rows(summary, profile, traffic_steps, rows_list, paths, _traffic_cell):
            out.append(f"| {STEP_TITLES[step]} | {rows:,} | " + " | ".join(cells) + " |")
        out.append("")
    out.append(
        f"Command: `{meta['command']}`; {meta['when']}; repeats {meta['repeats']}; DuckDB threads 1; "
        f"duckdb {meta['duckdb']}; httpfs2 {meta['httpfs2_sha256'][:12]}; Azurite {meta['azurite']}."
    )
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, nargs="+", default=list(ROWS))
    parser.add_argument("--profiles", nargs="+", default=["lan", "region"], choices=PROFILES)
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-aged", action="store_true", help="skip the cold/warm reads of the > 10 s old blob")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report", type=Path, metavar="DIR", help="only print the tables of an earlier run's DIR")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if args.report:
        meta = json.loads((args.report / "meta.json").read_text())
        records = [json.loads(line) for line in (args.report / "results.jsonl").read_text().splitlines() if line]
        print(markdown(summarize(records), meta["paths"], meta["rows"], meta["profiles"], meta))
        return

    import hashlib
    import shutil

    import duckdb

    from rig import S3Rig
    from rig.azurite import AZURITE_VERSION, AzuriteRig, apply_profile
    from rig.paths import HTTPFS2_EXTENSION

    out = args.out or REPO_ROOT / "bench" / "results" / f"azure-{datetime.now():%Y%m%d-%H%M%S}"
    out.mkdir(parents=True, exist_ok=True)
    httpfs2_sha = "none"
    if any(p.endswith("+httpfs2") for p in args.paths):
        if not HTTPFS2_EXTENSION.exists():
            raise SystemExit(f"{HTTPFS2_EXTENSION} not built: run scripts/build.sh (or leave out the +httpfs2 paths)")
        # A rebuild during the run must not change what is measured.
        copy = out / "httpfs2.duckdb_extension"
        shutil.copyfile(HTTPFS2_EXTENSION, copy)
        httpfs2_sha = hashlib.sha256(copy.read_bytes()).hexdigest()
    meta = {
        "command": "python -m bench.azure_matrix " + " ".join(sys.argv[1:]),
        "when": datetime.now().strftime("%Y-%m-%d %H:%M"),
        "repeats": args.repeats,
        "duckdb": duckdb.__version__,
        "httpfs2_sha256": httpfs2_sha,
        "azurite": AZURITE_VERSION,
        "rows": args.rows,
        "profiles": args.profiles,
        "paths": args.paths,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    results_file = (out / "results.jsonl").open("w")

    def log(record):
        results_file.write(json.dumps(record) + "\n")
        results_file.flush()
        print(
            f"  {record['profile']:6} {record['path']:11} {record['rows']:>9,} {record['step']:12} "
            f"{record['seconds']:8.3f} s  cpu {record['cpu_s']:6.3f} s  {record['proxy_bytes'] / 2**20:8.1f} MiB",
            file=sys.stderr,
            flush=True,
        )

    records = []
    with AzuriteRig(container="bench") as azure_rig, S3Rig(bucket="bench") as s3_rig:
        targets = Targets(azure_rig, s3_rig)
        if httpfs2_sha != "none":
            targets.httpfs2_ext = str(out / "httpfs2.duckdb_extension")
        for profile in args.profiles:
            targets.profile = profile
            # Writes are steps of the matrix: the cap applies to uploads too.
            apply_profile(azure_rig, profile, uploads_too=True)
            apply_profile(s3_rig, profile, uploads_too=True)
            for rows in args.rows:
                for path in args.paths:
                    records += measure_point(targets, path, rows, args.repeats, args.timeout, not args.no_aged, log)
    results_file.close()
    table = markdown(summarize(records), args.paths, args.rows, args.profiles, meta)
    (out / "table.md").write_text(table)
    print(table)
    print(f"results: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
