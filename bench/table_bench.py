"""Carries out a tables suite (bench/suites.py Tables; issue 32): scans of Iceberg, Delta and DuckLake tables that
their own libraries wrote to the rig (bench/tables.py), through the catalog's reader and through read_parquet of the
same data files, native vs httpfs2, with the files read from versitygw's own folder as the `local` floor.

For each profile, repeat, scan, client, DuckDB thread count and configuration, in that nesting, one fresh worker
(bench/workload_bench.py measure: requests from versitygw's access log, bytes through toxiproxy, httpfs2_stats()),
plus the connections the worker opened to the proxy. Every answer must equal the one DuckDB gives from the cached
local parquet files (the projection's, or TPC-H's).
"""

import shutil
import tempfile
from pathlib import Path

from bench import connections, data, tables
from bench.workload_bench import measure, prepare
from bench.workloads import WORKLOADS
from rig import S3Rig
from rig.s3rig import PROFILES


def run(suite, run):
    names = run.pick("workloads", suite.tables, tables.BUILDERS)
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    threads = run.numbers("threads", suite.threads)
    clients = run.pick("clients", suite.clients, ("curl", "httplib"))
    configs = run.configs(suite.configs)
    timeout = run.timeout(suite)
    run.save_meta(configs={c.name: c.settings for c in configs}, profiles={p: vars(PROFILES[p]) for p in profiles})
    data.ensure(["tpch-sf1"])
    scratch = Path(tempfile.mkdtemp(prefix="httpfs2-tables-"))
    try:
        with S3Rig(access_log=True) as rig:
            built = tables.build(rig, names, scratch)
            run.save_meta(tables=tables.describe(built))
            scans = [s for t in built for s in t.scans]
            references = {s.reference for s in scans if s.reference}
            answers = prepare(run, rig, [WORKLOADS[r] for r in sorted(references)], upload=False)
            for profile_name in profiles:
                profile = rig.set_profile(profile_name)
                for repeat in range(run.opts.repeats):
                    for scan in scans:
                        expect = answers[scan.reference] if scan.reference else scan.expect
                        for client, t, config in ((c, t, k) for c in clients for t in threads for k in configs):
                            if config.local and not scan.local:
                                continue
                            row = {
                                "suite": run.name,
                                "kind": "table",
                                "workload": scan.workload.name,
                                "profile": profile_name,
                                "latency_ms": profile.latency_ms,
                                "bandwidth_kbs": profile.bandwidth_kbs or "",
                                "file_cache": False,
                                "client": client,
                                "duckdb_threads": t,
                                "repeat": repeat,
                                "engine": config.engine,
                                "config": config.name,
                            }
                            base = str(rig.bucket_folder) if config.local else None
                            watch = connections.watch(rig)
                            measure(run, rig, row, scan.workload, config, expect, timeout, base, scan.load, watch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
