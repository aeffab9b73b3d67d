"""The pressure suite's tables (bench/report.py; bench/pressure_bench.py runs it): per profile and workload, each
condition and configuration: p50 seconds, the ratio to the same configuration's clean runs, the requests the client
sent, the faults the proxy played, httpfs2's throttled answers, hedges sent / won and credentials refreshed, how many
runs answered (or wrote) right, and the errors; then issue 45's targets beside what was measured.
"""

import json
import re

from bench.report_common import fmt, p50, table

NATIVE, HTTPFS2, NO_HEDGING = "native", "httpfs2", "httpfs2 no hedging"
ORDER = ("clean", "throttled", "throttled-rate", "stragglers", "rotation")  # bench/pressure_bench.py CONDITIONS
STRAGGLERS_WITHIN = 1.3  # the scan with hedging under stragglers, against its clean time
HEDGES_UNDER = 0.05  # hedges sent, a share of the requests
CLEAN_EXTRA_UNDER = 0.01  # extra requests hedging may cost where nothing stalls


def stat(row, name):
    return json.loads(row["h2_stats"]).get(name) if row.get("h2_stats") else None


def stat_p50(rows, name):
    return p50([{name: stat(r, name)} for r in rows], name)


def groups(rows) -> dict:
    """(profile, workload) -> condition -> config -> [rows]: workloads and configurations in the order first
    measured, conditions in ORDER."""
    found = {}
    rank = {c: n for n, c in enumerate(ORDER)}
    for row in sorted(rows, key=lambda r: rank.get(r["condition"], len(ORDER))):
        key = (row["profile"], row["workload"])
        found.setdefault(key, {}).setdefault(row["condition"], {}).setdefault(row["config"], []).append(row)
    return found


def seconds(rows):
    """p50 seconds of the runs that answered right (of all that ended, when none did)."""
    right = [r for r in rows if not r.get("error")]
    return p50(right or rows, "wall_s")


def ratio(rows, clean_rows):
    measured, clean = seconds(rows), seconds(clean_rows or [])
    return measured / clean if measured is not None and clean else None


def right(rows) -> str:
    return f"{sum(1 for r in rows if not r.get('error'))}/{len(rows)}"


def short(error: str) -> str:
    """An error in a table's cell: URLs by their last part, one line, its start."""
    error = re.sub(r"'?(?:https?|s3)://\S*/([^/'\s]+)'?", r"\1", error)
    return " ".join(error.split())[:110]


def errors(rows) -> str:
    return "; ".join(dict.fromkeys(short(r["error"]) for r in rows if r.get("error")))


def row_cells(profile, workload, condition, config, measured, clean) -> list:
    sent, won = stat_p50(measured, "hedges_sent"), stat_p50(measured, "hedges_won")
    return [
        workload,
        condition,
        config,
        fmt(seconds(measured), ".2f"),
        " ".join(f"{r['wall_s']:.2f}" if r.get("wall_s") != "" else "-" for r in measured),
        "" if condition == "clean" else fmt(ratio(measured, clean), ".2f", "x"),
        fmt(p50(measured, "proxy_requests"), ".0f"),
        fmt(p50(measured, "proxy_faults"), ".0f"),
        fmt(stat_p50(measured, "throttled_answers"), ".0f"),
        "" if sent is None else f"{sent:.0f} / {won:.0f}",
        fmt(stat_p50(measured, "credentials_refreshed"), ".0f"),
        right(measured),
        errors(measured),
    ]


def verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


def targets(key, by_condition) -> list:
    """Issue 45's targets for one (profile, workload), each a line."""
    lines, workload = [], key[1]
    clean = by_condition.get("clean", {})
    throttled = by_condition.get("throttled", {})
    if throttled:
        every = [r for rows in throttled.values() for r in rows]
        ratios = {c: ratio(throttled[c], clean.get(c)) for c in (NATIVE, HTTPFS2) if c in throttled}
        line = f"- {workload}, throttled 20%: every answer right {verdict(not any(r.get('error') for r in every))}"
        line += f" ({right(every)}), no hang {verdict(not any('hang' in (r.get('error') or '') for r in every))}"
        if None not in ratios.values() and len(ratios) == 2:
            n, h = ratios[NATIVE], ratios[HTTPFS2]
            line += f"; httpfs2 {h:.2f}x its clean time, native {n:.2f}x: no slower relative {verdict(h <= n)}"
        lines.append(line)
    rotation = by_condition.get("rotation", {})
    if HTTPFS2 in rotation:
        h = rotation[HTTPFS2]
        native = rotation.get(NATIVE, [])
        line = f"- {workload}, rotation: httpfs2 completes right {verdict(not errors(h))} ({right(h)}, credentials"
        line += f" refreshed {fmt(stat_p50(h, 'credentials_refreshed'), '.0f')})"
        if native:
            line += f"; native {right(native)} right" + (f" ({errors(native)})" if errors(native) else "")
        lines.append(line)
    stalled = by_condition.get("stragglers", {})
    if HTTPFS2 in stalled:
        h = stalled[HTTPFS2]
        r, sent, requests = ratio(h, clean.get(HTTPFS2)), stat_p50(h, "hedges_sent"), p50(h, "proxy_requests")
        share = sent / requests if sent is not None and requests else None
        line = f"- {workload}, stragglers 2% x 10 s: httpfs2 {fmt(r, '.2f', 'x') or '?'} its clean time"
        line += f" (<= {STRAGGLERS_WITHIN}x: {verdict(r is not None and r <= STRAGGLERS_WITHIN)})"
        line += f", hedges {fmt(sent, '.0f')} of {fmt(requests, '.0f')} requests = {fmt(share and share * 100, '.1f')}%"
        line += f" (< {HEDGES_UNDER:.0%}: {verdict(share is not None and share < HEDGES_UNDER)})"
        for other in (NATIVE, NO_HEDGING):
            if other in stalled:
                line += f"; {other} {fmt(ratio(stalled[other], clean.get(other)), '.2f', 'x')}"
        lines.append(line)
    if HTTPFS2 in clean and NO_HEDGING in clean:
        h, off = clean[HTTPFS2], clean[NO_HEDGING]
        time_ratio = ratio(h, off)
        extra = p50(h, "proxy_requests") / p50(off, "proxy_requests") - 1 if p50(off, "proxy_requests") else None
        line = f"- {workload}, clean: hedging on / off {fmt(time_ratio, '.2f', 'x')} the time, requests "
        line += f"{fmt(extra and extra * 100, '+.1f')}% (< {CLEAN_EXTRA_UNDER:.0%} extra: "
        line += f"{verdict(extra is not None and extra < CLEAN_EXTRA_UNDER)}), hedges {stat_p50(h, 'hedges_sent')}"
        lines.append(line)
    return lines


def summarize(rows) -> list:
    headers = ["workload", "condition", "config", "p50 s", "runs s", "vs clean", "requests", "faults"]
    headers += ["throttled", "hedges sent / won", "refreshed", "right", "errors"]
    out = []
    for key, by_condition in groups(rows).items():
        cells = []
        for condition, by_config in by_condition.items():
            for config, measured in by_config.items():
                clean = by_condition.get("clean", {}).get(config)
                cells.append(row_cells(*key, condition, config, measured, clean))
        some = next(iter(next(iter(by_condition.values())).values()))[0]
        out += [
            f"\n{key[1]} under pressure at {key[0]} (DuckDB threads {some['duckdb_threads']:g}, curl, p50 of each "
            "config's runs, fresh processes interleaved; requests: sent by the client to the misbehaving proxy; "
            "faults: what it played; throttled, hedges, refreshed: httpfs2_stats())",
            "",
            table(headers, cells),
            "",
        ]
        out += targets(key, by_condition)
    return out
