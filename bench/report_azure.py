"""The azure suite's tables (bench/report.py): per profile, p50 seconds (client CPU seconds) of each step and size
for every path beside the seed's figures; then the bytes through the proxy, client CPU per GiB of them and the
server's CPU."""

import statistics

from bench.azure_matrix import SEED, STEP_TITLES, STEPS
from bench.report_common import table

TRAFFIC_STEPS = ("write_single", "write_part", "cold", "warm", "warm_aged", "selective", "glob")


def _p50(values):
    return statistics.median(values) if values else None


def points(rows: list) -> dict:
    """(profile, step, rows, path) -> the p50 of each measure over its repeats."""
    groups = {}
    for row in rows:
        groups.setdefault((row["profile"], row["step"], int(row["rows"]), row["config"]), []).append(row)
    summary = {}
    for key, group in groups.items():
        cpu, nbytes = _p50([r["client_cpu_s"] for r in group]), _p50([r["fetched_bytes"] for r in group])
        summary[key] = {
            "seconds": _p50([r["wall_s"] for r in group]),
            "cpu_s": cpu,
            "bytes": nbytes,
            "cpu_per_gib": cpu / (nbytes / 2**30) if nbytes and nbytes > (1 << 20) else None,
            "server_cpu_s": _p50([r["server_cpu_s"] for r in group]),
        }
    return summary


def _seconds(value):
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _time_cell(point: dict) -> str:
    return f"{_seconds(point['seconds'])} ({_seconds(point['cpu_s'])})"


def _traffic_cell(point: dict) -> str:
    per_gib = f"{point['cpu_per_gib']:.2f}" if point["cpu_per_gib"] is not None else "-"
    return f"{point['bytes'] / 2**20:.1f} MiB, {per_gib}, srv {point['server_cpu_s']:.2f}"


def _table_rows(summary: dict, profile: str, steps, sizes, paths, cell, seed: bool):
    """A row for every step and size that some path measured; `cell` formats a measured point."""
    for step in steps:
        for size in sizes:
            measured = [summary.get((profile, step, size, path)) for path in paths]
            if any(measured):
                row = [STEP_TITLES[step], f"{size:,}"] + [cell(p) if p else "-" for p in measured]
                if seed:
                    figures = SEED.get(step, {}).get(size)
                    row.append(f"{figures[0]} / {figures[1]}" if figures else "")
                yield row


def footer(meta: dict, rows: list) -> str:
    """How the results were made; meta.json of the one runner, or of the azure harness before it."""
    repeats = meta.get("repeats") or len({r.get("repeat") for r in rows}) or "?"
    sha = meta.get("httpfs2_sha256") or meta.get("extension_sha256") or "none"
    return (
        f"Command: `{meta.get('command', '?')}`; {meta.get('when') or meta.get('started', '?')}; repeats {repeats}; "
        f"DuckDB threads 1; duckdb {meta.get('duckdb', '?')}; httpfs2 {sha[:12]}; Azurite {meta.get('azurite', '?')}."
    )


def summarize(rows: list, meta: dict) -> str:
    summary = points(rows)
    paths = list(dict.fromkeys(r["config"] for r in rows))
    sizes = sorted({int(r["rows"]) for r in rows})
    out = []
    for profile in dict.fromkeys(r["profile"] for r in rows):
        body = list(_table_rows(summary, profile, STEPS, sizes, paths, _time_cell, seed=True))
        out += [f"### Profile `{profile}`: p50 seconds (client CPU seconds)", ""]
        out += [table(["step", "rows", *paths, "seed s3proxy / az://"], body), ""]
        body = list(_table_rows(summary, profile, TRAFFIC_STEPS, sizes, paths, _traffic_cell, seed=False))
        out += [
            f"### Profile `{profile}`: MiB through the proxy, client CPU s per GiB of them, server CPU s "
            f"(Azurite or versitygw) during the step",
            "",
            table(["step", "rows", *paths], body),
            "",
        ]
    return "\n".join(out + [footer(meta, rows)]) + "\n"
