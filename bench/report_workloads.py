"""The workload suites' tables (bench/report.py): per workload and network profile, native vs each httpfs2
configuration (p50 over repeats) with issue 9's targets beside the measured ratios; then TPC-H per query.
"""

import json
from statistics import median

from bench.report_common import fmt, p50, table
from bench.workloads import bytes_target, cpu_target, speed_target

MiB = 1 << 20
GROUP = ("workload", "profile", "file_cache", "client", "duckdb_threads")


def _where(row) -> str:
    return row["profile"] + (" +file cache" if row["file_cache"] == "True" else "")


def _verdict(value, target, at_least: bool) -> str:
    if target is None or value is None:
        return ""
    ok = value >= target if at_least else value <= target
    return f"{'>=' if at_least else '<='} {target:g}x: {'yes' if ok else 'NO'}"


def _speed_verdict(ratio, target, native_s, local_s) -> str:
    """The speed verdict; a miss whose target time (native s / target) is under the same query on local files says
    so: no remote read reaches it at these threads."""
    verdict = _verdict(ratio, target, True)
    if verdict.endswith("NO") and local_s and native_s / target < local_s:
        verdict += f" (needs {native_s / target:.2f} s < local)"
    return verdict


def _rig_cpu(rows):
    """p50 CPU seconds the rig's servers (versitygw + toxiproxy) spent during the runs: the same cores as DuckDB."""
    values = [r["server_cpu_s"] + r["proxy_cpu_s"] for r in rows if r.get("server_cpu_s") not in ("", None)]
    return median(values) if values else None


def config_groups(rows) -> dict:
    """(workload, profile, file_cache, client, threads) -> {config: [rows]}, in the order first measured."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in GROUP), {}).setdefault(row["config"], []).append(row)
    return groups


def comparison_rows(rows) -> list:
    out = []
    for key, by_config in config_groups(rows).items():
        workload, profile, file_cache, client, threads = key
        native = by_config.get("native", [])
        n_s, n_cpu = p50(native, "wall_s"), p50(native, "client_cpu_s")
        n_req, n_bytes = p50(native, "requests"), p50(native, "fetched_bytes")
        local_s = p50(by_config.get("local", []), "wall_s")
        others = [c for c in by_config if c not in ("native", "local")] or [None]
        for config in others:
            h = by_config.get(config, [])
            h_s, h_bytes, h_cpu = p50(h, "wall_s"), p50(h, "fetched_bytes"), p50(h, "client_cpu_s")
            ratio = n_s / h_s if n_s and h_s else None
            cpu_ratio = h_cpu / n_cpu if n_cpu and h_cpu else None
            bytes_ratio = h_bytes / n_bytes if n_bytes and h_bytes else None
            peak = p50(h, "read_ahead_memory_peak")
            out.append(
                [
                    workload,
                    _where(native[0] if native else h[0]),
                    f"{threads:g}",
                    client,
                    config or "-",
                    f"{len(native)}/{len(h)}",
                    fmt(n_s, ".2f"),
                    fmt(h_s, ".2f"),
                    fmt(local_s, ".2f"),
                    fmt(ratio, ".2f", "x"),
                    _speed_verdict(ratio, speed_target(profile, workload, file_cache == "True", threads), n_s, local_s),
                    fmt(n_cpu, ".2f"),
                    fmt(h_cpu, ".2f"),
                    fmt(cpu_ratio, ".2f", "x"),
                    _verdict(cpu_ratio, cpu_target(profile), False),
                    fmt(_rig_cpu(h), ".2f"),
                    fmt(n_req, ".0f"),
                    fmt(p50(h, "requests"), ".0f"),
                    fmt(n_bytes and n_bytes / MiB, ".1f"),
                    fmt(h_bytes and h_bytes / MiB, ".1f"),
                    fmt(bytes_ratio, ".2f", "x"),
                    _verdict(bytes_ratio, bytes_target(profile, workload, threads), False),
                    fmt(peak and peak / MiB, ".1f"),
                ]
            )
    return out


HEADERS = [
    "Workload",
    "Profile",
    "Threads",
    "Client",
    "httpfs2 config",
    "runs n/h",
    "native s",
    "httpfs2 s",
    "local s",
    "ratio",
    "target",
    "CPU s native",
    "CPU s httpfs2",
    "CPU ratio",
    "CPU target",
    "rig CPU s httpfs2",
    "requests native",
    "requests httpfs2",
    "MiB native",
    "MiB httpfs2",
    "bytes ratio",
    "bytes target",
    "read-ahead peak MiB",
]


def tpch_rows(rows, workload="tpch-22") -> tuple:
    """Per TPC-H query, p50 seconds of each (profile, config) of the workload."""
    tpch = [r for r in rows if r["workload"] == workload]
    columns = list(dict.fromkeys((_where(r), r["client"], r["duckdb_threads"], r["config"]) for r in tpch))
    if not columns:
        return [], []
    per = {
        c: [json.loads(r["query_s"]) for r in tpch if (_where(r), r["client"], r["duckdb_threads"], r["config"]) == c]
        for c in columns
    }
    headers = ["Query"] + [f"{w} t={t:g} {config}" for w, _, t, config in columns]
    body = [[f"Q{n + 1:02d}"] + [f"{median(run[n] for run in per[c]):.2f}" for c in columns] for n in range(22)]
    return headers, body


def summarize(rows, notes=()) -> list:
    out = [
        "### Workloads: native vs httpfs2, p50 seconds over repeats (ratio = native s / httpfs2 s; local s = the "
        "same query on the local files, no network; CPU = the DuckDB process; rig CPU = versitygw + toxiproxy during "
        "the httpfs2 runs, on the same cores; requests from versitygw's access log; MiB through toxiproxy)",
        "",
        table(HEADERS, comparison_rows(rows)),
        "",
    ]
    headers, body = tpch_rows(rows)
    if body:
        out += ["### TPC-H SF1, p50 seconds per query", "", table(headers, body), ""]
    if notes:
        out += ["Notes:", ""] + [f"- {n}" for n in notes] + [""]
    return out
