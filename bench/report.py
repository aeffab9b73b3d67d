"""The one report writer: Markdown tables (they paste into docs) from results of any suite.

python -m bench report RESULTS... [--compare]   (old spelling: bench/summarize.py RESULTS... [--compare])
RESULTS are results.csv files or the folders holding them; the files of the harnesses before the one runner
(writes.csv, azure's results.jsonl) are read too. Each kind of row gets its tables, in this order:
  workload  bench/report_workloads.py  native vs each httpfs2 configuration per workload and profile, with targets
  blob      bench/report_blob.py       per latency and client, p50 MiB/s per configuration and threads, the ceiling;
                                       --compare adds httpfs2 vs native, % of ceiling and where the CPU goes
  write     bench/report_writes.py     per profile and workload, native vs httpfs2 vs local
  azure     bench/report_azure.py      per profile, the seed's steps for each path, beside the seed's figures
  table     bench/report_tables.py     per table scan, each configuration: seconds, requests, read-ahead; Delta's log
  peer      bench/report_peers.py      DuckDB beside the AWS CRT client and obstore: MiB/s, CPU, connections
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/summarize.py runs as a script too

from bench.results import files, load  # noqa: E402


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


def metas(paths) -> list:
    found = [p.with_name("meta.json") for p in files(paths)]
    return [json.loads(m.read_text()) for m in found if m.exists()]


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


def main(argv=None):
    from bench import report_azure, report_blob, report_peers, report_tables, report_workloads, report_writes

    parser = argparse.ArgumentParser(prog="python -m bench report", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.csv files or their folders")
    parser.add_argument("--compare", action="store_true", help="blob sweeps: httpfs2 vs native in detail")
    args = parser.parse_args(argv)
    rows, all_metas = load(args.results), metas(args.results)
    by_kind = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    out = []
    if "workload" in by_kind:
        notes = list(dict.fromkeys(n for m in all_metas for n in m.get("notes", [])))
        out += build_lines(all_metas) + report_workloads.summarize(by_kind["workload"], notes)
    if "blob" in by_kind:
        out.append(report_blob.summarize(by_kind["blob"], args.compare))
    if "write" in by_kind:
        cpus = next((m["cpus"] for m in all_metas if m.get("cpus")), None)
        out.append(report_writes.summarize(by_kind["write"], cpus))
    if "table" in by_kind:
        out += build_lines(all_metas) + report_tables.summarize(by_kind["table"])
    if "peer" in by_kind:
        out += build_lines(all_metas) + report_peers.summarize(by_kind["peer"])
    if "azure" in by_kind:
        out.append(report_azure.summarize(by_kind["azure"], all_metas[0] if all_metas else {}))
    print("\n".join(out))


if __name__ == "__main__":
    main()
