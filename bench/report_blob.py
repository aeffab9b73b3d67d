"""The blob sweeps' tables (bench/report.py): per latency and client, the best p50 MiB/s of each configuration,
p50 per DuckDB thread count, the ceiling; with --compare also httpfs2 vs native (% delta), % of ceiling and where
the CPU goes.
"""

from bench.aggregate import ceilings, points
from bench.report_common import table


def where(path, latency_ms) -> str:
    return "direct to versitygw (no proxy)" if path == "direct" else f"{latency_ms:g} ms latency via toxiproxy"


def mib(value) -> str:
    return f"{value:,.0f}"


def threads(value) -> str:
    return f"{value:g}"


def pct(value) -> str:
    return f"{value:+.0f}%"


def spread(p) -> str:
    return f"{mib(p.lo)}-{mib(p.hi)}"


def ceiling_section(pts) -> list:
    out = []
    for path, latency in ceilings(pts):
        rows = [
            (
                p.config,
                mib(p.p50),
                spread(p),
                p.n,
                f"{p.cpu_gib:.2f}",
                f"{p.proxy_gib:.2f}",
                f"{p.server_gib:.2f}",
                f"{p.all_gib:.2f}",
            )
            for p in pts
            if p.engine == "curl-cli" and (p.path, p.latency_ms) == (path, latency)
        ]
        out += [
            f"### Ceiling (curl CLI, parallel ranged GETs; no DuckDB), {where(path, latency)}",
            "",
            table(
                [
                    "Streams x range",
                    "p50 MiB/s",
                    "min-max",
                    "runs",
                    "curl CPU s/GiB",
                    "proxy CPU s/GiB",
                    "server CPU s/GiB",
                    "all CPU s/GiB",
                ],
                rows,
            ),
            "",
        ]
    return out


def best_table(group) -> str:
    rows = []
    for config in dict.fromkeys(p.config for p in group):
        best = max((p for p in group if p.config == config), key=lambda p: p.p50)
        rows.append(
            (
                config,
                threads(best.duckdb_threads),
                mib(best.p50),
                spread(best),
                best.n,
                f"{best.cpu_pct:.0f}%",
                f"{best.cpu_gib:.2f}",
            )
        )
    return table(["Configuration", "DuckDB threads", "best p50 MiB/s", "min-max", "runs", "CPU%", "CPU s/GiB"], rows)


def threads_table(group) -> str:
    configs = list(dict.fromkeys(p.config for p in group))
    by = {(p.config, p.duckdb_threads): p for p in group}
    rows = [
        [threads(t)] + [mib(by[c, t].p50) if (c, t) in by else "" for c in configs]
        for t in sorted({p.duckdb_threads for p in group})
    ]
    return table(["DuckDB threads"] + [f"{c} p50 MiB/s" for c in configs], rows)


def optional(value, fmt) -> str:
    return "" if value is None else format(value, fmt)


def compare_table(group, ceiling) -> str:
    native = {p.duckdb_threads: p for p in group if p.engine == "native"}
    rows = []
    for p in group:
        base = native.get(p.duckdb_threads)
        against = base is not None and p is not base
        rows.append(
            (
                p.config,
                threads(p.duckdb_threads),
                mib(p.p50),
                pct(100 * (p.p50 / base.p50 - 1)) if against else "",
                f"{100 * p.p50 / ceiling.p50:.0f}%" if ceiling else "",
                f"{p.cpu_gib:.2f} ({p.sys_gib:.2f})",
                f"{p.cpu_gib / base.cpu_gib:.2f}x" if against else "",
                f"{p.proxy_gib:.2f}",
                f"{p.server_gib:.2f}",
                f"{p.all_gib:.2f}",
                optional(p.reads_split, ".0f"),
                optional(p.sub_per_read, ".1f"),
                optional(p.sub_read_s, ".1f"),
            )
        )
    return table(
        [
            "Configuration",
            "DuckDB threads",
            "p50 MiB/s",
            "vs native",
            "% of ceiling",
            "CPU s/GiB (sys)",
            "CPU vs native",
            "proxy s/GiB",
            "server s/GiB",
            "all s/GiB",
            "reads split",
            "sub-reads/read",
            "sub-read s",
        ],
        rows,
    )


def headline(pts, workload: str) -> list:
    """One row per latency, client and configuration: p50 MiB/s (DuckDB CPU s/GiB) for each thread count."""
    group = [p for p in pts if p.workload == workload and p.engine != "curl-cli"]
    if not group:
        return []
    best_ceiling = ceilings(pts)
    counts = sorted({p.duckdb_threads for p in group})
    cells = {}
    for p in sorted(group, key=lambda p: (p.path != "direct", p.latency_ms, p.client, p.engine != "native")):
        cells.setdefault((p.path, p.latency_ms, p.client, p.config), {})[p.duckdb_threads] = (
            f"{mib(p.p50)} ({p.cpu_gib:.1f})"
        )
    rows = []
    for (path, latency, client, config), by_threads in cells.items():
        ceiling = best_ceiling.get((path, latency))
        rows.append(
            ["direct" if path == "direct" else f"{latency:g} ms", client, config]
            + [by_threads.get(t, "") for t in counts]
            + [mib(ceiling.p50) if ceiling else ""]
        )
    return [
        f"### Headline, {workload}: p50 MiB/s (DuckDB CPU s/GiB) per DuckDB threads; ceiling = best curl CLI p50",
        "",
        table(
            ["Latency", "Client", "Configuration"] + [f"threads={threads(t)}" for t in counts] + ["ceiling MiB/s"], rows
        ),
        "",
    ]


def summarize(rows, compare: bool) -> str:
    pts = points(rows)
    out = headline(pts, "blob") + headline(pts, "parquet") + ceiling_section(pts)
    best_ceiling = ceilings(pts)
    scenarios = dict.fromkeys(p.scenario for p in pts if p.engine != "curl-cli")
    for scenario in sorted(scenarios, key=lambda s: (s[0], s[1] != "direct", s[2], s[3])):
        workload, path, latency, client = scenario
        # Per thread count native first, then httpfs2 in the order the mode lists its configurations.
        group = sorted(
            (p for p in pts if p.scenario == scenario), key=lambda p: (p.duckdb_threads, p.engine != "native")
        )
        title = f"{workload}, {where(path, latency)}, httpfs_client_implementation={client}"
        out += [
            f"### {title}: best p50 per configuration (p50 over repeats; CPU = DuckDB process)",
            "",
            best_table(group),
            "",
            f"### {title}: p50 MiB/s per DuckDB thread count",
            "",
            threads_table(group),
            "",
        ]
        if compare:
            ceiling = best_ceiling.get((path, latency))
            note = f"ceiling = {ceiling.config} at {mib(ceiling.p50)} MiB/s" if ceiling else "no ceiling measured"
            out += [
                f"### {title}: httpfs2 vs native at the same DuckDB threads ({note})",
                "",
                compare_table(group, ceiling),
                "",
            ]
    return "\n".join(out)
