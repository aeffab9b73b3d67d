"""The tables suites' tables (bench/report.py): per scan of an Iceberg, Delta or DuckLake table (or of its data files
through read_parquet), profile, threads and client, one row per configuration, p50 over repeats, with httpfs2's
read-ahead and version requests; Delta's share of time in delta-kernel's log reads; TPC-H per query.
"""

import json

from bench.report_common import fmt, p50, table
from bench.report_workloads import config_groups, tpch_rows

MB = 1e6
KB_PER_MIB = (1 << 20) / 1000


def profile_text(row) -> str:
    """A profile with what it adds: `region 25 ms 87.9 MiB/s`."""
    rate = row.get("bandwidth_kbs")
    bandwidth = f" {rate / KB_PER_MIB:.1f} MiB/s" if rate not in ("", None) else ""
    connections = row.get("rig_connections")
    mode = f", {connections}" if connections not in ("", None, "plain") else ""
    return f"{row['profile']} {row['latency_ms']:g} ms{bandwidth}{mode}"


def h2_p50(rows, name):
    """p50 of one httpfs2_stats() column over the rows that have it (native and local rows have none)."""
    stats = [json.loads(r["h2_stats"]) for r in rows if r.get("h2_stats")]
    values = [s[name] for s in stats if name in s]
    return sorted(values)[len(values) // 2] if values else None


def _requests(rows) -> str:
    parts = [p50(rows, c) for c in ("get_requests", "head_requests", "list_requests")]
    return "" if parts[0] is None else "/".join(f"{p:.0f}" for p in parts)


# The columns after the timings, in both this table and the peers' (bench/report_peers.py).
USAGE_HEADERS = ["CPU s", "requests", "connections", "peak open", "read_ahead_requests", "version_requests"]


def usage_cells(runs, requests: str) -> list:
    """p50 of the client's CPU, then `requests` as given, connections to the proxy (distinct, most open at once) and
    httpfs2's read-ahead and version requests."""
    return [
        fmt(p50(runs, "client_cpu_s"), ".2f"),
        requests,
        fmt(p50(runs, "connections"), ".0f"),
        fmt(p50(runs, "connections_peak"), ".0f"),
        fmt(h2_p50(runs, "read_ahead_requests"), ".0f"),
        fmt(h2_p50(runs, "version_requests"), ".0f"),
    ]


def comparison_rows(rows) -> list:
    out = []
    for (workload, _, _, client, threads), by_config in config_groups(rows).items():
        native_s = p50(by_config.get("native", []), "wall_s")
        for config, runs in by_config.items():
            seconds, fetched = p50(runs, "wall_s"), p50(runs, "fetched_bytes")
            out.append(
                [
                    workload,
                    profile_text(runs[0]),
                    f"{threads:g}",
                    client,
                    config,
                    len(runs),
                    fmt(seconds, ".2f"),
                    fmt(native_s / seconds if native_s and seconds else None, ".2f", "x"),
                    fmt(fetched / MB / seconds if fetched and seconds else None, ".0f"),
                    *usage_cells(runs, _requests(runs) if config != "local" else ""),
                ]
            )
    return out


HEADERS = ["Scan", "Profile", "Threads", "httpfs_client_implementation", "Config", "runs", "p50 s"]
HEADERS += ["native / this", "MB/s", *USAGE_HEADERS]


def delta_log_lines(rows) -> list:
    """How much of a delta_scan is delta-kernel reading _delta_log (the `delta log` scan reads the log alone)."""
    lines = []
    for (workload, _, _, client, threads), by_config in config_groups(rows).items():
        if workload != "delta log":
            continue
        for config, runs in by_config.items():
            scans = [
                r
                for r in rows
                if (r["workload"], r["profile"], r["client"], r["duckdb_threads"], r["config"])
                == ("delta", runs[0]["profile"], client, threads, config)
            ]
            log_s, scan_s = p50(runs, "wall_s"), p50(scans, "wall_s")
            if log_s and scan_s:
                lines.append(
                    f"- {profile_text(runs[0])}, threads {threads:g}, {config}: the log alone {log_s:.2f} s of "
                    f"delta_scan's {scan_s:.2f} s ({100 * log_s / scan_s:.0f}%), {_requests(runs)} GET/HEAD/LIST"
                )
    if not lines:
        return []
    return [
        "Delta: delta-kernel's own _delta_log reads (a delta_scan whose filter skips every data file: LIST and GETs "
        "of the log over the kernel's own connections, outside httpfs; p50 s):",
        "",
        *lines,
        "",
    ]


def summarize(rows) -> list:
    out = [
        "### Tables: catalog scans and read_parquet of the same data files, p50 s over repeats (native / this = "
        "native s / this s; MB/s = bytes through toxiproxy / s; CPU = the DuckDB process; requests from versitygw's "
        "access log as GET/HEAD/LIST; connections to the proxy, distinct and most open at once (bench/connections.py); "
        "read_ahead_requests and version_requests from httpfs2_stats(); local = the same data files read from "
        "versitygw's folder)",
        "",
        table(HEADERS, comparison_rows(rows)),
        "",
    ]
    out += delta_log_lines(rows)
    for workload in dict.fromkeys(r["workload"] for r in rows if "tpch-22" in r["workload"]):
        headers, body = tpch_rows(rows, workload)
        out += [f"### {workload}, p50 seconds per query", "", table(headers, body), ""]
    return out
