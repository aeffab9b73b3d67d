"""Carries out a workloads suite (bench/suites.py Workloads; issue 9): real queries under a network like object
storage, native vs httpfs2, with the same queries on local files as the floor.

For each network profile, repeat, workload, file cache, client, DuckDB thread count and configuration, in that
nesting (the configurations of one point run back to back, so load drifts hit them alike), one fresh worker.
Requests are counted from versitygw's access log and bytes from toxiproxy's rchar, both from the worker's timer
start until the worker has exited and the log and the counter have stopped moving.
"""

import contextlib
import json
import os
import sys
import time
from datetime import datetime

from bench import data
from bench.child import run_worker
from bench.workloads import WORKLOADS, reference_answers
from rig import S3Rig
from rig.s3rig import PROFILES, count_requests, read_bytes

MiB = 1 << 20
SETTLE_S = 0.3  # the access log and rchar must stay unchanged this long after the worker exits
SETTLE_MAX_S = 5.0


def settled(rig) -> tuple:
    """(access log size, toxiproxy rchar) once both have stopped moving."""
    last, since, deadline = None, time.monotonic(), time.monotonic() + SETTLE_MAX_S
    while True:
        now = (os.path.getsize(rig.access_log_path), read_bytes(rig.toxiproxy.pid))
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= SETTLE_S or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def rig_cpu_since(rig, cpu_before: dict) -> dict:
    """The servers' CPU seconds since rig.server_cpu_seconds() gave `cpu_before`, as results.csv names them."""
    cpu_after = rig.server_cpu_seconds()
    return dict(
        server_cpu_s=cpu_after["versitygw"] - cpu_before["versitygw"],
        proxy_cpu_s=cpu_after["toxiproxy"] - cpu_before["toxiproxy"],
    )


def rig_usage(rig, log_offset: int, rchar: int, cpu_before: dict) -> dict:
    """What the rig saw since the access log's log_offset, toxiproxy's rchar and the servers' cpu_before, once the log
    and the counter have settled: requests by operation, bytes through the proxy, the servers' CPU seconds."""
    log_end, rchar_end = settled(rig)
    requests = count_requests(rig.access_log_path, log_offset)
    return dict(
        rig_cpu_since(rig, cpu_before),
        requests=sum(requests.values()),
        get_requests=requests.get("GetObject", 0),
        head_requests=requests.get("HeadObject", 0),
        list_requests=requests.get("ListObjectsV2", 0),
        fetched_bytes=rchar_end - rchar,
    )


def prepare(run, rig, workloads, upload=True) -> dict:
    """Generates (once per machine) and uploads the data (unless not `upload`: the suite writes its own); returns the
    reference answers of each workload."""
    start = time.monotonic()
    datasets = [w.dataset for w in workloads]
    data.ensure(datasets)
    if upload:
        data.upload(rig, datasets)
    run.save_meta(
        datasets={n: {"bytes": data.data_bytes(n), "files": len(data.files(n))} for n in dict.fromkeys(datasets)}
    )
    answers = {w.name: reference_answers(w) for w in workloads}
    print(f"[bench] data ready in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    return answers


def worker_spec(run, rig, row: dict, w, config, expect: list, base=None, load=(), spec_extra=None) -> dict:
    """What a worker running w under config is given (measure says what the arguments are)."""
    base = base or (str(data.CACHE) if config.local else f"s3://{rig.bucket}")
    extensions = run.extensions(config)
    return {
        "load": extensions[:1] + list(load) + extensions[1:],
        "file_cache": row["file_cache"],
        "threads": row["duckdb_threads"],
        "client": row["client"],
        "secret_sql": rig.secret_sql(),
        "settings": config.duckdb_settings | (config.settings or {}),
        "setup": list(w.setup_sql(base)),
        "steps": [
            {"name": f"{w.name} query {n}", "sql": sql, "expect": rows}
            for n, (sql, rows) in enumerate(zip(w.sql(base), expect, strict=True), 1)
        ],
        "watch": {"access_log": str(rig.access_log_path), "proxy_pid": rig.toxiproxy.pid},
    } | (spec_extra or {})


def measure(
    run, rig, row: dict, w, config, expect: list, timeout: float, base=None, load=(), watch=None, spec_extra=None
):
    """One fresh worker running w under config; writes its row. base: where `{base}` points (default: the cached data
    for `local`, else the bucket); load: extensions LOADed after httpfs and before httpfs2; watch: a context manager
    around the worker, given the row to add to (bench/connections.py); spec_extra: worker spec keys over these
    (bench/pressure_bench.py: the secret on its proxy, a rotation, keep_going)."""
    spec = worker_spec(run, rig, row, w, config, expect, base, load, spec_extra)
    cpu_before = rig.server_cpu_seconds()
    with watch(row) if watch else contextlib.nullcontext():
        result = run_worker(spec, timeout, f"{w.name} {config.name}", run.out / "worker-spec.json", run.python(config))
    stats = result["stats"]
    row.update(
        rig_usage(rig, result["log_offset"], result["proxy_rchar"], cpu_before),
        timestamp=datetime.now().isoformat(timespec="seconds"),
        wall_s=result["wall_s"],
        client_cpu_s=result["client_cpu_s"],
        client_sys_s=result["client_sys_s"],
        vm_hwm_mib=result["vm_hwm_mib"],
        read_ahead_memory_peak=stats.get("read_ahead_memory_peak", ""),
        loadavg_1m=os.getloadavg()[0],
        query_s=json.dumps([round(s["wall_s"], 4) for s in result["steps"]]),
        settings=json.dumps(spec["settings"]),
        h2_stats=json.dumps(stats) if stats else "",
        error="; ".join(s["error"] for s in result["steps"] if s.get("error")),
    )
    run.results.write(row)
    print(
        f"[bench] {row['profile']} {row['client']} t={row['duckdb_threads']}"
        f"{' file-cache' if row['file_cache'] else ''} {w.name} {config.name} #{row['repeat']}: "
        f"{row['wall_s']:.2f} s, cpu {row['client_cpu_s']:.2f} s, {row['requests']} requests, "
        f"{row['fetched_bytes'] / MiB:.1f} MiB",
        file=sys.stderr,
        flush=True,
    )


def run(suite, run):
    workloads = [WORKLOADS[w] for w in run.pick("workloads", suite.workloads, WORKLOADS)]
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    threads = run.numbers("threads", suite.threads)
    clients = run.pick("clients", suite.clients, ("curl", "httplib"))
    file_cache = [v == "on" for v in run.pick("file_cache", ["off"], ("off", "on"))]
    configs = run.configs(suite.configs)
    timeout = run.timeout(suite)
    run.save_meta(configs={c.name: c.settings for c in configs}, profiles={p: vars(PROFILES[p]) for p in profiles})
    with S3Rig(access_log=True) as rig:  # the access log counts each worker's requests
        expect = prepare(run, rig, workloads)
        for profile_name in profiles:
            profile = rig.set_profile(profile_name)
            for repeat in range(max(suite.repeats(w.name, run.opts.repeats) for w in workloads)):
                for w in workloads:
                    if repeat >= suite.repeats(w.name, run.opts.repeats):
                        continue
                    for cache, client, t, config in (
                        (f, c, t, k) for f in file_cache for c in clients for t in threads for k in configs
                    ):
                        row = {
                            "suite": run.name,
                            "kind": "workload",
                            "workload": w.name,
                            "profile": profile_name,
                            "latency_ms": profile.latency_ms,
                            "bandwidth_kbs": profile.bandwidth_kbs or "",
                            "file_cache": cache,
                            "client": client,
                            "duckdb_threads": t,
                            "repeat": repeat,
                            "engine": config.engine,
                            "duckdb_version": config.duckdb,
                            "config": config.name,
                        }
                        measure(run, rig, row, w, config, expect[w.name], timeout)
