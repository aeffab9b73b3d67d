"""Carries out the warm suite (issue 44, item 5): httpfs2's block cache on local disk under a network like object
storage. For each profile, repeat and workload, in that nesting, fresh workers one after another (interleaved, so load
drifts hit the configurations alike): native httpfs, httpfs2 without the cache, httpfs2 with an empty cache (cold: it
fills it), httpfs2 with the cache that cold run left (warm: a fresh process), the same with a trust window
(httpfs2_cache_trust_seconds: the versions that cold run learnt used with no request), and the same query on local
files.
Each run is bench/workload_bench.py's measure (requests from versitygw's access log, bytes through toxiproxy,
httpfs2_stats()); every answer is checked. The summary printed is the p50 per configuration with the cold and warm
runs beside httpfs2 without the cache and local. Rows are of kind `warm` in results.csv.
"""

import shutil
import sys
import tempfile
from pathlib import Path

from bench.configs import CONFIGS, Config
from bench.report_common import fmt, p50, table

NO_CACHE = "httpfs2"
COLD, WARM, TRUSTED = "httpfs2 cache cold", "httpfs2 cache warm", "httpfs2 cache trusted"


def cache_config(name: str, directory: Path) -> Config:
    """httpfs2 with its defaults and the block cache on in `directory` (trusting what it learnt for an hour, for
    TRUSTED)."""
    settings = dict(CONFIGS[NO_CACHE].settings)
    settings.update(httpfs2_cache_enabled=True, httpfs2_cache_directory=str(directory))
    if name == TRUSTED:
        settings.update(httpfs2_cache_trust_seconds=3600)
    return Config(name, settings)


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
    known = dict(CONFIGS, **{name: cache_config(name, directory) for name in (COLD, WARM, TRUSTED)})
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
                                if config.name == COLD:
                                    shutil.rmtree(directory, ignore_errors=True)  # an empty cache
                                row = dict(point, repeat=repeat, engine=config.engine, config=config.name)
                                measure(run, rig, row, w, config, expect[w.name], timeout)
                                rows.append(row)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    report = summary(rows)
    (run.out / "warm.md").write_text(report + "\n")
    print(report, file=sys.stderr, flush=True)
