"""The one report writer: Markdown tables (they paste into docs) from results of any suite.

python -m bench report RESULTS... [--compare]   (old spelling: bench/summarize.py RESULTS... [--compare])
RESULTS are results.csv files or the folders holding them; the files of the harnesses before the one runner
(writes.csv, azure's results.jsonl) are read too. Each kind of row gets its tables, in this order:
  workload  bench/report_workloads.py  native vs each httpfs2 configuration per workload and profile, with targets;
            bench/report_versions.py   where DuckDB 2.0.1 ran too: every configuration side by side, 2.0.1 + httpfs2
                                       against 2.0.1 alone (defaults and tuned)
  blob      bench/report_blob.py       per latency and client, p50 MiB/s per configuration and threads, the ceiling;
                                       --compare adds httpfs2 vs native, % of ceiling and where the CPU goes
  write     bench/report_writes.py     per profile and workload, native vs httpfs2 vs local
  azure     bench/report_azure.py      per profile, the seed's steps for each path, beside the seed's figures
  table     bench/report_tables.py     per table scan, each configuration: seconds, requests, read-ahead; Delta's log
  peer      bench/report_peers.py      DuckDB beside the AWS CRT client and obstore: MiB/s, CPU, connections
  pressure  bench/report_pressure.py   throttling, stragglers, credentials rotated: each beside its clean runs, with
                                       issue 45's targets
When RESULTS hold a run of the demo suite (scripts/demo.sh), bench/report_demo.py prints a short table instead (native,
httpfs2 and local seconds and the speed-up per workload, the writes given beside it too) and writes these tables to
report.md and a plot to demo.png in that run's folder, naming both. What the modules share is bench/report_common.py.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/summarize.py runs as a script too

from bench import (  # noqa: E402
    report_azure,
    report_blob,
    report_demo,
    report_peers,
    report_pressure,
    report_tables,
    report_versions,
    report_workloads,
    report_writes,
)
from bench.report_common import build_lines  # noqa: E402
from bench.results import files, load  # noqa: E402


def metas(paths) -> list:
    found = [p.with_name("meta.json") for p in files(paths)]
    return [json.loads(m.read_text()) for m in found if m.exists()]


def full_report(rows, all_metas, compare: bool) -> str:
    """Every table of the rows, by kind in the order of this module's docstring."""
    by_kind = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    out = []
    if "workload" in by_kind:
        notes = list(dict.fromkeys(n for m in all_metas for n in m.get("notes", [])))
        out += build_lines(all_metas) + report_workloads.summarize(by_kind["workload"], notes)
        if report_versions.has_versions(by_kind["workload"]):
            out += report_versions.summarize(by_kind["workload"])
    if "blob" in by_kind:
        out.append(report_blob.summarize(by_kind["blob"], compare))
    if "write" in by_kind:
        cpus = next((m["cpus"] for m in all_metas if m.get("cpus")), None)
        out.append(report_writes.summarize(by_kind["write"], cpus))
    if "table" in by_kind:
        out += build_lines(all_metas) + report_tables.summarize(by_kind["table"])
    if "peer" in by_kind:
        out += build_lines(all_metas) + report_peers.summarize(by_kind["peer"])
    if "pressure" in by_kind:
        out += build_lines(all_metas) + report_pressure.summarize(by_kind["pressure"])
    if "azure" in by_kind:
        out.append(report_azure.summarize(by_kind["azure"], all_metas[0] if all_metas else {}))
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench report", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.csv files or their folders")
    parser.add_argument("--compare", action="store_true", help="blob sweeps: httpfs2 vs native in detail")
    args = parser.parse_args(argv)
    rows, all_metas = load(args.results), metas(args.results)
    report = full_report(rows, all_metas, args.compare)
    folder = report_demo.folder(args.results)
    if folder is None:
        print(report)
    else:  # the demo's: a short table, the full report and a plot in its results folder
        print(report_demo.summarize(rows, all_metas, report, folder))


if __name__ == "__main__":
    main()
