"""Carries out a blob sweep (bench/suites.py BlobSweep): per latency and repeat, curl's ceiling, then every client,
configuration and DuckDB thread count reading the random blob (and the parquet files), each a fresh worker.

A latency of 'direct' reads versitygw without the proxy; a number goes through toxiproxy with that latency toxic
(0 included, which is faster and fairer than no toxic at all). Any failed or wrong read stops the run.
"""

import json
import os
import sys
from dataclasses import replace
from datetime import datetime

from bench import ceiling, data, plot
from bench.child import run_worker
from bench.configs import points
from rig import S3Rig

MiB = 1 << 20
# httpfs2_stats() columns -> results.csv columns
STATS = {
    "reads": "reads",
    "reads_split": "reads_split",
    "sub_reads": "sub_reads",
    "sub_read_seconds": "sub_read_s",
    "in_flight_peak": "in_flight_peak",
}


def measure(run, rig, row: dict, nbytes: int, measurement):
    """Runs measurement(), adds the rig's CPU over it and the common columns, writes the row."""
    before = rig.server_cpu_seconds()
    result = measurement()
    after = rig.server_cpu_seconds()
    row.update(
        result,
        suite=run.name,
        kind="blob",
        timestamp=datetime.now().isoformat(timespec="seconds"),
        bytes=nbytes,
        mib_s=nbytes / MiB / result["wall_s"],
        loadavg_1m=os.getloadavg()[0],
        server_cpu_s=after["versitygw"] - before["versitygw"],
        proxy_cpu_s=after["toxiproxy"] - before["toxiproxy"],
    )
    run.results.write(row)
    print(
        f"[bench] {row['latency_ms']:g} ms {row['path']} {row['client']} t={row['duckdb_threads']} "
        f"{row['workload']} {row['config']} #{row['repeat']}: {row['mib_s']:.0f} MiB/s, "
        f"cpu {row['client_cpu_s']:.2f} s",
        file=sys.stderr,
        flush=True,
    )


def curl_point(run, rig, blob, endpoint: str, row: dict, streams: int, timeout: float):
    row.update(
        engine="curl-cli",
        config=f"curl {streams}x{blob.bytes // streams // MiB}MiB",
        workload="blob",
        client="-",
        duckdb_threads="",
        ceiling_streams=streams,
    )
    measure(run, rig, row, blob.bytes, lambda: ceiling.measure(rig, endpoint, blob.key, blob.bytes, streams, timeout))


def duckdb_point(run, rig, objects, endpoint: str, config, row: dict, timeout: float):
    row.update(engine=config.engine, config=config.name, settings=json.dumps(config.settings or {}))
    spec = {
        "load": run.extensions(config),
        "file_cache": False,  # repeat reads must come from the network, not from DuckDB's in-memory copy
        "threads": row["duckdb_threads"],
        "client": row["client"],
        "secret_sql": rig.secret_sql(endpoint),
        "settings": config.settings or {},
        "steps": [{"name": row["workload"], "sql": objects.sql, "expect": objects.expect}],
    }

    def worker():
        result = run_worker(spec, timeout, f"{row['workload']} {config.name}", run.out / "worker-spec.json")
        stats = {column: result["stats"][name] for name, column in STATS.items() if name in result["stats"]}
        return dict(stats, **{k: result[k] for k in ("wall_s", "client_cpu_s", "client_sys_s")})

    measure(run, rig, row, objects.bytes, worker)


def endpoints(run, rig):
    """(where, endpoint) per --latencies token, with the proxy's latency set as the loop reaches it."""
    for token in run.pick("latencies", ("0", "50")):
        if token == "direct":
            yield {"path": "direct", "latency_ms": 0}, rig.direct_endpoint
        else:
            rig.set_latency(int(token))
            yield {"path": "proxy", "latency_ms": int(token)}, rig.proxy_endpoint


def run(suite, run):
    threads = run.numbers("threads", suite.threads)
    clients = run.pick("clients", suite.clients, ("curl", "httplib"))
    timeout = run.timeout(suite)
    blob_points = points(*run.configs(())) if run.opts.configs else suite.blob
    plan = {
        workload: [replace(p, config=run.resolve(p.config)) for p in pts]
        for workload, pts in (("blob", blob_points), ("parquet", suite.parquet))
    }
    with S3Rig() as rig:
        objects = {"blob": data.blob(rig, run.opts.size_mib)}
        if plan["parquet"]:
            objects["parquet"] = data.parquet(rig, run.opts.size_mib)
        run.save_meta(datasets={k: vars(v) for k, v in objects.items()})
        for where, endpoint in endpoints(run, rig):
            for repeat in range(run.opts.repeats):
                for streams in suite.ceiling:
                    curl_point(run, rig, objects["blob"], endpoint, dict(where, repeat=repeat), streams, timeout)
                for workload, pts in plan.items():
                    for client, p in ((c, p) for c in clients for p in pts):
                        if p.latencies and (where["path"] == "direct" or where["latency_ms"] not in p.latencies):
                            continue
                        for t in p.threads or threads:
                            row = dict(where, repeat=repeat, workload=workload, client=client, duckdb_threads=t)
                            duckdb_point(run, rig, objects[workload], endpoint, p.config, row, timeout)
    plot.write(run.results.path, run.out / "plot.png")
