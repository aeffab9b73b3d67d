"""The DuckDB versions table (bench/report.py; issue 43): per workload, profile and threads, each configuration's p50
seconds, CPU seconds and requests side by side, and httpfs2 in DuckDB 2.0.1 against 2.0.1 alone with its defaults and
tuned. A row under 1.0x is a miss, printed as one.
"""

from bench.report_common import fmt, p50, table
from bench.report_workloads import config_groups

ALONE, TUNED, WITH = "2.0.1", "2.0.1 tuned", "2.0.1 httpfs2"
# httpfs2 with DuckDB 2.0's async IO tuned as in TUNED: what a user who tunes 2.0 gets with httpfs2 beside it.
WITH_TUNED = "2.0.1 httpfs2 tuned"


def _ratio(by_config: dict, base: str, config: str) -> str:
    """base's p50 seconds / config's."""
    base_s, config_s = p50(by_config.get(base, []), "wall_s"), p50(by_config.get(config, []), "wall_s")
    if not base_s or not config_s:
        return ""
    ratio = base_s / config_s
    return f"{ratio:.2f}x" + (" MISS" if ratio < 1.0 else "")


def _cell(runs: list) -> str:
    seconds, cpu, requests = (p50(runs, c) for c in ("wall_s", "client_cpu_s", "requests"))
    return "" if seconds is None else f"{seconds:.2f} s, {fmt(cpu, '.2f')} cpu, {fmt(requests, '.0f')} req"


def versions_rows(rows) -> tuple:
    configs = list(dict.fromkeys(r["config"] for r in rows))
    headers = ["Workload", "Profile", "Threads", "Client", *configs]
    headers += [f"{WITH} vs {ALONE}", f"vs {TUNED}", "vs 1.5.5 httpfs2"]
    tuned_too = WITH_TUNED in configs
    if tuned_too:
        headers.append(f"{WITH_TUNED} vs {TUNED}")
    body = []
    for (workload, profile, file_cache, client, threads), by_config in config_groups(rows).items():
        where = profile + (" +file cache" if file_cache == "True" else "")
        line = [workload, where, f"{threads:g}", client] + [_cell(by_config.get(c, [])) for c in configs]
        line += [_ratio(by_config, ALONE, WITH), _ratio(by_config, TUNED, WITH), _ratio(by_config, "httpfs2", WITH)]
        if tuned_too:
            line.append(_ratio(by_config, TUNED, WITH_TUNED))
        body.append(line)
    return headers, body


def has_versions(rows) -> bool:
    return any(r.get("duckdb_version") not in ("", None, "1.5.5") for r in rows)


def summarize(rows) -> list:
    headers, body = versions_rows(rows)
    return [
        "### DuckDB versions: per configuration p50 seconds, CPU seconds (the DuckDB process) and requests "
        "(versitygw's access log); 1.5.5's are named as in the other tables ('native', 'httpfs2'); a ratio is the "
        "seconds of the configuration it names / the seconds of 2.0.1 httpfs2 (under 1.0x: MISS)",
        "",
        table(headers, body),
        "",
    ]
