"""Carries out the warm suite (issue 44, item 5): httpfs2's block cache on local disk under a network like object
storage. For each profile, repeat and workload, in that nesting, fresh workers one after another (interleaved, so load
drifts hit the configurations alike): native httpfs, httpfs2 without the cache, httpfs2 with an empty cache (cold: it
fills it), httpfs2 with the cache that cold run left (warm: a fresh process), the same with a trust window
(httpfs2_cache_trust_seconds: the versions that cold run learnt used with no request), and the same query on local
files; then two fresh workers at once on an empty cache (PAIR: both answers checked, the requests and bytes of both
together against one cold run's, the cache's bytes on disk after against its bound).
Each run is bench/workload_bench.py's measure (requests from versitygw's access log, bytes through toxiproxy,
httpfs2_stats()); every answer is checked. The summary printed is the p50 per configuration with the cold and warm
runs beside httpfs2 without the cache and local. Rows are of kind `warm` in results.csv.
"""

import json
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.configs import CONFIGS, Config
from bench.report_common import fmt, p50, table

NO_CACHE = "httpfs2"
COLD, WARM, TRUSTED = "httpfs2 cache cold", "httpfs2 cache warm", "httpfs2 cache trusted"
PAIR = "httpfs2 cache cold x2"
MiB = 1 << 20


def cache_config(name: str, directory: Path) -> Config:
    """httpfs2 with its defaults and the block cache on in `directory` (trusting what it learnt for an hour, for
    TRUSTED)."""
    settings = dict(CONFIGS[NO_CACHE].settings)
    settings.update(httpfs2_cache_enabled=True, httpfs2_cache_directory=str(directory))
    if name == TRUSTED:
        settings.update(httpfs2_cache_trust_seconds=3600)
    return Config(name, settings)


def empty_cache(directory: Path, trash: Path):
    """Leaves `directory` empty for a cold run by moving what it holds into `trash`, removed once the suite ends: on an
    ext4 without a journal (this rig's disk) every file made in the minute after thousands were removed is slower
    (its allocator passes over recently freed inodes), which a cold run right after a removal would pay and a user's
    first run does not."""
    if directory.exists():
        directory.rename(trash / f"{len(list(trash.iterdir()))}")
    directory.mkdir()


def held_bytes(directory: Path) -> int:
    """The bytes of the files under the cache's directory, as its bound counts them."""
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def measure_pair(run, rig, row: dict, w, config, expect: list, timeout: float, directory: Path):
    """Two fresh workers running w under config at once, on one cache directory; writes one row for both: the
    longer wall time, both CPUs, the requests and bytes the rig saw from both (each block fetched once: about one
    cold run's), and in h2_stats both workers' httpfs2_stats() with the cache's bytes on disk after. A wrong answer
    stops the run (the worker checks it)."""
    from bench.child import run_worker
    from bench.workload_bench import rig_usage, worker_spec

    spec = worker_spec(run, rig, row, w, config, expect)
    cpu_before = rig.server_cpu_seconds()
    with ThreadPoolExecutor(2) as pool:
        started = [
            pool.submit(run_worker, spec, timeout, f"{w.name} {config.name} #{n}", None, run.python(config))
            for n in (1, 2)
        ]
        results = [f.result() for f in started]
    log_offset = min(r["log_offset"] for r in results)
    rchar = min(r["proxy_rchar"] for r in results)
    held = held_bytes(directory)
    bound = int(config.settings.get("httpfs2_cache_max_bytes", 4 << 30))
    row.update(
        rig_usage(rig, log_offset, rchar, cpu_before),
        wall_s=max(r["wall_s"] for r in results),
        client_cpu_s=sum(r["client_cpu_s"] for r in results),
        settings=json.dumps(spec["settings"]),
        h2_stats=json.dumps({"workers": [r["stats"] for r in results], "cache_held_bytes": held}),
    )
    run.results.write(row)
    print(
        f"[bench] {row['profile']} {w.name} {config.name} #{row['repeat']}: {row['wall_s']:.2f} s, "
        f"{row['requests']} requests, {row['fetched_bytes'] / MiB:.1f} MiB for both; cache {held / MiB:.1f} MiB on "
        f"disk (bound {bound / MiB:.0f} MiB)",
        file=sys.stderr,
        flush=True,
    )


def profile_columns(name: str, profile) -> dict:
    return {"profile": name, "latency_ms": profile.latency_ms, "bandwidth_kbs": profile.bandwidth_kbs or ""}


def summary(rows: list) -> str:
    """Per workload: the p50 seconds, requests and MiB fetched of each configuration, and cold and warm against
    httpfs2 without the cache."""
    lines = []
    for workload in dict.fromkeys(r["workload"] for r in rows):
        by_config = {}
        for row in (r for r in rows if r["workload"] == workload):
            by_config.setdefault(row["config"], []).append(row)
        base = p50(by_config.get(NO_CACHE, []), "wall_s")
        cells = []
        for config, measured in by_config.items():
            seconds = p50(measured, "wall_s")
            ratio = seconds / base if seconds is not None and base else None
            runs = " ".join(f"{r['wall_s']:.2f}" for r in measured)
            mib = p50(measured, "fetched_bytes")
            cells.append(
                [
                    config,
                    fmt(seconds, ".2f"),
                    runs,
                    fmt(ratio, ".2f", "x"),
                    fmt(p50(measured, "requests"), ".0f"),
                    fmt(mib and mib / (1 << 20), ".1f"),
                ]
            )
        lines += [f"\n{workload} ({rows[0]['profile']}, p50 of {len(by_config.get(NO_CACHE, []))})", ""]
        lines.append(table(["config", "p50 s", "runs s", "vs no cache", "requests", "MiB fetched"], cells))
    return "\n".join(lines)


def run_suite(suite, run):
    from bench.workload_bench import measure, prepare
    from bench.workloads import WORKLOADS
    from rig import S3Rig
    from rig.s3rig import PROFILES

    workloads = [WORKLOADS[w] for w in run.pick("workloads", suite.workloads, WORKLOADS)]
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    threads = run.numbers("threads", suite.threads)
    clients = run.pick("clients", suite.clients, ("curl", "httplib"))
    names = run.pick("configs", suite.configs, suite.configs)
    timeout = run.timeout(suite)
    directory = Path(tempfile.mkdtemp(prefix="httpfs2-warm-cache-"))
    trash = Path(tempfile.mkdtemp(prefix="httpfs2-warm-cache-trash-"))
    known = dict(CONFIGS, **{name: cache_config(name, directory) for name in (COLD, WARM, TRUSTED)})
    known[PAIR] = Config(PAIR, cache_config(COLD, directory).settings)
    configs = [run.resolve(known[name]) for name in names]
    run.save_meta(configs={c.name: c.settings for c in configs}, profiles={p: vars(PROFILES[p]) for p in profiles})
    rows = []
    try:
        with S3Rig(access_log=True) as rig:
            expect = prepare(run, rig, workloads)
            for profile_name in profiles:
                profile = rig.set_profile(profile_name)
                for repeat in range(run.opts.repeats):
                    for w in workloads:
                        for client, t in ((c, t) for c in clients for t in threads):
                            point = dict(
                                profile_columns(profile_name, profile), suite=run.name, kind="warm", workload=w.name
                            )
                            point.update(file_cache=False, client=client, duckdb_threads=t)
                            for config in configs:
                                if config.name in (COLD, PAIR):
                                    empty_cache(directory, trash)
                                row = dict(point, repeat=repeat, engine=config.engine, config=config.name)
                                if config.name == PAIR:
                                    measure_pair(run, rig, row, w, config, expect[w.name], timeout, directory)
                                else:
                                    measure(run, rig, row, w, config, expect[w.name], timeout)
                                rows.append(row)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(trash, ignore_errors=True)
    report = summary(rows)
    (run.out / "warm.md").write_text(report + "\n")
    print(report, file=sys.stderr, flush=True)
