"""Writes (issue 22): TPC-H SF1 lineitem from a local parquet file written to s3:// through the rig (one parquet file,
PARTITION_BY into 21 files, CSV, a DuckLake CREATE TABLE AS), native httpfs vs httpfs2 vs the same write to a local
folder, each run a fresh process, the network profile on BOTH directions
(toxiproxy's latency downstream, its bandwidth toxic downstream and upstream: an upload pays the per-connection
rate too), and every written dataset read back and checked against the source (count and an order-free hash of
every column).

Usage: python -m bench.write_bench [--profiles "lan region far"] [--workloads "..."] [--threads 4] [--repeats 3]
[--out DIR]; prints the table and writes DIR/writes.csv. HTTPFS2_EXTENSION names the build (default build/).
"""

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import workload_data
from bench.worker import connect
from rig import HTTPFS2_EXTENSION, S3Rig, ducklake_extension, httpfs_extension

SOURCE = "read_parquet('{source}')"


@dataclass(frozen=True)
class Workload:
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
        if "PARTITION_BY" in self.copy_options:
            reader = f"read_parquet('{target}/**/*.parquet', hive_partitioning = false)"
        elif "csv" in self.copy_options:
            reader = f"read_csv('{target}')"
        else:
            reader = f"read_parquet('{target}')"
        return con.execute(CHECK.format(reader=reader)).fetchone()


WORKLOADS = {
    "parquet": Workload("FORMAT parquet", "lineitem.parquet"),
    # 'REG AIR' would be written as the key 'l_shipmode=REG%20AIR/...', which httpfs 1.5.5 cannot read back (it sends
    # the '%' unescaped): the space is replaced, the files and their sizes stay.
    "partitioned": Workload(
        "FORMAT parquet, PARTITION_BY (l_shipmode, l_returnflag)",
        "parts",
        "SELECT * REPLACE (replace(l_shipmode, ' ', '_') AS l_shipmode) FROM {src}",
    ),
    "csv": Workload("FORMAT csv", "lineitem.csv", "FROM {src} LIMIT 2000000"),
    "ducklake": Workload(None, "lake"),
}
CHECK = "SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM {reader}"
CONFIGS = ("native", "httpfs2", "local")

# Runs in a fresh process: the COPY timed, CPU and peak RSS of the process, httpfs2's upload stats.
WORKER = """
import json, resource, sys, time
from bench.worker import connect
spec = json.loads(sys.argv[1])
con = connect(spec)
for extension in spec["loads"]:
    con.execute(f"LOAD '{extension}'")
before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
con.execute(spec["sql"])
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
stats = {}
if spec["httpfs2"]:
    cur = con.execute("SELECT * FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'")
    stats = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    stats = {k: v for k, v in stats.items() if k.startswith("upload") or k == "files_uploaded"}
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "vm_hwm_mib": int(hwm) / 1024, "stats": stats}))
"""


def run_write(rig, config: str, sql: str, threads: int) -> dict:
    spec = {
        "httpfs": str(httpfs_extension()),
        "httpfs2": str(HTTPFS2_EXTENSION) if config == "httpfs2" else None,
        "secret_sql": rig.secret_sql(),
        "threads": threads,
        "client": "curl",
        "settings": {"httpfs2_parallel_read_enabled": True} if config == "httpfs2" else {},
        "loads": [str(ducklake_extension())],
        "sql": sql,
    }
    done = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(spec)], capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{config} write failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def remove_prefix(rig, prefix: str):
    """Deletes what a run wrote, so that a whole bench run holds one run's objects at a time."""
    listed = rig.s3.list_objects_v2(Bucket=rig.bucket, Prefix=prefix).get("Contents", [])
    for item in listed:
        rig.s3.delete_object(Bucket=rig.bucket, Key=item["Key"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="lan region far")
    parser.add_argument("--workloads", default=" ".join(WORKLOADS))
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench/results") / time.strftime("writes-%Y%m%d-%H%M%S"))
    parser.add_argument("--report", type=Path, metavar="CSV", help="only print the table of an earlier writes.csv")
    opts = parser.parse_args()
    if opts.report:
        report(opts.report)
        return
    opts.out.mkdir(parents=True, exist_ok=True)
    workload_data.ensure(["tpch-sf1"])
    source = SOURCE.format(source=workload_data.folder("tpch-sf1") / "lineitem.parquet")
    scratch = Path(tempfile.mkdtemp(prefix="httpfs2-writes-"))
    rows = []
    try:
        with S3Rig(bucket="bench") as rig:
            check_con = connect(
                {
                    "httpfs": str(httpfs_extension()),
                    "httpfs2": None,
                    "secret_sql": rig.secret_sql(),
                    "threads": 4,
                    "client": "curl",
                    "settings": {},
                }
            )
            check_con.execute(f"LOAD '{ducklake_extension()}'")
            # What each written dataset must read back as: the same write to a local folder, read the same way.
            expected = {}
            for name in opts.workloads.split():
                folder = scratch / "reference" / name
                folder.mkdir(parents=True)
                workload = WORKLOADS[name]
                target, catalog = str(folder / workload.leaf), folder / "catalog.ducklake"
                check_con.execute(workload.sql(source, target, catalog))
                expected[name] = workload.checksum(check_con, target, catalog)
            run = 0
            for profile in opts.profiles.split():
                for name in opts.workloads.split():
                    workload = WORKLOADS[name]
                    for repeat in range(opts.repeats):
                        for config in CONFIGS:
                            run += 1
                            folder = scratch / f"run{run}"
                            folder.mkdir()
                            catalog = folder / "catalog.ducklake"
                            if config == "local":
                                target = str(folder / workload.leaf)
                            else:
                                target = f"s3://{rig.bucket}/writes/run{run}/{workload.leaf}"
                            rig.set_profile(profile, uploads_too=True)
                            result = run_write(rig, config, workload.sql(source, target, catalog), opts.threads)
                            rig.set_profile("lan")  # read back at LAN speed
                            got = workload.checksum(check_con, target, catalog)
                            if tuple(got) != tuple(expected[name]):
                                raise RuntimeError(f"{config} {name}: read back {got}, expected {expected[name]}")
                            open_uploads = rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads", [])
                            if open_uploads:
                                raise RuntimeError(f"{config} {name}: multipart uploads left open: {open_uploads}")
                            shutil.rmtree(folder)
                            remove_prefix(rig, f"writes/run{run}/")
                            row = dict(
                                profile=profile,
                                workload=name,
                                threads=opts.threads,
                                config=config,
                                repeat=repeat,
                                wall_s=result["wall_s"],
                                cpu_s=result["cpu_s"],
                                vm_hwm_mib=result["vm_hwm_mib"],
                                stats=json.dumps(result["stats"]),
                            )
                            rows.append(row)
                            print(
                                f"[writes] {profile} {name} {config} #{repeat}: {result['wall_s']:.2f} s, "
                                f"cpu {result['cpu_s']:.2f} s, VmHWM {result['vm_hwm_mib']:.0f} MiB {result['stats']}",
                                file=sys.stderr,
                                flush=True,
                            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with open(opts.out / "writes.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(summary(rows))


def summary(rows: list) -> str:
    """Markdown: p50 per (profile, workload) of each config, the ratio native / httpfs2 (a miss under 1.0x in bold),
    MB/s of the bytes httpfs2 uploaded, CPU, peak RSS, the parts and upload memory, and the time in closes."""

    def p50(profile, workload, config, key):
        values = [
            float(r[key]) for r in rows if (r["profile"], r["workload"], r["config"]) == (profile, workload, config)
        ]
        return statistics.median(values) if values else float("nan")

    lines = [
        "| workload | profile | native s | httpfs2 s | local s | ratio | MB/s n / h | CPU s n / h | VmHWM MiB n / h "
        "| parts | upload memory peak MiB | close s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    seen = []
    for r in rows:
        key = (r["profile"], r["workload"])
        if key in seen:
            continue
        seen.append(key)
        n, h, loc = (p50(*key, c, "wall_s") for c in CONFIGS)
        stats = [
            json.loads(x["stats"]) for x in rows if (x["profile"], x["workload"], x["config"]) == (*key, "httpfs2")
        ]
        parts = stats[-1].get("upload_parts", 0) if stats else 0
        megabytes = (stats[-1].get("upload_bytes", 0) if stats else 0) / 1e6
        peak = max((s.get("upload_memory_peak", 0) for s in stats), default=0) / (1 << 20)
        closes = statistics.median(s.get("upload_close_seconds", 0) for s in stats) if stats else 0
        ratio = f"{n / h:.2f}x" if n >= h else f"**{n / h:.2f}x**"
        lines.append(
            f"| {key[1]} | {key[0]} | {n:.2f} | {h:.2f} | {loc:.2f} | {ratio} | "
            f"{megabytes / n:.0f} / {megabytes / h:.0f} | "
            f"{p50(*key, 'native', 'cpu_s'):.2f} / {p50(*key, 'httpfs2', 'cpu_s'):.2f} | "
            f"{p50(*key, 'native', 'vm_hwm_mib'):.0f} / {p50(*key, 'httpfs2', 'vm_hwm_mib'):.0f} "
            f"| {parts} | {peak:.0f} | {closes:.2f} |"
        )
    threads = rows[0]["threads"] if rows else "?"
    header = (
        f"DuckDB threads {threads}, httpfs_client_implementation curl, p50 of each config's runs (fresh processes, "
        "interleaved); profiles: lan 0 ms, region 25 ms + 90 MiB/s, far 80 ms + 40 MiB/s per connection, the cap on "
        "both directions; ratio = native s / httpfs2 s"
    )
    return header + "\n\n" + "\n".join(lines)


def report(csv_path: Path):
    """The table of an earlier run's writes.csv."""
    with open(csv_path, newline="") as f:
        print(summary(list(csv.DictReader(f))))


if __name__ == "__main__":
    main()
