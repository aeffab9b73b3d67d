"""What the report writers share (bench/report.py and every bench/report_*.py): the Markdown table, the p50 of a column
over runs and a number's cell, the rig's CPU during a row's run, and the lines naming the builds measured. It imports
no other report module, so each report module imports it rather than bench/report.py, which imports them all.
"""

from statistics import median


def table(headers, rows) -> str:
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def rig_cpu(row):
    """versitygw's and toxiproxy's CPU seconds during a row's run (on the cores the client runs on); None when the
    row did not measure them."""
    parts = [row.get("server_cpu_s"), row.get("proxy_cpu_s")]
    return sum(parts) if all(isinstance(p, float) for p in parts) else None


def p50(rows, column):
    """The median of a column over the rows that have it; None when none has."""
    values = [r[column] for r in rows if r.get(column) not in ("", None)]
    return median(values) if values else None


def fmt(value, spec, suffix="") -> str:
    """A number's cell: empty for None."""
    return "" if value is None else format(value, spec) + suffix


def build_lines(all_metas) -> list:
    """Which httpfs2 build each results file measured."""
    lines = []
    for m in all_metas:
        sha = m.get("extension_sha256")
        lines.append(
            f"httpfs2 build: commit {m.get('commit', '?')[:10]}"
            f"{' + uncommitted src/ changes' if m.get('src_modified') else ''}, "
            f"extension sha256 {sha[:12] if sha else 'none (not built)'}; started {m.get('started')}"
        )
    return lines + [""] if lines else []
