"""The writes suite's table (bench/report.py): p50 per (profile, workload) of each configuration, the ratio
native / httpfs2 (a miss under 1.0x in bold), MB/s of the bytes httpfs2 uploaded, CPU, peak RSS, the parts and
upload memory, the time in closes, and the rig's CPU with the floor it sets.

The rig (versitygw and toxiproxy) runs on the cores the write runs on. A COPY that keeps every core busy when it
writes to a local file cannot write to the rig faster than its own CPU and the rig's CPU on those cores allow:
floor = max(local s, (the COPY's CPU s + the rig's CPU s during the httpfs2 write) / cores), the COPY's CPU being
the lower p50 of its local and httpfs2 runs. httpfs2 / floor is what is left to the uploader on this machine;
httpfs2 / local also counts the rig's share."""

import json
import statistics

from bench.report_common import rig_cpu, table

CONFIGS = ("native", "httpfs2", "local")


def summarize(rows: list, cpus: int | None = None) -> str:
    def p50(key, config, column):
        values = [r[column] for r in rows if (r["profile"], r["workload"], r["config"]) == (*key, config)]
        return statistics.median(values) if values else float("nan")

    body = []
    for key in dict.fromkeys((r["profile"], r["workload"]) for r in rows):
        n, h, loc = (p50(key, c, "wall_s") for c in CONFIGS)
        stats = [
            json.loads(r["h2_stats"]) for r in rows if (r["profile"], r["workload"], r["config"]) == (*key, "httpfs2")
        ]
        parts = stats[-1].get("upload_parts", 0) if stats else 0
        megabytes = (stats[-1].get("upload_bytes", 0) if stats else 0) / 1e6
        peak = max((s.get("upload_memory_peak", 0) for s in stats), default=0) / (1 << 20)
        closes = statistics.median(s.get("upload_close_seconds", 0) for s in stats) if stats else 0
        rigs = [rig_cpu(r) for r in rows if (r["profile"], r["workload"], r["config"]) == (*key, "httpfs2")]
        rigs = [seconds for seconds in rigs if seconds is not None]
        rig = statistics.median(rigs) if rigs else float("nan")
        # The COPY's own work: the cheaper of its runs (1.5.5's CSV writer at threads 4 spends 2.5 or 5.5 CPU s on the
        # same COPY from one run to the next, local or not).
        work = min(p50(key, "local", "client_cpu_s"), p50(key, "httpfs2", "client_cpu_s"))
        floor = max(loc, (work + rig) / cpus) if cpus and rig == rig else float("nan")
        body.append(
            [
                key[1],
                key[0],
                f"{n:.2f}",
                f"{h:.2f}",
                f"{loc:.2f}",
                f"{n / h:.2f}x" if n >= h else f"**{n / h:.2f}x**",
                f"{megabytes / n:.0f} / {megabytes / h:.0f}",
                f"{p50(key, 'native', 'client_cpu_s'):.2f} / {p50(key, 'httpfs2', 'client_cpu_s'):.2f}",
                f"{p50(key, 'native', 'vm_hwm_mib'):.0f} / {p50(key, 'httpfs2', 'vm_hwm_mib'):.0f}",
                parts,
                f"{peak:.0f}",
                f"{closes:.2f}",
                f"{rig:.2f}" if rig == rig else "-",
                f"{floor:.2f}" if floor == floor else "-",
                f"{h / loc:.2f} / {h / floor:.2f}" if floor == floor else f"{h / loc:.2f} / -",
            ]
        )
    headers = ["workload", "profile", "native s", "httpfs2 s", "local s", "ratio", "MB/s n / h", "CPU s n / h"]
    headers += ["VmHWM MiB n / h", "parts", "upload memory peak MiB", "close s", "rig CPU s h", "floor s"]
    headers += ["httpfs2 / local / floor"]
    threads = f"{rows[0]['duckdb_threads']:g}" if rows else "?"
    header = (
        f"DuckDB threads {threads}, httpfs_client_implementation curl, p50 of each config's runs (fresh processes, "
        "interleaved); profiles: lan 0 ms, region 25 ms + 90 MiB/s, far 80 ms + 40 MiB/s per connection, the cap on "
        "both directions; ratio = native s / httpfs2 s; rig CPU = versitygw + toxiproxy during the httpfs2 writes; "
        f"floor = max(local s, (min(CPU s local, httpfs2) + rig CPU s) / {cpus or '?'} cores)"
    )
    return header + "\n\n" + table(headers, body)
