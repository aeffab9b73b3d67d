"""The demo's report (bench/report.py, when the results hold a run of the suite `demo`, as scripts/demo.sh makes): a
short table read at a glance, one row per workload (and per write given beside the demo): native, httpfs2 and local
p50 seconds and the speed-up native s / httpfs2 s, a row under 1.0x marked a miss. The full report (every column,
TPC-H per query, the writes' table) goes to report.md and a bar chart of the same rows to demo.png, both in the demo
run's folder beside its results.csv; the printed text names them.
"""

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.report_common import build_lines, fmt, p50, table
from bench.report_tables import profile_text
from bench.report_workloads import config_groups
from bench.results import files, load

SUITE = "demo"
REPORT = "report.md"
PLOT = "demo.png"
CONFIGS = ("native", "httpfs2", "local")


def folder(paths) -> Path | None:
    """The folder of the first results file named that holds a demo run; None when none does."""
    for path in files(paths):
        if any(row.get("suite") == SUITE for row in load([path])):
            return path.parent
    return None


@dataclass
class Row:
    """One workload (or write) at one profile and DuckDB threads: p50 seconds of each configuration."""

    workload: str
    profile: str
    threads: float
    runs: int  # native's runs
    native: float | None
    httpfs2: float | None
    local: float | None

    @property
    def speedup(self) -> float | None:
        return self.native / self.httpfs2 if self.native and self.httpfs2 else None


def rows_of(rows) -> list:
    """The demo's workload rows and any write rows beside them, one Row per httpfs2 configuration of each point."""
    measured = [r for r in rows if (r["kind"], r.get("suite")) == ("workload", SUITE) or r["kind"] == "write"]
    out = []
    for (workload, profile, file_cache, _, threads), by_config in config_groups(measured).items():
        write = by_config[next(iter(by_config))][0]["kind"] == "write"
        native, local = by_config.get("native", []), by_config.get("local", [])
        for config in [c for c in by_config if c not in ("native", "local")] or ["httpfs2"]:
            name = f"write {workload}" if write else workload
            out.append(
                Row(
                    name + ("" if config == "httpfs2" else f" [{config}]"),
                    profile + (" +file cache" if file_cache == "True" else ""),
                    threads,
                    len(native),
                    p50(native, "wall_s"),
                    p50(by_config.get(config, []), "wall_s"),
                    p50(local, "wall_s"),
                )
            )
    return out


def speedup_cell(row: Row) -> str:
    cell = fmt(row.speedup, ".2f", "x")
    return cell + " (miss: under 1.0x)" if row.speedup is not None and row.speedup < 1.0 else cell


def label(row: Row, threads: float) -> str:
    """The row's workload, with its DuckDB threads when they are not the demo's."""
    return row.workload + ("" if row.threads == threads else f" (threads {row.threads:g})")


def short_table(short: list, threads: float) -> str:
    """workload, profile, the three p50s and the speed-up."""
    body = [
        [
            label(r, threads),
            r.profile,
            fmt(r.native, ".2f"),
            fmt(r.httpfs2, ".2f"),
            fmt(r.local, ".2f"),
            speedup_cell(r),
        ]
        for r in short
    ]
    return table(["workload", "profile", "native s", "httpfs2 s", "local s", "speed-up httpfs2 vs native"], body)


def runs_text(short: list) -> str:
    """`p50 of 3 runs` with the rows that had another count: `p50 of 3 runs (tpch-22: 1)`."""
    counts = Counter(r.runs for r in short)
    most = counts.most_common(1)[0][0] if counts else 0
    others = ", ".join(f"{r.workload}: {r.runs}" for r in short if r.runs != most)
    return f"p50 of {most} runs" + (f" ({others})" if others else "")


def plot(short: list, threads: float, title: str, png: Path):
    """Left: p50 seconds of each configuration per row (log scale); right: the speed-up, misses in red."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on the bench machine
    import matplotlib.pyplot as plt

    fig, (seconds, speedups) = plt.subplots(
        1, 2, figsize=(13, 1.6 + 0.55 * len(short)), sharey=True, gridspec_kw={"width_ratios": (3, 2)}
    )
    at = range(len(short))
    height = 0.27
    for n, config in enumerate(CONFIGS):
        bars = [(y + (n - 1) * height, getattr(r, config)) for y, r in zip(at, short, strict=True)]
        bars = [(y, s) for y, s in bars if s]
        seconds.barh([y for y, _ in bars], [s for _, s in bars], height, color=f"C{n}", label=config)
        for y, s in bars:
            seconds.text(s, y, f" {s:.2f}", va="center", fontsize=7)
    seconds.set_xscale("log")
    measured = [s for r in short for s in (r.native, r.httpfs2, r.local) if s]
    seconds.set_xlim(right=max(measured, default=1.0) * 4)  # room for the labels after the bars
    seconds.set_xlabel("p50 seconds (log scale)")
    seconds.set_yticks(list(at), [label(r, threads) for r in short])
    seconds.invert_yaxis()  # the table's order, top down
    seconds.legend(loc="lower right", fontsize=8)
    seconds.grid(axis="x", alpha=0.3)
    values = [r.speedup or 0 for r in short]
    speedups.barh(list(at), values, 0.5, color=["tab:red" if v < 1.0 else "dimgrey" for v in values])
    speedups.axvline(1.0, color="black", linestyle="--", linewidth=1)
    for y, v in zip(at, values, strict=True):
        speedups.text(v, y, f" {v:.2f}x" + (" miss" if v < 1.0 else ""), va="center", fontsize=8)
    speedups.set_xlim(0, max(values + [1.0]) * 1.25)
    speedups.set_xlabel("speed-up: native s / httpfs2 s (dashed: 1.0x)")
    speedups.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def summarize(rows, all_metas, full_report: str, out: Path) -> str:
    """The short table and where the rest is; writes report.md (full_report) and demo.png into `out`."""
    (out / REPORT).write_text(full_report + "\n")
    short = rows_of(rows)
    demo = [r for r in rows if r.get("suite") == SUITE]
    first = demo[0] if demo else {}
    threads = first.get("duckdb_threads", 1)
    where = profile_text(first) if first else "?"
    setting = f"DuckDB threads {threads:g}, httpfs_client_implementation {first.get('client', '?')}"
    title = f"httpfs2 demo: {where} per connection, {setting}, {runs_text(short)}"
    png = out / PLOT
    plot(short, threads, title, png)
    misses = [r.workload for r in short if r.speedup is not None and r.speedup < 1.0]
    return "\n".join(
        [
            *build_lines(all_metas),
            f"### Demo: native httpfs vs httpfs2 at {where} per connection, {setting}, {runs_text(short)}",
            "",
            "speed-up = native s / httpfs2 s; local s = the same query on the local files, no network (the floor)",
            "",
            short_table(short, threads),
            "",
            f"Under 1.0x: {', '.join(misses) if misses else 'none'}",
            f"Every column (CPU, requests, bytes, targets, rig CPU, TPC-H per query, the writes' parts and closes): "
            f"{out / REPORT}",
            f"Plot of this table: {png}",
        ]
    )
