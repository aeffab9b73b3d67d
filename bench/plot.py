"""plot.png: blob p50 MiB/s vs DuckDB threads, one line per configuration and client, one panel per latency;
the ceiling (best curl CLI configuration) as a dashed p50 line over its min-max band.

python -m bench.plot results.csv [plot.png]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display on the bench machine
import matplotlib.pyplot as plt  # noqa: E402

from bench.aggregate import ceilings, points  # noqa: E402
from bench.results import load  # noqa: E402

CLIENT_STYLE = {"curl": "-", "httplib": "--"}


def write(csv_path: Path, png_path: Path):
    pts = [p for p in points(load([csv_path])) if p.workload == "blob"]
    best_ceiling = ceilings(pts)
    panels = sorted({(p.path, p.latency_ms) for p in pts}, key=lambda k: (k[0] != "direct", k[1]))
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5.5), squeeze=False, sharey=True)
    # One colour per configuration in every panel; the client is the line style.
    colours = {c: f"C{i}" for i, c in enumerate(dict.fromkeys(p.config for p in pts if p.engine != "curl-cli"))}
    legend, ceiling_line = {}, None
    for ax, (path, latency) in zip(axes[0], panels, strict=True):
        ceiling = best_ceiling.get((path, latency))
        if ceiling:
            ax.axhspan(ceiling.lo, ceiling.hi, color="grey", alpha=0.25)
            ceiling_line = ax.axhline(ceiling.p50, color="grey", linestyle=":")
            ax.text(
                0.01,
                ceiling.hi,
                f" ceiling: {ceiling.config}",
                transform=ax.get_yaxis_transform(),
                va="bottom",
                fontsize=8,
                color="dimgrey",
            )
        lines = {}
        for p in pts:
            if (p.path, p.latency_ms) == (path, latency) and p.engine != "curl-cli":
                lines.setdefault((p.config, p.client), []).append(p)
        for (config, client), line in lines.items():
            line.sort(key=lambda p: p.duckdb_threads)
            (legend[f"{config} ({client})"],) = ax.plot(
                [p.duckdb_threads for p in line],
                [p.p50 for p in line],
                CLIENT_STYLE.get(client, "-"),
                color=colours[config],
                marker="o",
            )
        ax.set_title("direct, no proxy" if path == "direct" else f"{latency:g} ms latency via toxiproxy")
        ax.set_xlabel("DuckDB threads")
        ax.set_xticks(sorted({p.duckdb_threads for line in lines.values() for p in line}))
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("p50 MiB/s (read_blob of the whole object)")
    if ceiling_line:
        legend["ceiling (best curl CLI): p50, min-max band"] = ceiling_line
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * ((len(legend) + 2) // 3), 1, 1))  # room for the legend rows
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    csv_file = Path(sys.argv[1])
    write(csv_file, Path(sys.argv[2]) if len(sys.argv) > 2 else csv_file.with_name("plot.png"))
